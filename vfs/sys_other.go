//go:build !linux

package vfs

import (
	"os"
	"syscall"
)

// fallocate is not available here: the caller writes zeroes instead.
func fallocate(f *os.File, off, size int64) error { return syscall.EOPNOTSUPP }

// fdatasync falls back to fsync where fdatasync(2) is not available.
func fdatasync(f *os.File) error { return f.Sync() }

// O_DSYNC is the open flag of wal_sync_method = open_datasync (O_SYNC
// where the platform has no O_DSYNC).
const O_DSYNC = os.O_SYNC

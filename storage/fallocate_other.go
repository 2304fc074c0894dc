//go:build !linux

package storage

import (
	"os"
	"syscall"
)

// fallocate is not available here: the caller writes zeroes instead.
func fallocate(f *os.File, off, size int64) error { return syscall.EOPNOTSUPP }

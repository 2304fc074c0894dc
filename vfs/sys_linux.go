package vfs

import (
	"os"
	"syscall"
)

// fallocate allocates [off, off+size) of f with fallocate(2) mode 0, which
// also extends the file size (posix_fallocate without glibc's emulation:
// an unsupporting filesystem returns EOPNOTSUPP and the caller writes
// zeroes instead).
func fallocate(f *os.File, off, size int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = syscall.Fallocate(int(fd), 0, off, size)
			if ferr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	return ferr
}

// fdatasync is fdatasync(2).
func fdatasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if serr != syscall.EINTR {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}

// O_DSYNC is the open flag of wal_sync_method = open_datasync.
const O_DSYNC = syscall.O_DSYNC

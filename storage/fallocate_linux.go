package storage

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

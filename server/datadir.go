package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// dataDirLock is the postmaster.pid-style lock on a data directory. It
// holds an flock on the file for the server's lifetime, so a second
// server on the same directory (even in the same process) is refused.
// The instance takes it first and releases it last.
type dataDirLock struct {
	path string
	f    *os.File
}

// ErrDataDirLocked is returned (wrapped) by New when another server holds
// the data directory.
var ErrDataDirLocked = errors.New("server: data directory is in use")

// lockDataDir creates dir if needed (mode 0700) and takes its lock file,
// recording the pid, directory, start time, port and listen addresses as
// PostgreSQL's postmaster.pid does.
func lockDataDir(dir string, port int, listen string) (*dataDirLock, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("could not create data directory \"%s\": %w", abs, err)
	}
	path := filepath.Join(abs, "postmaster.pid")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("could not create lock file \"%s\": %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		old, _ := os.ReadFile(path)
		f.Close()
		pid := strings.SplitN(string(old), "\n", 2)[0]
		return nil, fmt.Errorf("%w: lock file \"%s\" already exists; is another lockd (PID %s) running in data directory \"%s\"?",
			ErrDataDirLocked, path, strings.TrimSpace(pid), abs)
	}
	content := strings.Join([]string{
		strconv.Itoa(os.Getpid()), abs, strconv.FormatInt(time.Now().Unix(), 10),
		strconv.Itoa(port), listen, "",
	}, "\n")
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(content), 0)
		if err != nil {
			f.Close()
			return nil, err
		}
	}
	return &dataDirLock{path: path, f: f}, nil
}

// release removes the lock file and drops the lock. It may be called on a
// nil lock and more than once.
func (l *dataDirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
	l.f = nil
}

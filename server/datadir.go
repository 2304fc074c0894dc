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

// DataDirLock is the postmaster.pid-style lock on a data directory. It
// holds an flock on the file for the server's lifetime, so a second
// server on the same directory (even in the same process) is refused.
type DataDirLock struct {
	path string
	f    *os.File
}

// ErrDataDirLocked is returned when another server holds the directory.
var ErrDataDirLocked = errors.New("server: data directory is in use")

// LockDataDir creates dir if needed (mode 0700) and takes its lock file,
// recording the pid, directory, start time, port and listen addresses as
// PostgreSQL's postmaster.pid does.
func LockDataDir(dir string, port int, listen string) (*DataDirLock, error) {
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
	return &DataDirLock{path: path, f: f}, nil
}

// Release removes the lock file and drops the lock.
func (l *DataDirLock) Release() {
	if l == nil || l.f == nil {
		return
	}
	os.Remove(l.path)
	l.f.Close()
	l.f = nil
}

// ListenAddrs expands listen_addresses and port into host:port strings.
// "localhost" means the loopback addresses, "*" every interface.
func ListenAddrs(listen string, port int) []string {
	var out []string
	p := strconv.Itoa(port)
	for _, h := range strings.Split(listen, ",") {
		h = strings.TrimSpace(h)
		switch h {
		case "":
			continue
		case "*":
			out = append(out, ":"+p)
		case "localhost":
			out = append(out, "127.0.0.1:"+p)
		default:
			if strings.Contains(h, ":") {
				out = append(out, "["+h+"]:"+p)
			} else {
				out = append(out, h+":"+p)
			}
		}
	}
	return out
}

// Package vfs is the file-system layer under everything lockd keeps on
// disk: the write-ahead log, the control file, relation and index files,
// the commit log and multixact segments, the catalog and sequence files.
//
// Default is the operating system's file system. FaultFS (fault.go) wraps
// it for crash tests: it remembers what was written but not yet synced and,
// at a simulated crash, drops those writes or tears them at 512-byte
// boundaries, which a kill -9 of the server cannot do (the kernel's page
// cache survives a killed process).
//
// # What it must not do
//
// vfs imports only the standard library. It knows nothing of pages,
// records or relations: files are byte arrays.
//
// # Concurrency contract
//
// An FS and its Files are safe for concurrent use, as os.File is: ReadAt
// and WriteAt at distinct offsets may run in parallel.
package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// File is an open file. ReadAt/WriteAt follow io.ReaderAt/io.WriterAt;
// Read/Write use the file offset.
type File interface {
	io.Reader
	io.Writer
	io.ReaderAt
	io.WriterAt
	io.Closer
	Name() string
	Stat() (os.FileInfo, error)
	Truncate(size int64) error
	// Sync is fsync(2): data and metadata reach stable storage.
	Sync() error
	// Datasync is fdatasync(2): data, and the metadata needed to read it.
	Datasync() error
	// Allocate reserves [off, off+size) as zeroes (fallocate(2) mode 0).
	// It returns an error wrapping syscall.EOPNOTSUPP where the file system
	// cannot.
	Allocate(off, size int64) error
}

// FS is a file system. Names are operating-system paths.
type FS interface {
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Remove(name string) error
	Rename(oldname, newname string) error
	// Link makes newname a second name of oldname, failing with an error
	// satisfying errors.Is(err, fs.ErrExist) if newname exists: a rename
	// that never replaces a file (with Remove of oldname afterwards).
	Link(oldname, newname string) error
	MkdirAll(name string, perm os.FileMode) error
	ReadDir(name string) ([]os.DirEntry, error)
	Stat(name string) (os.FileInfo, error)
	// SyncDir fsyncs a directory, making the names created, renamed or
	// removed in it durable.
	SyncDir(name string) error
}

// Default is the operating system's file system.
var Default FS = osFS{}

// Open opens name read-only.
func Open(fsys FS, name string) (File, error) { return fsys.OpenFile(name, os.O_RDONLY, 0) }

// ReadFile reads the whole file name.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := Open(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	n, err := f.ReadAt(buf, 0)
	if err == io.EOF {
		err = nil
	}
	return buf[:n], err
}

// WriteFileAtomic makes path hold data durably: it writes and syncs a
// temporary file beside it, renames it over path and syncs the directory,
// so that after a crash path holds either its old contents or data.
func WriteFileAtomic(fsys FS, path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, 0)
	if err == nil {
		err = f.Sync()
	}
	if e := f.Close(); err == nil {
		err = e
	}
	if err == nil {
		err = fsys.Rename(tmp, path)
	}
	if err != nil {
		fsys.Remove(tmp)
		return err
	}
	return fsys.SyncDir(filepath.Dir(path))
}

// Exists reports whether name exists.
func Exists(fsys FS, name string) bool {
	_, err := fsys.Stat(name)
	return err == nil
}

// IsNotExist reports whether err says a file does not exist.
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) Rename(o, n string) error                     { return os.Rename(o, n) }
func (osFS) Link(o, n string) error                       { return os.Link(o, n) }
func (osFS) MkdirAll(name string, perm os.FileMode) error { return os.MkdirAll(name, perm) }
func (osFS) ReadDir(name string) ([]os.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) Stat(name string) (os.FileInfo, error)        { return os.Stat(name) }

func (osFS) SyncDir(name string) error {
	d, err := os.Open(name)
	if err != nil {
		return err
	}
	err = d.Sync()
	if e := d.Close(); err == nil {
		err = e
	}
	return err
}

type osFile struct{ *os.File }

func (f osFile) Datasync() error { return fdatasync(f.File) }

func (f osFile) Allocate(off, size int64) error { return fallocate(f.File, off, size) }

package vfs

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// SectorSize is the unit a FaultFS tears writes at: what a disk writes
// atomically (512-byte sectors).
const SectorSize = 512

// ErrCrashed is returned by operations on a FaultFS after Crash when
// ErrorAfterCrash is set.
var ErrCrashed = fmt.Errorf("vfs: simulated crash: %w", syscall.EIO)

// FaultFS wraps another FS (normally Default) and simulates what a power
// failure does to data that was written but not yet synced, which a
// kill -9 of the server cannot show (the kernel keeps the page cache).
//
// It remembers, for every file, the contents of each 512-byte sector as of
// the file's last Sync or Datasync (and its size then). Crash stops the
// file system — every later operation fails with ErrCrashed, so a server
// still running can no longer change anything — and then decides the fate
// of every write made since the last sync of its file (afterwards every
// operation blocks for good, as on a machine that has stopped, so that a
// server still running in the same process can neither change the crash
// image nor notice the crash; with ErrorAfterCrash they fail with
// ErrCrashed instead):
//
//   - with Tear 0 (the default) each is dropped: the sectors it changed get
//     their synced contents back and the file its synced size;
//   - with Tear p > 0, each write is, with probability p, applied only in
//     part — a random subset of its sectors keeps the new contents, the
//     rest revert, so an 8 kB page may end up half old and half new (a torn
//     page) — and otherwise dropped; with Keep q, a write survives whole
//     with probability q (the kernel had written it back before the crash).
//
// A sector changed by several writes since the last sync keeps its newest
// contents or its synced ones. Files opened with O_SYNC or O_DSYNC are
// synced by every write. Creating, renaming and removing files is taken
// as durable at once (directory entries are not simulated), and Allocate
// is a write of zeroes.
//
// FaultFS is for tests; its bookkeeping reads every sector before it is
// first overwritten, and is not fast.
type FaultFS struct {
	base FS
	// Tear and Keep are the probabilities described above; set them
	// before use.
	Tear, Keep float64
	// Inject, if set, is called before every write, sync and allocation
	// with the operation and the file's path; an error it returns is
	// returned instead of doing the operation (an fsync failure, a full
	// disk). It may also block, to hold an operation until the test has
	// called Crash (it runs outside the lock Crash takes). Set it before
	// use.
	Inject func(op Op, path string) error
	// ErrorAfterCrash makes operations after Crash fail instead of block.
	ErrorAfterCrash bool

	// op is held shared by every operation and exclusively by Crash, so
	// that no write runs while the crash image is made.
	op      sync.RWMutex
	crashed bool          // guarded by op
	dead    chan struct{} // never closed: what operations after a crash wait on

	mu    sync.Mutex            // guards files
	files map[string]*faultFile // by cleaned path
}

// Op names an operation for FaultFS.Inject.
type Op uint8

// Operations Inject sees.
const (
	OpWrite Op = iota
	OpSync
	OpAllocate
)

func (o Op) String() string {
	switch o {
	case OpWrite:
		return "write"
	case OpSync:
		return "sync"
	}
	return "allocate"
}

func (f *FaultFS) inject(op Op, path string) error {
	if f.Inject == nil {
		return nil
	}
	return f.Inject(op, path)
}

// faultFile is the bookkeeping of one path.
type faultFile struct {
	mu         sync.Mutex
	syncedSize int64            // size at the last sync
	size       int64            // current size as written through FaultFS
	pre        map[int64][]byte // sector number → contents at the last sync (nil: beyond syncedSize)
	writes     [][2]int64       // unsynced writes: offset, length, in order
}

// NewFaultFS returns a FaultFS over base (Default if nil).
func NewFaultFS(base FS) *FaultFS {
	if base == nil {
		base = Default
	}
	return &FaultFS{base: base, files: map[string]*faultFile{}, dead: make(chan struct{})}
}

// Crashed reports whether Crash has been called.
func (f *FaultFS) Crashed() bool {
	f.op.RLock()
	defer f.op.RUnlock()
	return f.crashed
}

// Unsynced returns the number of writes not yet made durable (for tests).
func (f *FaultFS) Unsynced() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, ff := range f.files {
		ff.mu.Lock()
		n += len(ff.writes)
		ff.mu.Unlock()
	}
	return n
}

// Crash simulates a power failure (see FaultFS), with rng deciding which
// writes survive in part or whole. It returns how many unsynced writes were
// dropped, torn and kept. The FaultFS is unusable afterwards; open the
// directory again through a new one.
func (f *FaultFS) Crash(rng *rand.Rand) (dropped, torn, kept int, err error) {
	f.op.Lock()
	defer f.op.Unlock()
	if f.crashed {
		return 0, 0, 0, errors.New("vfs: already crashed")
	}
	f.crashed = true
	f.mu.Lock()
	defer f.mu.Unlock()
	for path, ff := range f.files {
		d, t, k, e := ff.crash(f.base, path, rng, f.Tear, f.Keep)
		dropped, torn, kept = dropped+d, torn+t, kept+k
		if e != nil && err == nil {
			err = e
		}
	}
	return dropped, torn, kept, err
}

// crash makes path's crash image.
func (ff *faultFile) crash(base FS, path string, rng *rand.Rand, tear, keep float64) (dropped, torn, kept int, err error) {
	if len(ff.writes) == 0 {
		return
	}
	// Decide each write's fate; a sector takes the fate of the last write
	// that touched it.
	survive := map[int64]bool{}
	for _, w := range ff.writes {
		first, last := w[0]/SectorSize, (w[0]+w[1]-1)/SectorSize
		r := rng.Float64()
		switch {
		case r < keep:
			kept++
			for s := first; s <= last; s++ {
				survive[s] = true
			}
		case r < keep+tear && last > first:
			torn++
			for s := first; s <= last; s++ {
				survive[s] = rng.IntN(2) == 0
			}
		default:
			dropped++
			for s := first; s <= last; s++ {
				survive[s] = false
			}
		}
	}
	fd, err := base.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		if IsNotExist(err) {
			return dropped, torn, kept, nil // removed since: nothing to restore
		}
		return dropped, torn, kept, err
	}
	defer fd.Close()
	// The size after the crash: the synced size, or the end of the last
	// surviving sector beyond it.
	size := ff.syncedSize
	for s, ok := range survive {
		if ok && (s+1)*SectorSize > size {
			size = min((s+1)*SectorSize, ff.size)
		}
	}
	for s, ok := range survive {
		if ok {
			continue
		}
		off := s * SectorSize
		if off >= size {
			continue
		}
		old := ff.pre[s]
		buf := make([]byte, min(SectorSize, size-off))
		copy(buf, old) // beyond the synced size: zeroes
		if _, e := fd.WriteAt(buf, off); e != nil && err == nil {
			err = e
		}
	}
	if e := fd.Truncate(size); e != nil && err == nil {
		err = e
	}
	if e := fd.Sync(); e != nil && err == nil {
		err = e
	}
	return dropped, torn, kept, err
}

func (f *FaultFS) file(path string) *faultFile {
	path = filepath.Clean(path)
	f.mu.Lock()
	defer f.mu.Unlock()
	ff := f.files[path]
	if ff == nil {
		ff = &faultFile{pre: map[int64][]byte{}}
		f.files[path] = ff
	}
	return ff
}

func (f *FaultFS) begin() error {
	f.op.RLock()
	if f.crashed {
		f.op.RUnlock()
		if !f.ErrorAfterCrash {
			<-f.dead
		}
		return ErrCrashed
	}
	return nil
}

func (f *FaultFS) end() { f.op.RUnlock() }

// OpenFile opens name through the fault layer.
func (f *FaultFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	if err := f.begin(); err != nil {
		return nil, err
	}
	defer f.end()
	st, statErr := f.base.Stat(name)
	inner, err := f.base.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	ff := f.file(name)
	ff.mu.Lock()
	if statErr != nil || flag&os.O_TRUNC != 0 {
		// New (or emptied) file: durable as empty.
		ff.syncedSize, ff.size = 0, 0
		ff.pre, ff.writes = map[int64][]byte{}, nil
	} else if len(ff.writes) == 0 {
		ff.syncedSize, ff.size = st.Size(), st.Size()
	}
	ff.mu.Unlock()
	return &faultHandle{fs: f, ff: ff, inner: inner, sync: flag&(os.O_SYNC|O_DSYNC) != 0}, nil
}

func (f *FaultFS) Remove(name string) error {
	if err := f.begin(); err != nil {
		return err
	}
	defer f.end()
	err := f.base.Remove(name)
	if err == nil {
		f.mu.Lock()
		delete(f.files, filepath.Clean(name))
		f.mu.Unlock()
	}
	return err
}

func (f *FaultFS) Rename(oldname, newname string) error {
	if err := f.begin(); err != nil {
		return err
	}
	defer f.end()
	err := f.base.Rename(oldname, newname)
	if err == nil {
		f.mu.Lock()
		o, n := filepath.Clean(oldname), filepath.Clean(newname)
		if ff := f.files[o]; ff != nil {
			f.files[n] = ff
		} else {
			delete(f.files, n)
		}
		delete(f.files, o)
		f.mu.Unlock()
	}
	return err
}

func (f *FaultFS) Link(oldname, newname string) error {
	if err := f.begin(); err != nil {
		return err
	}
	defer f.end()
	return f.base.Link(oldname, newname)
}

func (f *FaultFS) MkdirAll(name string, perm os.FileMode) error {
	if err := f.begin(); err != nil {
		return err
	}
	defer f.end()
	return f.base.MkdirAll(name, perm)
}

func (f *FaultFS) ReadDir(name string) ([]os.DirEntry, error) {
	if err := f.begin(); err != nil {
		return nil, err
	}
	defer f.end()
	return f.base.ReadDir(name)
}

func (f *FaultFS) Stat(name string) (os.FileInfo, error) {
	if err := f.begin(); err != nil {
		return nil, err
	}
	defer f.end()
	return f.base.Stat(name)
}

func (f *FaultFS) SyncDir(name string) error {
	if err := f.begin(); err != nil {
		return err
	}
	defer f.end()
	return f.base.SyncDir(name)
}

// faultHandle is one open file of a FaultFS.
type faultHandle struct {
	fs    *FaultFS
	ff    *faultFile
	inner File
	sync  bool // O_SYNC / O_DSYNC: every write is durable

	posMu sync.Mutex
	pos   int64 // for Read and Write
}

func (h *faultHandle) Name() string { return h.inner.Name() }

func (h *faultHandle) Stat() (os.FileInfo, error) {
	if err := h.fs.begin(); err != nil {
		return nil, err
	}
	defer h.fs.end()
	return h.inner.Stat()
}

func (h *faultHandle) ReadAt(p []byte, off int64) (int, error) {
	if err := h.fs.begin(); err != nil {
		return 0, err
	}
	defer h.fs.end()
	return h.inner.ReadAt(p, off)
}

func (h *faultHandle) Read(p []byte) (int, error) {
	h.posMu.Lock()
	defer h.posMu.Unlock()
	n, err := h.ReadAt(p, h.pos)
	h.pos += int64(n)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return n, err
}

func (h *faultHandle) Write(p []byte) (int, error) {
	h.posMu.Lock()
	defer h.posMu.Unlock()
	n, err := h.WriteAt(p, h.pos)
	h.pos += int64(n)
	return n, err
}

// WriteAt records the synced contents of every sector it is the first to
// change since the last sync, then writes.
func (h *faultHandle) WriteAt(p []byte, off int64) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	// Inject runs outside the crash lock: it may block until a crash.
	if err := h.fs.inject(OpWrite, h.inner.Name()); err != nil {
		return 0, &os.PathError{Op: "write", Path: h.inner.Name(), Err: err}
	}
	if err := h.fs.begin(); err != nil {
		return 0, err
	}
	defer h.fs.end()
	ff := h.ff
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if !h.sync {
		if err := ff.remember(h.inner, off, int64(len(p))); err != nil {
			return 0, err
		}
	}
	n, err := h.inner.WriteAt(p, off)
	if end := off + int64(n); end > ff.size {
		ff.size = end
	}
	if h.sync && err == nil {
		ff.synced()
	}
	return n, err
}

// remember saves the synced contents of the sectors [off, off+n) touches
// and logs the write. Caller holds ff.mu.
func (ff *faultFile) remember(inner File, off, n int64) error {
	for s := off / SectorSize; s <= (off+n-1)/SectorSize; s++ {
		if _, ok := ff.pre[s]; ok {
			continue
		}
		if s*SectorSize >= ff.syncedSize {
			ff.pre[s] = nil
			continue
		}
		buf := make([]byte, min(SectorSize, ff.syncedSize-s*SectorSize))
		if _, err := inner.ReadAt(buf, s*SectorSize); err != nil && err != io.EOF {
			return err
		}
		ff.pre[s] = buf
	}
	ff.writes = append(ff.writes, [2]int64{off, n})
	return nil
}

// synced forgets the unsynced writes: they are durable now.
func (ff *faultFile) synced() {
	ff.syncedSize = ff.size
	clear(ff.pre)
	ff.writes = ff.writes[:0]
}

func (h *faultHandle) Truncate(size int64) error {
	if err := h.fs.begin(); err != nil {
		return err
	}
	defer h.fs.end()
	ff := h.ff
	ff.mu.Lock()
	defer ff.mu.Unlock()
	// A truncation is taken as durable at once (metadata), like the
	// directory operations; the sectors cut off lose their history.
	if err := h.inner.Truncate(size); err != nil {
		return err
	}
	for s := range ff.pre {
		if s*SectorSize >= size {
			delete(ff.pre, s)
		}
	}
	ff.size, ff.syncedSize = size, size
	return nil
}

func (h *faultHandle) Sync() error     { return h.doSync(h.inner.Sync) }
func (h *faultHandle) Datasync() error { return h.doSync(h.inner.Datasync) }

func (h *faultHandle) doSync(fn func() error) error {
	if err := h.fs.inject(OpSync, h.inner.Name()); err != nil {
		return &os.PathError{Op: "fsync", Path: h.inner.Name(), Err: err}
	}
	if err := h.fs.begin(); err != nil {
		return err
	}
	defer h.fs.end()
	ff := h.ff
	ff.mu.Lock()
	defer ff.mu.Unlock()
	if err := fn(); err != nil {
		return err
	}
	ff.synced()
	return nil
}

// Allocate writes zeroes (a FaultFS does not simulate fallocate).
func (h *faultHandle) Allocate(off, size int64) error {
	if err := h.fs.inject(OpAllocate, h.inner.Name()); err != nil {
		return &os.PathError{Op: "fallocate", Path: h.inner.Name(), Err: err}
	}
	zero := make([]byte, 64<<10)
	for size > 0 {
		n := min(size, int64(len(zero)))
		if _, err := h.WriteAt(zero[:n], off); err != nil {
			return err
		}
		off += n
		size -= n
	}
	return nil
}

func (h *faultHandle) Close() error { return h.inner.Close() }

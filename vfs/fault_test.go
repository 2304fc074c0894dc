package vfs

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func fill(b byte, n int) []byte { return bytes.Repeat([]byte{b}, n) }

// TestFaultDropsUnsynced: what was synced survives a crash; what was
// written after the last sync is gone, and the file has its synced size.
func TestFaultDropsUnsynced(t *testing.T) {
	dir := t.TempDir()
	f := NewFaultFS(nil)
	f.ErrorAfterCrash = true
	path := filepath.Join(dir, "a")
	h, err := f.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	h.WriteAt(fill('a', 8192), 0)
	h.Sync()
	h.WriteAt(fill('b', 8192), 0)    // overwrite, unsynced
	h.WriteAt(fill('c', 4096), 8192) // extension, unsynced
	if n := f.Unsynced(); n != 2 {
		t.Fatalf("%d unsynced writes", n)
	}
	dropped, torn, kept, err := f.Crash(rand.New(rand.NewPCG(1, 2)))
	if err != nil || dropped != 2 || torn+kept != 0 {
		t.Fatalf("crash: %d %d %d %v", dropped, torn, kept, err)
	}
	got, _ := os.ReadFile(path)
	if !bytes.Equal(got, fill('a', 8192)) {
		t.Fatalf("after the crash the file has %d bytes, first %q", len(got), got[:1])
	}
	if _, err := h.WriteAt([]byte("x"), 0); err != ErrCrashed {
		t.Fatalf("write after the crash: %v", err)
	}
}

// TestFaultTears: with Tear 1 an unsynced 8 kB page write keeps some of
// its 512-byte sectors and loses others.
func TestFaultTears(t *testing.T) {
	dir := t.TempDir()
	f := NewFaultFS(nil)
	f.Tear = 1
	path := filepath.Join(dir, "a")
	h, _ := f.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	h.WriteAt(fill('a', 8192), 0)
	h.Datasync()
	h.WriteAt(fill('b', 8192), 0)
	_, torn, _, err := f.Crash(rand.New(rand.NewPCG(3, 4)))
	if err != nil || torn != 1 {
		t.Fatalf("torn %d, %v", torn, err)
	}
	got, _ := os.ReadFile(path)
	var old, new int
	for s := 0; s < 16; s++ {
		switch {
		case bytes.Equal(got[s*512:(s+1)*512], fill('a', 512)):
			old++
		case bytes.Equal(got[s*512:(s+1)*512], fill('b', 512)):
			new++
		default:
			t.Fatalf("sector %d is neither old nor new", s)
		}
	}
	if old == 0 || new == 0 {
		t.Fatalf("not torn: %d old sectors, %d new", old, new)
	}
}

// TestFaultSyncFlags: a file opened O_DSYNC is durable at every write.
func TestFaultSyncFlags(t *testing.T) {
	dir := t.TempDir()
	f := NewFaultFS(nil)
	path := filepath.Join(dir, "a")
	h, _ := f.OpenFile(path, os.O_RDWR|os.O_CREATE|O_DSYNC, 0o600)
	h.WriteAt(fill('a', 1000), 0)
	if _, _, _, err := f.Crash(rand.New(rand.NewPCG(1, 1))); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(path); !bytes.Equal(got, fill('a', 1000)) {
		t.Fatal("an O_DSYNC write was dropped")
	}
}

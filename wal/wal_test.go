package wal

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"lockd/locks"
	"lockd/vfs"
)

// logBuffer collects log messages for tests.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

type testEnv struct {
	dir    string
	fs     vfs.FS
	seg    int
	log    *logBuffer
	panics chan string
}

func newTestEnv(t *testing.T, seg int) *testEnv {
	return &testEnv{dir: t.TempDir(), fs: vfs.Default, seg: seg, log: &logBuffer{}, panics: make(chan string, 4)}
}

func (e *testEnv) open(t *testing.T, locksN int) *WAL {
	t.Helper()
	w, err := Open(Config{FS: e.fs, DataDir: e.dir, SegmentSize: e.seg, Buffers: 16, InsertLocks: locksN, MaxProcs: 64,
		Logger: slog.New(slog.NewTextHandler(e.log, nil)), Panic: func(msg string) { e.panics <- msg }})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// testRecord is a record of rmgr Heap whose main data is an id and some
// filler, so that replay can check what it got.
func insertTest(w *WAL, p *locks.Proc, id uint64, size int) LSN {
	b := w.Begin(p, RmgrHeap, 0x10)
	buf := binary.LittleEndian.AppendUint64(b.Main(), id)
	for i := 8; i < size; i++ {
		buf = append(buf, byte(id+uint64(i)))
	}
	b.SetMain(buf)
	return b.Insert()
}

func checkTestRecord(r *Record) (uint64, error) {
	if len(r.Main) < 8 {
		return 0, fmt.Errorf("short main data")
	}
	id := binary.LittleEndian.Uint64(r.Main)
	for i := 8; i < len(r.Main); i++ {
		if r.Main[i] != byte(id+uint64(i)) {
			return id, fmt.Errorf("record %d: byte %d wrong", id, i)
		}
	}
	return id, nil
}

func collect(ids *[]uint64) [256]RedoFunc {
	var redo [256]RedoFunc
	redo[RmgrHeap] = func(r *Record) error {
		id, err := checkTestRecord(r)
		*ids = append(*ids, id)
		return err
	}
	return redo
}

func newProcs(t *testing.T, n int) []*locks.Proc {
	lm, err := locks.NewManager(locks.Config{MaxConnections: n + 2})
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]*locks.Proc, n)
	for i := range ps {
		if ps[i], err = lm.NewProc(int32(i + 1)); err != nil {
			t.Fatal(err)
		}
	}
	return ps
}

// TestRecoverConcurrentInserts inserts records of many sizes (spanning
// pages and 64 kB segments) from several backends, flushes, "crashes"
// (no shutdown checkpoint) and checks that recovery replays every record
// exactly once, in an order consistent with each backend's.
func TestRecoverConcurrentInserts(t *testing.T) {
	for _, nl := range []int{1, 8} {
		t.Run(fmt.Sprintf("locks=%d", nl), func(t *testing.T) {
			e := newTestEnv(t, 64<<10)
			w := e.open(t, nl)
			if _, err := w.StartupXLOG([256]RedoFunc{}); err != nil {
				t.Fatal(err)
			}
			w.StartWriter(nil)
			procs := newProcs(t, 6)
			const per = 300
			var wg sync.WaitGroup
			for i, p := range procs {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(i), 1))
					var last LSN
					for k := range per {
						size := 8 + rng.IntN(200)
						if k%50 == 7 {
							size = 8 + rng.IntN(30000)
						}
						last = insertTest(w, p, uint64(i)<<32|uint64(k), size)
						if k%17 == 0 {
							w.Flush(p, last)
						}
					}
					w.Flush(p, last)
				})
			}
			wg.Wait()
			w.Abandon()

			w2 := e.open(t, nl)
			var ids []uint64
			res, err := w2.StartupXLOG(collect(&ids))
			if err != nil {
				t.Fatal(err)
			}
			if !res.Recovered {
				t.Fatal("no recovery after a crash")
			}
			if len(ids) != len(procs)*per {
				t.Fatalf("replayed %d records, want %d; log:\n%s", len(ids), len(procs)*per, e.log)
			}
			next := map[uint64]uint64{}
			for _, id := range ids {
				if id&0xffffffff != next[id>>32] {
					t.Fatalf("backend %d: record %d replayed after %d", id>>32, id&0xffffffff, next[id>>32])
				}
				next[id>>32]++
			}
			if !strings.Contains(e.log.String(), "redo done at") {
				t.Fatalf("log:\n%s", e.log)
			}
			// New records continue the log; a second crash replays old and new.
			w2.StartWriter(nil)
			insertTest(w2, nil, 1<<40, 100)
			w2.Flush(nil, w2.InsertPosition())
			w2.Abandon()
			w3 := e.open(t, nl)
			ids = ids[:0]
			if _, err := w3.StartupXLOG(collect(&ids)); err != nil {
				t.Fatal(err)
			}
			if len(ids) != len(procs)*per+1 || ids[len(ids)-1] != 1<<40 {
				t.Fatalf("after the second crash: %d records", len(ids))
			}
			w3.Abandon()
		})
	}
}

// TestCleanShutdownReplaysNothing: after a shutdown checkpoint, start-up
// replays nothing.
func TestCleanShutdownReplaysNothing(t *testing.T) {
	e := newTestEnv(t, 64<<10)
	w := e.open(t, 8)
	if _, err := w.StartupXLOG([256]RedoFunc{}); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		insertTest(w, nil, uint64(i), 500)
	}
	c, _ := w.BeginCheckpoint(nil, CkptShutdown|CkptImmediate)
	w.EndCheckpoint(nil, c, CheckpointInfo{})
	w.Close()
	w2 := e.open(t, 8)
	var ids []uint64
	res, err := w2.StartupXLOG(collect(&ids))
	if err != nil {
		t.Fatal(err)
	}
	if res.Recovered || len(ids) != 0 {
		t.Fatalf("recovered %v, replayed %d", res.Recovered, len(ids))
	}
	if !strings.Contains(e.log.String(), "database system was shut down at") {
		t.Fatalf("log:\n%s", e.log)
	}
	w2.Abandon()
}

// writeN inserts n records, flushes and abandons the log; it returns the
// records' start LSNs.
func writeN(t *testing.T, e *testEnv, n, size int) []LSN {
	w := e.open(t, 8)
	if _, err := w.StartupXLOG([256]RedoFunc{}); err != nil {
		t.Fatal(err)
	}
	var starts []LSN
	for i := range n {
		b := w.Begin(nil, RmgrHeap, 0x10)
		buf := binary.LittleEndian.AppendUint64(b.Main(), uint64(i))
		for j := 8; j < size; j++ {
			buf = append(buf, byte(uint64(i)+uint64(j)))
		}
		b.SetMain(buf)
		s, _ := b.InsertRecord()
		starts = append(starts, s)
	}
	w.Flush(nil, w.InsertPosition())
	w.Abandon()
	return starts
}

func patchWAL(t *testing.T, e *testEnv, at LSN, data []byte) {
	t.Helper()
	seg := uint64(at) / uint64(e.seg)
	f, err := os.OpenFile(filepath.Join(e.dir, "pg_wal", SegmentFileName(seg, uint64(e.seg))), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, int64(uint64(at)%uint64(e.seg))); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveryStops covers where recovery stops: a CRC error mid-log (with
// PostgreSQL's message), a half-written last record (silently: the length
// message of a zeroed tail), and a missing segment.
func TestRecoveryStops(t *testing.T) {
	t.Run("crc", func(t *testing.T) {
		e := newTestEnv(t, 64<<10)
		starts := writeN(t, e, 50, 300)
		patchWAL(t, e, starts[20]+recordHeaderSize+10, []byte{0xff, 0xee})
		w := e.open(t, 8)
		var ids []uint64
		if _, err := w.StartupXLOG(collect(&ids)); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 20 {
			t.Fatalf("replayed %d", len(ids))
		}
		want := "incorrect resource manager data checksum in record at " + starts[20].String()
		if !strings.Contains(e.log.String(), want) {
			t.Fatalf("no %q in log:\n%s", want, e.log)
		}
		// The log continues after record 19; record 21 is gone for good.
		w.StartWriter(nil)
		insertTest(w, nil, 999, 100)
		w.Flush(nil, w.InsertPosition())
		w.Abandon()
		w2 := e.open(t, 8)
		ids = ids[:0]
		if _, err := w2.StartupXLOG(collect(&ids)); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 21 || ids[20] != 999 {
			t.Fatalf("after restart: %v", ids)
		}
		w2.Abandon()
	})
	t.Run("torn", func(t *testing.T) {
		e := newTestEnv(t, 64<<10)
		starts := writeN(t, e, 30, 3000)
		// Zero the second half of the last record.
		last := starts[len(starts)-1]
		patchWAL(t, e, last+1500, make([]byte, 2000))
		w := e.open(t, 8)
		var ids []uint64
		if _, err := w.StartupXLOG(collect(&ids)); err != nil {
			t.Fatal(err)
		}
		if len(ids) != 29 {
			t.Fatalf("replayed %d", len(ids))
		}
		w.Abandon()
	})
	t.Run("missing segment", func(t *testing.T) {
		e := newTestEnv(t, 64<<10)
		starts := writeN(t, e, 200, 1000) // ~200 kB: several segments
		seg := uint64(starts[120]) / uint64(e.seg)
		os.Remove(filepath.Join(e.dir, "pg_wal", SegmentFileName(seg, uint64(e.seg))))
		w := e.open(t, 8)
		var ids []uint64
		if _, err := w.StartupXLOG(collect(&ids)); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			if id != uint64(i) {
				t.Fatalf("record %d is %d", i, id)
			}
		}
		if len(ids) == 0 || len(ids) >= 120 {
			t.Fatalf("replayed %d", len(ids))
		}
		if !strings.Contains(e.log.String(), "No such file or directory") {
			t.Fatalf("log:\n%s", e.log)
		}
		w.Abandon()
	})
	t.Run("no checkpoint", func(t *testing.T) {
		e := newTestEnv(t, 64<<10)
		writeN(t, e, 10, 100)
		// Destroy the first segment, which holds the checkpoint record.
		os.Remove(filepath.Join(e.dir, "pg_wal", SegmentFileName(1, uint64(e.seg))))
		w := e.open(t, 8)
		_, err := w.StartupXLOG([256]RedoFunc{})
		if err == nil || !strings.Contains(err.Error(), "PANIC: could not locate a valid checkpoint record") {
			t.Fatalf("err %v", err)
		}
	})
}

// TestGroupCommitCounts: every commit record made durable is counted in
// exactly one flush's batch.
func TestGroupCommitCounts(t *testing.T) {
	e := newTestEnv(t, 1<<20)
	w := e.open(t, 8)
	if _, err := w.StartupXLOG([256]RedoFunc{}); err != nil {
		t.Fatal(err)
	}
	procs := newProcs(t, 8)
	var wg sync.WaitGroup
	const per = 200
	s0 := w.Stats()
	for _, p := range procs {
		wg.Go(func() {
			for range per {
				b := w.Begin(p, RmgrXact, 0)
				b.MarkCommit()
				b.SetMain(append(b.Main(), make([]byte, 40)...))
				w.CommitFlush(p, b.Insert(), 0, 0)
			}
		})
	}
	wg.Wait()
	s := w.Stats()
	if s.BatchCommits != uint64(len(procs)*per) {
		t.Fatalf("batches counted %d commits, want %d (%+v)", s.BatchCommits, len(procs)*per, s)
	}
	if s.FlushLed+s.FlushFollowed-s0.FlushLed-s0.FlushFollowed != uint64(len(procs)*per) || s.Syncs == 0 {
		t.Fatalf("flushes: %+v", s)
	}
	t.Logf("syncs %d, flush led %d followed %d, mean batch %.2f", s.Syncs, s.FlushLed, s.FlushFollowed,
		float64(s.BatchCommits)/float64(s.BatchFlushes))
	w.Abandon()
}

// TestCheckpointsDuringInserts runs checkpoints (every insertion lock
// taken in turn, then the checkpoint record) while backends insert through
// a ring of only 4 WAL buffers, so that insertions keep having to write
// pages out; then a crash, and recovery replays, for each backend, an
// unbroken run of its records ending with its last.
func TestCheckpointsDuringInserts(t *testing.T) {
	e := newTestEnv(t, 64<<10)
	w, err := Open(Config{FS: e.fs, DataDir: e.dir, SegmentSize: e.seg, Buffers: 4, InsertLocks: 4, MaxProcs: 64,
		Logger: slog.New(slog.NewTextHandler(e.log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.StartupXLOG([256]RedoFunc{}); err != nil {
		t.Fatal(err)
	}
	w.StartWriter(nil)
	procs := newProcs(t, 5)
	const per = 400
	stop := make(chan struct{})
	var ckpts sync.WaitGroup
	ckpts.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c, ok := w.BeginCheckpoint(procs[4], CkptForce|CkptImmediate); ok {
				w.EndCheckpoint(procs[4], c, CheckpointInfo{})
			}
		}
	})
	var wg sync.WaitGroup
	for i, p := range procs[:4] {
		wg.Go(func() {
			for k := range per {
				insertTest(w, p, uint64(i)<<32|uint64(k), 100+k%3000)
			}
			w.Flush(p, w.InsertPosition())
		})
	}
	wg.Wait()
	close(stop)
	ckpts.Wait()
	if w.CheckpointStats().Completed == 0 {
		t.Fatal("no checkpoint completed")
	}
	w.Abandon()
	w2 := e.open(t, 4)
	var ids []uint64
	if _, err := w2.StartupXLOG(collect(&ids)); err != nil {
		t.Fatal(err)
	}
	next := map[uint64]uint64{}
	for _, id := range ids {
		b, k := id>>32, id&0xffffffff
		if n, ok := next[b]; ok && k != n {
			t.Fatalf("backend %d: record %d replayed after %d", b, k, n-1)
		}
		next[b] = k + 1
	}
	for b := range uint64(4) {
		if n, ok := next[b]; ok && n != per {
			t.Fatalf("backend %d: replay ends at %d of %d", b, n, per)
		}
	}
	w2.Abandon()
}

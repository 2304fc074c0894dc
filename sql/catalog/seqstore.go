package catalog

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"lockd/locks"
	"lockd/vfs"
	"lockd/wal"
)

// The values of sequences. PostgreSQL keeps a sequence's state (last_value,
// log_cnt, is_called) in a one-tuple heap page that nextval changes in
// place under the buffer's exclusive content lock, outside any
// transaction's control; lockd keeps it in a seqData guarded by an LWLock
// of the same tranche (BufferContent), so contention on a hot sequence
// shows as it does in PostgreSQL.
//
// Durability, as PostgreSQL's: nextval logs the state 32 values ahead
// (SEQ_LOG_VALS; a Sequence record with the state as it will be once they
// are used, log_cnt 0) whenever the logged values are used up, on the
// first call, and on the first call after a checkpoint began (the state's
// LSN is at or before the redo pointer); setval and the creation of a
// sequence's storage log their state too. Replay sets the state each
// record holds, so after a crash a sequence continues past every value
// handed out, skipping at most 32 (plus sessions' caches). The states are
// also written to global/lockd_sequences.json at every checkpoint (the
// sequences' "data pages"), after the log is flushed past them.

// xlogSeqLog is the Sequence record type XLOG_SEQ_LOG: relfile u32,
// last_value i64, log_cnt i64, is_called u8.
const xlogSeqLog uint8 = 0x00

// seqState is the sequence relation's one row.
type SeqState struct {
	LastValue int64 `json:"last_value"`
	LogCnt    int64 `json:"log_cnt"`
	IsCalled  bool  `json:"is_called"`
}

// seqData is the storage of one sequence (one RelFile).
type SeqData struct {
	Lw locks.LWLock // the sequence page's content lock (BufferContent)
	St SeqState     // guarded by lw
	// LSN is the end of the last record that logged this sequence (the
	// page LSN); guarded by Lw.
	LSN wal.LSN
}

// seqStore holds the state of every sequence by RelFile. It is shared by
// all sessions and safe for concurrent use.
type SeqStore struct {
	path   string
	fs     vfs.FS
	wal    *wal.WAL
	mu     sync.RWMutex
	data   map[uint32]*SeqData // guarded by mu
	fileMu sync.Mutex          // serialises writes of the file
}

// openSeqStore loads the sequences' states; a sequence of the catalog
// that the file does not know starts afresh from its START value (or
// takes the state recovery replays).
func OpenSeqStore(fsys vfs.FS, w *wal.WAL, dataDir string, cat *CatalogState) (*SeqStore, error) {
	if fsys == nil {
		fsys = vfs.Default
	}
	st := &SeqStore{path: filepath.Join(dataDir, "global", "lockd_sequences.json"), fs: fsys, wal: w, data: map[uint32]*SeqData{}}
	saved := map[string]SeqState{}
	raw, err := vfs.ReadFile(fsys, st.path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(raw, &saved); err != nil {
			return nil, fmt.Errorf("sequence file %s is corrupt: %w", st.path, err)
		}
	}
	for _, q := range cat.Sequences {
		s, ok := saved[strconv.FormatUint(uint64(q.RelFile), 10)]
		if !ok {
			s = SeqState{LastValue: q.Start}
		}
		st.put(q.RelFile, s, 0)
	}
	return st, nil
}

func (st *SeqStore) put(relfile uint32, s SeqState, lsn wal.LSN) {
	d := &SeqData{St: s, LSN: lsn}
	d.Lw.Init(locks.TrancheBufferContent)
	st.mu.Lock()
	st.data[relfile] = d
	st.mu.Unlock()
}

// Create makes the storage of a new sequence, or of a rewritten one, and
// logs its state (fill_seq_with_data).
func (st *SeqStore) Create(relfile uint32, s SeqState) {
	st.put(relfile, s, st.Log(nil, relfile, s))
}

// Log logs relfile's state s (XLOG_SEQ_LOG) and returns the record's end,
// the sequence's new LSN; 0 without a log.
func (st *SeqStore) Log(p *locks.Proc, relfile uint32, s SeqState) wal.LSN {
	if st.wal == nil {
		return 0
	}
	b := st.wal.Begin(p, wal.RmgrSequence, xlogSeqLog)
	buf := binary.LittleEndian.AppendUint32(b.Main(), relfile)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(s.LastValue))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(s.LogCnt))
	if s.IsCalled {
		buf = append(buf, 1)
	} else {
		buf = append(buf, 0)
	}
	b.SetMain(buf)
	return b.Insert()
}

// LogDue reports whether a nextval must log even with logged values left:
// the sequence was last logged before the current checkpoint's redo point
// (PostgreSQL compares the page LSN with GetRedoRecPtr). The caller holds
// d.Lw.
func (st *SeqStore) LogDue(d *SeqData) bool {
	return st.wal != nil && d.LSN <= st.wal.RedoRecPtr()
}

// Redo replays a Sequence record: the storage of its relfile takes the
// logged state, and is made if missing (the sequence was created after the
// last checkpoint).
func (st *SeqStore) Redo(rec *wal.Record) error {
	b := rec.Main
	if rec.Info != xlogSeqLog || len(b) < 21 {
		return fmt.Errorf("malformed sequence record at %s", rec.LSN)
	}
	relfile := binary.LittleEndian.Uint32(b)
	s := SeqState{LastValue: int64(binary.LittleEndian.Uint64(b[4:])), LogCnt: int64(binary.LittleEndian.Uint64(b[12:])), IsCalled: b[20] != 0}
	if d := st.Get(relfile); d != nil {
		d.St, d.LSN = s, rec.EndLSN
		return nil
	}
	st.put(relfile, s, rec.EndLSN)
	return nil
}

// EndRecovery keeps the storage of cat's sequences only, and gives every
// sequence of cat storage (from its START value if recovery found none).
func (st *SeqStore) EndRecovery(cat *CatalogState) {
	keep := map[uint32]bool{}
	for _, q := range cat.Sequences {
		keep[q.RelFile] = true
		if st.Get(q.RelFile) == nil {
			st.put(q.RelFile, SeqState{LastValue: q.Start}, 0)
		}
	}
	st.mu.Lock()
	for rf := range st.data {
		if !keep[rf] {
			delete(st.data, rf)
		}
	}
	st.mu.Unlock()
}

// get returns the storage of relfile, nil if there is none.
func (st *SeqStore) Get(relfile uint32) *SeqData {
	st.mu.RLock()
	d := st.data[relfile]
	st.mu.RUnlock()
	return d
}

// drop forgets the storage of relfile (0: nothing).
func (st *SeqStore) Drop(relfile uint32) {
	if relfile == 0 {
		return
	}
	st.mu.Lock()
	delete(st.data, relfile)
	st.mu.Unlock()
}

// Checkpoint writes the states of the published catalog's sequences.
func (st *SeqStore) Checkpoint(cat *CatalogState) error { return st.Write(cat) }

// write persists the states of cat's sequences (temporary file, fsync,
// rename), after flushing the log past them (WAL before data).
func (st *SeqStore) Write(cat *CatalogState) error {
	st.fileMu.Lock()
	defer st.fileMu.Unlock()
	out := make(map[string]SeqState, len(cat.Sequences))
	for _, q := range cat.Sequences {
		d := st.Get(q.RelFile)
		if d == nil {
			continue
		}
		d.Lw.Acquire(nil, locks.LWShared)
		out[strconv.FormatUint(uint64(q.RelFile), 10)] = d.St
		d.Lw.Release(nil)
	}
	if st.wal != nil {
		st.wal.Flush(nil, st.wal.InsertPosition())
	}
	if len(out) == 0 {
		if err := st.fs.Remove(st.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	raw, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	return vfs.WriteFileAtomic(st.fs, st.path, raw)
}

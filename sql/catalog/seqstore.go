package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"lockd/locks"
)

// The values of sequences. PostgreSQL keeps a sequence's state (last_value,
// log_cnt, is_called) in a one-tuple heap page that nextval changes in
// place under the buffer's exclusive content lock, outside any
// transaction's control; lockd keeps it in a seqData guarded by an LWLock
// of the same tranche (BufferContent), so contention on a hot sequence
// shows as it does in PostgreSQL.
//
// Durability follows the rest of lockd (there is no WAL): the states are
// written to global/lockd_sequences.json at every checkpoint (and when a
// transaction that created, altered or dropped a sequence commits), with
// a temporary file, fsync and rename. A clean shutdown keeps every value;
// a crash loses the nextval and setval calls made since the last
// checkpoint, so values handed out then may be handed out again (PostgreSQL
// WAL-logs 32 values ahead and skips them after a crash instead).

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
	// loggedGen is the checkpoint generation of the last change that
	// PostgreSQL would have WAL-logged (the page LSN); a nextval after a
	// later checkpoint logs again, as PostgreSQL's does (guarded by lw).
	LoggedGen uint64
}

// seqStore holds the state of every sequence by RelFile. It is shared by
// all sessions and safe for concurrent use.
type SeqStore struct {
	path string
	mu   sync.RWMutex
	data map[uint32]*SeqData // guarded by mu
	// ckptGen counts checkpoints (PostgreSQL's redo pointer); it starts at
	// 1, so the first nextval after a restart logs, as after PostgreSQL's
	// shutdown checkpoint.
	CkptGen atomic.Uint64
	fileMu  sync.Mutex // serialises writes of the file
}

// openSeqStore loads the sequences' states; a sequence of the catalog
// that the file does not know (created after the last write, before a
// crash) starts afresh from its START value.
func OpenSeqStore(dataDir string, cat *CatalogState) (*SeqStore, error) {
	st := &SeqStore{path: filepath.Join(dataDir, "global", "lockd_sequences.json"), data: map[uint32]*SeqData{}}
	st.CkptGen.Store(1)
	saved := map[string]SeqState{}
	raw, err := os.ReadFile(st.path)
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

func (st *SeqStore) put(relfile uint32, s SeqState, gen uint64) {
	d := &SeqData{St: s, LoggedGen: gen}
	d.Lw.Init(locks.TrancheBufferContent)
	st.mu.Lock()
	st.data[relfile] = d
	st.mu.Unlock()
}

// create makes the storage of a new sequence, or of a rewritten one.
func (st *SeqStore) Create(relfile uint32, s SeqState) {
	st.put(relfile, s, st.CkptGen.Load())
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

// checkpoint starts a new checkpoint generation and writes the states of
// the published catalog's sequences.
func (st *SeqStore) Checkpoint(cat *CatalogState) error {
	st.CkptGen.Add(1)
	return st.Write(cat)
}

// write persists the states of cat's sequences (temporary file, fsync,
// rename).
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
	if len(out) == 0 {
		if err := os.Remove(st.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	raw, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		return err
	}
	return replaceFile(st.path, raw)
}

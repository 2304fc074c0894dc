package sql

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
	"lockd/pgerr"
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
type seqState struct {
	LastValue int64 `json:"last_value"`
	LogCnt    int64 `json:"log_cnt"`
	IsCalled  bool  `json:"is_called"`
}

// seqData is the storage of one sequence (one RelFile).
type seqData struct {
	lw locks.LWLock // the sequence page's content lock (BufferContent)
	st seqState     // guarded by lw
	// loggedGen is the checkpoint generation of the last change that
	// PostgreSQL would have WAL-logged (the page LSN); a nextval after a
	// later checkpoint logs again, as PostgreSQL's does (guarded by lw).
	loggedGen uint64
}

// seqStore holds the state of every sequence by RelFile. It is shared by
// all sessions and safe for concurrent use.
type seqStore struct {
	path string
	mu   sync.RWMutex
	data map[uint32]*seqData // guarded by mu
	// ckptGen counts checkpoints (PostgreSQL's redo pointer); it starts at
	// 1, so the first nextval after a restart logs, as after PostgreSQL's
	// shutdown checkpoint.
	ckptGen atomic.Uint64
	fileMu  sync.Mutex // serialises writes of the file
}

// openSeqStore loads the sequences' states; a sequence of the catalog
// that the file does not know (created after the last write, before a
// crash) starts afresh from its START value.
func openSeqStore(dataDir string, cat *catalogState) (*seqStore, error) {
	st := &seqStore{path: filepath.Join(dataDir, "global", "lockd_sequences.json"), data: map[uint32]*seqData{}}
	st.ckptGen.Store(1)
	saved := map[string]seqState{}
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
			s = seqState{LastValue: q.Start}
		}
		st.put(q.RelFile, s, 0)
	}
	return st, nil
}

func (st *seqStore) put(relfile uint32, s seqState, gen uint64) {
	d := &seqData{st: s, loggedGen: gen}
	d.lw.Init(locks.TrancheBufferContent)
	st.mu.Lock()
	st.data[relfile] = d
	st.mu.Unlock()
}

// create makes the storage of a new sequence, or of a rewritten one.
func (st *seqStore) create(relfile uint32, s seqState) {
	st.put(relfile, s, st.ckptGen.Load())
}

// get returns the storage of relfile, nil if there is none.
func (st *seqStore) get(relfile uint32) *seqData {
	st.mu.RLock()
	d := st.data[relfile]
	st.mu.RUnlock()
	return d
}

// drop forgets the storage of relfile (0: nothing).
func (st *seqStore) drop(relfile uint32) {
	if relfile == 0 {
		return
	}
	st.mu.Lock()
	delete(st.data, relfile)
	st.mu.Unlock()
}

// checkpoint starts a new checkpoint generation and writes the states of
// the published catalog's sequences.
func (st *seqStore) checkpoint(cat *catalogState) error {
	st.ckptGen.Add(1)
	return st.write(cat)
}

// write persists the states of cat's sequences (temporary file, fsync,
// rename).
func (st *seqStore) write(cat *catalogState) error {
	st.fileMu.Lock()
	defer st.fileMu.Unlock()
	out := make(map[string]seqState, len(cat.Sequences))
	for _, q := range cat.Sequences {
		d := st.get(q.RelFile)
		if d == nil {
			continue
		}
		d.lw.Acquire(nil, locks.LWShared)
		out[strconv.FormatUint(uint64(q.RelFile), 10)] = d.st
		d.lw.Release(nil)
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

// commitSequences runs after the catalog of a committing transaction is
// published: the storage that dropped and rewritten sequences no longer
// use is forgotten, and the file is written so that new sequences and
// restarts are on disk.
func (s *Backend) commitSequences(ops []*catOp) {
	changed := false
	for _, op := range ops {
		switch op.kind {
		case "dropseq", "setseq":
			s.seqs.drop(op.oldFile)
			changed = true
		case "createseq":
			changed = true
		}
	}
	if changed {
		if err := s.seqs.write(s.catalog.state()); err != nil {
			s.notice(pgerr.SeverityWarning, pgerr.InternalError, "could not write the sequences: "+err.Error())
		}
	}
}

// abortSequences forgets the storage that rolled-back operations made.
func (s *Backend) abortSequences(ops []*catOp) {
	for _, op := range ops {
		switch op.kind {
		case "createseq", "setseq":
			s.seqs.drop(op.relfile)
		}
	}
}

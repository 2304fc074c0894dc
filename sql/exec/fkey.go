package exec

import (
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/storage"
)

// pkVisible reports whether the referenced table — a partitioned one: the
// partition the key routes to — has a row visible to the snapshot under
// the key setKey loaded (keyOK: it could) in its unique index.
func (s *Executor) PkVisible(ec *expr.EvalCtx, fk *fkRef, keyOK bool) (bool, error) {
	if !keyOK {
		return false, nil
	}
	t, ts := fk.pkSource(s.Cat())
	if ts == nil {
		return false, nil
	}
	var tids []storage.TID
	if err := s.Store.IndexLookup(s.Proc, storage.RelID(ts.Index.RelFile), fk.keyBytes(), func(tid storage.TID) bool {
		tids = append(tids, tid)
		return true
	}); err != nil {
		return false, err
	}
	rel := storage.RelID(t.RelFile)
	for _, tid := range tids {
		visible, err := s.Store.Fetch(s.Proc, &s.Txn, rel, tid, func(*plan.TxnHeader, []byte) {})
		if err != nil {
			return false, err
		}
		if visible {
			return true, nil
		}
	}
	return false, nil
}

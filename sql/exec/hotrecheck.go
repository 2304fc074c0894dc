package exec

import (
	"bytes"

	"lockd/sql/catalog"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// Index-only scans of an index built over broken HOT chains.
//
// An index built while a row's HOT chain still held versions an older
// snapshot may see names the chain's root with the key of the version
// the build saw (storage/hot.go); the older versions may have other keys
// for it, since no index on those columns existed when they were
// updated. PostgreSQL keeps such an index (indcheckxmin) from
// transactions whose snapshots predate the build. lockd lets them use it:
// index and bitmap scans recheck every condition on the row they fetch
// (plan/indexpath.go), so an older version that does not match is left
// out. An index-only scan reads its values from the entry, not the row:
// when the heap fetch it makes for a page not all-visible returns a
// version a later one HOT-updated — the only kind that can be older than
// the build — through an index marked CheckXmin, that version's key is
// compared with the entry's, and the row skipped if they differ. Other
// indexes pay nothing.

// keyMoved reports whether the version (header h, data) of table t that
// the entry key of index ix led to has another key for ix.
func (x *Executor) keyMoved(t *catalog.TableDef, ix *catalog.IndexDef, h *txn.TupleHeader, data, key []byte) (bool, error) {
	if !ix.CheckXmin || !storage.HotUpdated(h) {
		return false, nil
	}
	row := make([]types.Datum, len(t.Cols)+plan.NumSysCols)
	if err := catalog.DecodeRow(data, t, row); err != nil {
		return false, err
	}
	k, _ := x.AppendIndexKey(nil, t, ix, row)
	return !bytes.Equal(k, key), nil
}

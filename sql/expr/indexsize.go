package expr

import (
	"lockd/sql/catalog"
	"lockd/storage"
)

// IndexSize returns the pages (metapage included) and height that
// PostgreSQL's B-tree for index ix would have with the entries lockd's
// index holds now (catalog.BtreeSize), and the entries: what
// pg_relation_size, pg_class.relpages and the planner's index costs use.
// An index without storage (a partitioned index) or unknown to the store
// has no pages.
func (s *Backend) IndexSize(ix *catalog.IndexDef) (pages float64, height int, entries float64) {
	if s.Store == nil || ix.RelFile == 0 {
		return 0, 0, 0
	}
	t := s.Cat().Tables[ix.Table]
	if t == nil {
		return 0, 0, 0
	}
	sh, err := s.Store.IndexShape(s.Proc, storage.RelID(ix.RelFile), catalog.BtreeDedups(t, ix))
	if err != nil {
		return 0, 0, 0
	}
	keyBytes := 0.0
	if sh.Entries > 0 {
		keyBytes = float64(sh.KeyBytes) / float64(sh.Entries)
	}
	data, dedup := catalog.BtreeTupleData(t, ix, keyBytes)
	pages, height = catalog.BtreeSize(float64(sh.Entries), float64(sh.Distinct), data, dedup)
	return pages, height, float64(sh.Entries)
}

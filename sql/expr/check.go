package expr

import (
	"lockd/sql/catalog"
)

// leafTables is t itself, or the leaf partitions under a partitioned t.
func (s *Backend) LeafTables(t *catalog.TableDef) []*catalog.TableDef {
	if !t.Partitioned() {
		return []*catalog.TableDef{t}
	}
	var out []*catalog.TableDef
	for _, k := range s.Cat().PartitionChildren(t) {
		out = append(out, s.LeafTables(k)...)
	}
	return out
}

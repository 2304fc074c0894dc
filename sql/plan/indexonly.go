package plan

import "lockd/sql/catalog"

// Index-only scans (PostgreSQL's check_index_only and IndexOnlyScan). A
// scan whose index holds every column the query reads of the table, and
// whose key types read back from the index key (catalog.KeyDecodable),
// answers from the index entries: the executor fetches a heap tuple only
// when the visibility map does not call its page all-visible, to check
// its visibility. Its cost counts only those heap pages (indexScanCost),
// so after VACUUM an index-only scan of a whole index — which no
// condition bounds — can cost less than a sequential scan: count(*) over
// the smallest index, as PostgreSQL's build_index_paths considers one
// whenever the scan could be index-only. A query that reads a system
// column (ctid, tableoid) or locks its rows reads the heap.

// presetNeed gives the table scans of fb's leaves the columns need marks
// (readColumns, with the WHERE clause's), before their paths are chosen,
// so bestPath knows which indexes could answer alone. limitDecoding sets
// the final ones.
func presetNeed(fb *fromBuilder, need []bool) {
	for _, l := range fb.leaves {
		if ts, ok := l.Src.(*TableSource); ok {
			ts.setNeed(need[l.Off : l.Off+min(l.N, len(need)-l.Off)])
		}
	}
}

// setNeed records the columns read of the row span span (the table's
// columns, then its system columns).
func (ts *TableSource) setNeed(span []bool) {
	n := min(len(ts.Defs), len(span))
	ts.need = span[:n]
	ts.needSys = false
	for _, v := range span[n:] {
		ts.needSys = ts.needSys || v
	}
}

// coveredBy reports whether an index-only scan of ix could answer the
// query: ix holds every column it reads of the table, each one that
// reads back from its key, and it reads no system column.
func (ts *TableSource) coveredBy(ix *catalog.IndexDef) bool {
	if ts.need == nil || ts.needSys || ix == nil {
		return false
	}
	for c := range ts.Defs {
		if !ts.needCol(c) {
			continue
		}
		found := false
		for _, ic := range ix.Cols {
			found = found || ic == c
		}
		if !found || !catalog.KeyDecodable(ts.cols[c].Type) {
			return false
		}
	}
	return true
}

// markIndexOnly makes ts's index scan index-only if its index covers the
// query and enable_indexonlyscan allowed it when the query was planned.
func (ts *TableSource) markIndexOnly(allowed bool) {
	ts.IndexOnly = allowed && ts.Index != nil && ts.coveredBy(ts.Index)
}

// wholeIndex reports whether ts reads its whole index: no condition
// bounds it (an index-only scan chosen for its cost).
func (ts *TableSource) wholeIndex() bool {
	return ts.Index != nil && len(ts.KeyArgs) == 0 && ts.InArgs == nil && ts.InArr == nil &&
		ts.Lo == nil && ts.Hi == nil && !ts.NotNull
}

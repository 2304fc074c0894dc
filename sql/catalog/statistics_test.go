package catalog

import (
	"testing"

	"lockd/sql/stats"
	"lockd/sql/types"
)

// TestStatisticsLookups: the planner's lookups find a column's statistics
// by position through its attribute number, hide those of a column whose
// type changed, and allocate nothing.
func TestStatisticsLookups(t *testing.T) {
	c, err := OpenCatalog(nil, nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st := c.State()
	// column b (attnum 3) sits at position 1 after a DROP COLUMN of attnum 2
	tab := &TableDef{OID: 16384, Name: "t", Cols: []ColumnDef{
		{Name: "a", TypeOID: types.OIDInt4, Attnum: 1}, {Name: "b", TypeOID: types.OIDText, Attnum: 3}}}
	c.Stats().Publish(16384, &stats.TableStats{RelTuples: 10, RelPages: 1, Cols: []*stats.ColumnStats{
		{TypeOID: types.OIDInt4, NDistinct: -1}, {TypeOID: types.OIDInt4}, {TypeOID: types.OIDText, NDistinct: 2}}})
	c.Stats().SetSize(16385, 10, 2)
	if cs := st.ColumnStats(tab, 1); cs == nil || cs.NDistinct != 2 {
		t.Fatalf("column b: %+v", cs)
	}
	tab.Cols[1].TypeOID = types.OIDVarchar
	if cs := st.ColumnStats(tab, 1); cs != nil {
		t.Fatalf("a column whose type changed has statistics %+v", cs)
	}
	if tuples, pages := st.IndexStats(16385); tuples != 10 || pages != 2 {
		t.Fatalf("IndexStats = %v, %v", tuples, pages)
	}
	if tuples, _ := st.IndexStats(99999); tuples != -1 {
		t.Fatalf("an unknown index has %v tuples", tuples)
	}
	allocs := testing.AllocsPerRun(100, func() {
		_ = st.TableStats(16384)
		_ = st.ColumnStats(tab, 0)
		_, _ = st.IndexStats(16385)
	})
	if allocs != 0 {
		t.Fatalf("lookups allocate %v times", allocs)
	}
}

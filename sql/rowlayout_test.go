package sql

import (
	"strings"
	"testing"

	"lockd/sql/catalog"
	"lockd/sql/types"
)

// TestRowLayout: rows written before ADD COLUMN read the column's missing
// value (or NULL), rows written before DROP COLUMN skip the dropped
// attribute, and tables of old data directories (RowFormat 0, no
// attribute count in the row) read as they were written.
func TestRowLayout(t *testing.T) {
	cols := func(cs ...catalog.ColumnDef) []catalog.ColumnDef { return cs }
	a := catalog.ColumnDef{Name: "a", TypeOID: types.OIDInt4, TypeMod: -1}
	b := catalog.ColumnDef{Name: "b", TypeOID: types.OIDText, TypeMod: -1}
	c := catalog.ColumnDef{Name: "c", TypeOID: types.OIDInt8, TypeMod: -1}
	d := catalog.ColumnDef{Name: "d", TypeOID: types.OIDBpchar, TypeMod: 4 + 3}
	table := func(format int, cs []catalog.ColumnDef, dropped ...catalog.DroppedColumn) *catalog.TableDef {
		t := &catalog.TableDef{Cols: cs, Dropped: dropped, RowFormat: format}
		t.Layout = catalog.BuildLayout(t)
		return t
	}
	show := func(row []types.Datum, t *catalog.TableDef) string {
		var out []string
		for i, v := range row {
			if v.Null {
				out = append(out, "NULL")
			} else {
				out = append(out, string(types.AppendText(nil, t.Cols[i].Type(), v, nil)))
			}
		}
		return strings.Join(out, ",")
	}
	v1 := table(1, cols(a, b))
	old := catalog.AppendRow(nil, v1, []types.Datum{types.IntDatum(1), types.TextDatum("x")})

	// ADD COLUMN c DEFAULT 7, then d without a default
	cm := c
	cm.Missing = catalog.EncodeMissing(&cm, types.IntDatum(7))
	v2 := table(1, cols(a, b, cm, d))
	if v2.Layout == nil {
		t.Fatal("a column with a missing value needs a layout")
	}
	mid := catalog.AppendRow(nil, v2, []types.Datum{types.IntDatum(2), types.TextDatum("y"), types.IntDatum(8), types.TextDatum("z")})
	// DROP COLUMN b: attribute 2 stays in the rows
	ca, cc, cd := a, cm, d
	ca.Attnum, cc.Attnum, cd.Attnum = 1, 3, 4
	v3 := table(1, cols(ca, cc, cd), catalog.DroppedColumn{Attnum: 2, TypeOID: types.OIDText, TypeMod: -1})
	last := catalog.AppendRow(nil, v3, []types.Datum{types.IntDatum(3), types.NullDatum, types.TextDatum("w")})

	for _, tc := range []struct {
		name string
		t    *catalog.TableDef
		data []byte
		want string
	}{
		{"v1 row as v1", v1, old, "1,x"},
		{"v1 row after ADD COLUMN", v2, old, "1,x,7,NULL"},
		{"v2 row", v2, mid, "2,y,8,z  "},
		{"v1 row after DROP COLUMN", v3, old, "1,7,NULL"},
		{"v2 row after DROP COLUMN", v3, mid, "2,8,z  "},
		{"v3 row", v3, last, "3,NULL,w  "},
	} {
		row := make([]types.Datum, len(tc.t.Cols))
		if err := catalog.DecodeRow(tc.data, tc.t, row); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := show(row, tc.t); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// a row longer than its table (its inserter added a column and
	// aborted) reads the attributes the table has
	short := make([]types.Datum, 2)
	if err := catalog.DecodeRow(mid, v1, short); err != nil || show(short, v1) != "2,y" {
		t.Errorf("v2 row as v1: %s %v, want 2,y", show(short, v1), err)
	}

	// an old data directory's table: no attribute count; DROP COLUMN
	// keeps the attribute, so old and new rows have all of them
	l1 := table(0, cols(a, b, c))
	lold := catalog.AppendRow(nil, l1, []types.Datum{types.IntDatum(1), types.TextDatum("x"), types.IntDatum(5)})
	if len(lold) != 1+4+2+8 {
		t.Errorf("legacy row: %d bytes, want %d", len(lold), 1+4+2+8)
	}
	ca, cc = a, c
	ca.Attnum, cc.Attnum = 1, 3
	l2 := table(0, cols(ca, cc), catalog.DroppedColumn{Attnum: 2, TypeOID: types.OIDText, TypeMod: -1})
	lnew := catalog.AppendRow(nil, l2, []types.Datum{types.IntDatum(2), types.IntDatum(6)})
	for data, want := range map[*[]byte]string{&lold: "1,5", &lnew: "2,6"} {
		row := make([]types.Datum, 2)
		if err := catalog.DecodeRow(*data, l2, row); err != nil || show(row, l2) != want {
			t.Errorf("legacy row after DROP COLUMN: %s %v, want %s", show(row, l2), err, want)
		}
	}
}

// TestAlterTableOldDataDirectory: a table of a data directory written
// before ALTER TABLE ADD COLUMN existed (its rows hold no attribute count)
// reads as before in a newer lockd, takes DROP COLUMN without a rewrite,
// and is rewritten once, into rows that record their length, by its
// first ADD COLUMN.
func TestAlterTableOldDataDirectory(t *testing.T) {
	eng, s := testEngine(t, -1)
	mustRun(t, s, "create table old (a int primary key, b text, c int)")
	// what an older lockd wrote: no rowformat in the catalog file
	st := eng.cat.State()
	st.Tables[st.Table("old").OID].RowFormat = 0
	if err := eng.cat.Flush(); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, "insert into old select g, 'b' || g, g * 10 from generate_series(1, 50) g")
	if err := eng.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	eng2, err := NewEngine(EngineConfig{Settings: eng.settings, Locks: eng.locks, Txns: eng.txns, Store: eng.store, DataDir: eng.dataDir})
	if err != nil {
		t.Fatal(err)
	}
	s2 := eng2.testSession(t)
	old := eng2.cat.State().Table("old")
	if old.RowFormat != 0 {
		t.Fatalf("reloaded table has RowFormat %d", old.RowFormat)
	}
	query := func(q string) string { return queryString(t, s2, q) }
	if got := query("select count(*), sum(a), sum(c), max(b) from old"); got != "50,1275,12750,b9" {
		t.Errorf("old rows: %s", got)
	}
	file := old.RelFile
	mustRun(t, s2, "alter table old drop column b", "insert into old values (51, 510)")
	if got := eng2.cat.State().Table("old"); got.RelFile != file || got.RowFormat != 0 {
		t.Errorf("DROP COLUMN rewrote the table: relfile %d (was %d), RowFormat %d", got.RelFile, file, got.RowFormat)
	}
	if got := query("select * from old where a in (1, 51) order by a"); got != "1,10|51,510" {
		t.Errorf("after DROP COLUMN: %s", got)
	}
	mustRun(t, s2, "alter table old add column d int default 4")
	if got := eng2.cat.State().Table("old"); got.RelFile == file || got.RowFormat != 1 {
		t.Errorf("first ADD COLUMN: relfile %d (was %d), RowFormat %d; want a rewrite into RowFormat 1", got.RelFile, file, got.RowFormat)
	}
	mustRun(t, s2, "alter table old add column e int default 5", "insert into old (a) values (52)")
	if got := query("select count(*), sum(c), sum(d), sum(e) from old"); got != "52,13260,208,260" {
		t.Errorf("after ADD COLUMN: %s", got)
	}
	if got := query("select * from old where a in (1, 52) order by a"); got != "1,10,4,5|52,NULL,4,5" {
		t.Errorf("rows after ADD COLUMN: %s", got)
	}
}

package sql

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/guc"
	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// testEngine is an Engine over a fresh data directory, for tests that
// need the catalog a statement leaves behind.
func testEngine(t testing.TB, fastPathSlots int) (*Engine, *Session) {
	t.Helper()
	dir := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	reg := guc.NewRegistry(logger)
	if err := reg.LoadFiles("", dir); err != nil {
		t.Fatal(err)
	}
	mgr, err := locks.NewManager(locks.Config{MaxConnections: 10, MaxLocksPerTransaction: 64, Partitions: 16, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	mgr.SetFastPathSlots(fastPathSlots)
	txns, err := txn.Open(txn.Config{DataDir: dir, Locks: mgr, MaxProcs: 10 + locks.NumAuxProcs, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	store, err := storage.Open(storage.Config{DataDir: dir, SharedBuffers: 4096, Locks: mgr, Txns: txns, DatabaseOID: catalog.DatabaseOID, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := NewEngine(EngineConfig{Settings: reg, Locks: mgr, Txns: txns, Store: store, DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	gs, errs := reg.NewSession(map[string]string{"user": "postgres", "database": "postgres"})
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	s, err := eng.NewSession(SessionInfo{PID: 1, User: "postgres", Database: "postgres", Settings: gs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return eng, s
}

// run executes a query string as a simple Query message would.
func (s *Session) runQuery(query string) error {
	sts, params, err := s.Parse(query)
	if err != nil {
		s.Fail()
		s.Sync()
		return err
	}
	for _, st := range sts {
		if st, err = s.Resolve(st); err != nil {
			s.Fail()
			break
		}
		if _, err = s.Execute(context.Background(), st, params, func([]types.Datum) error { return nil }); err != nil {
			break
		}
	}
	s.Sync()
	return err
}

// TestPartitionDeparse checks pg_get_partkeydef, pg_get_expr(relpartbound)
// and pg_get_partition_constraintdef against what PostgreSQL 15 printed
// for the same tables (the OID in satisfies_hash_partition is the parent's).
func TestPartitionDeparse(t *testing.T) {
	_, s := testEngine(t, -1)
	ddl := `
create table ri (a int not null, b text) partition by range (a);
create table ri1 partition of ri for values from (minvalue) to (10);
create table ri2 partition of ri for values from (10) to (20);
create table ri3 partition of ri for values from (20) to (maxvalue);
create table r8 (a bigint) partition by range (a);
create table r8a partition of r8 for values from (-5) to (10);
create table r8d partition of r8 default;
create table rt (a text) partition by range (a);
create table rt1 partition of rt for values from ('a') to ('m');
create table rd (d date) partition by range (d);
create table rd1 partition of rd for values from ('2024-01-01') to ('2024-02-01');
create table rts (d timestamp) partition by range (d);
create table rts1 partition of rts for values from ('2024-01-01') to ('2024-02-01 12:30');
create table rtz (d timestamptz) partition by range (d);
create table rtz1 partition of rtz for values from ('2024-01-01 00:00:00+00') to ('2024-02-01 00:00:00+00');
create table rb (c char(3)) partition by range (c);
create table rb1 partition of rb for values from ('a') to ('b');
create table rv (c varchar(10)) partition by list (c);
create table rv1 partition of rv for values in ('x', 'y');
create table l (a int) partition by list (a);
create table l1 partition of l for values in (3, 1, 2);
create table l2 partition of l for values in (null, -4);
create table ld partition of l default;
create table lt (a text) partition by list (a);
create table lt1 partition of lt for values in ('b', 'a');
create table hm (a int, b text) partition by hash (a, b);
create table hm0 partition of hm for values with (modulus 4, remainder 0);
create table hm1 partition of hm for values with (modulus 2, remainder 1);
create table rm (a int, b int, c int) partition by range (a, b, c);
create table rm1 partition of rm for values from (1, 5, minvalue) to (3, maxvalue, maxvalue);
create table rm2 partition of rm for values from (3, maxvalue, maxvalue) to (4, 2, 1);
create table rmd partition of rm default;
create table sub (a int, b int) partition by range (a);
create table sub1 partition of sub for values from (0) to (100) partition by list (b);
create table sub1a partition of sub1 for values in (1);
create table sub1d partition of sub1 default;
create table nm (a numeric) partition by range (a);
create table nm1 partition of nm for values from (1) to (2.5);
create table vc (a varchar(5)) partition by list (a);
create table vc1 partition of vc for values in ('a');
create table q (a int, "B b" int, "select" int) partition by range ("B b", "select");
create table ld2 (a int) partition by list (a);
create table ld2d partition of ld2 default`
	for _, stmt := range strings.Split(ddl, ";") {
		if err := s.runQuery(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	cat := s.Cat()
	hm := strconv.Itoa(int(cat.Table("hm").OID))
	// relname | key | bound | constraint, as PostgreSQL 15 printed them
	want := `
hm|HASH (a, b)||
hm0||FOR VALUES WITH (modulus 4, remainder 0)|satisfies_hash_partition('HM'::oid, 4, 0, a, b)
hm1||FOR VALUES WITH (modulus 2, remainder 1)|satisfies_hash_partition('HM'::oid, 2, 1, a, b)
l|LIST (a)||
l1||FOR VALUES IN (3, 1, 2)|((a IS NOT NULL) AND (a = ANY (ARRAY[3, 1, 2])))
l2||FOR VALUES IN (NULL, '-4')|((a IS NULL) OR (a = '-4'::integer))
ld||DEFAULT|(NOT ((a IS NULL) OR (a = ANY (ARRAY['-4'::integer, 1, 2, 3]))))
ld2d||DEFAULT|
lt1||FOR VALUES IN ('b', 'a')|((a IS NOT NULL) AND (a = ANY (ARRAY['b'::text, 'a'::text])))
nm1||FOR VALUES FROM ('1') TO (2.5)|((a IS NOT NULL) AND (a >= '1'::numeric) AND (a < 2.5))
q|RANGE ("B b", "select")||
r8|RANGE (a)||
r8a||FOR VALUES FROM ('-5') TO ('10')|((a IS NOT NULL) AND (a >= '-5'::bigint) AND (a < '10'::bigint))
r8d||DEFAULT|(NOT ((a IS NOT NULL) AND ((a >= '-5'::bigint) AND (a < '10'::bigint))))
rb1||FOR VALUES FROM ('a  ') TO ('b  ')|((c IS NOT NULL) AND (c >= 'a  '::character(3)) AND (c < 'b  '::character(3)))
rd1||FOR VALUES FROM ('2024-01-01') TO ('2024-02-01')|((d IS NOT NULL) AND (d >= '2024-01-01'::date) AND (d < '2024-02-01'::date))
ri|RANGE (a)||
ri1||FOR VALUES FROM (MINVALUE) TO (10)|((a IS NOT NULL) AND (a < 10))
ri2||FOR VALUES FROM (10) TO (20)|((a IS NOT NULL) AND (a >= 10) AND (a < 20))
ri3||FOR VALUES FROM (20) TO (MAXVALUE)|((a IS NOT NULL) AND (a >= 20))
rm|RANGE (a, b, c)||
rm1||FOR VALUES FROM (1, 5, MINVALUE) TO (3, MAXVALUE, MAXVALUE)|((a IS NOT NULL) AND (b IS NOT NULL) AND (c IS NOT NULL) AND ((a > 1) OR ((a = 1) AND (b >= 5))) AND (a <= 3))
rm2||FOR VALUES FROM (3, MAXVALUE, MAXVALUE) TO (4, 2, 1)|((a IS NOT NULL) AND (b IS NOT NULL) AND (c IS NOT NULL) AND (a > 3) AND ((a < 4) OR ((a = 4) AND (b < 2)) OR ((a = 4) AND (b = 2) AND (c < 1))))
rmd||DEFAULT|(NOT ((a IS NOT NULL) AND (b IS NOT NULL) AND (c IS NOT NULL) AND ((((a > 1) OR ((a = 1) AND (b >= 5))) AND (a <= 3)) OR ((a > 3) AND ((a < 4) OR ((a = 4) AND (b < 2)) OR ((a = 4) AND (b = 2) AND (c < 1)))))))
rt1||FOR VALUES FROM ('a') TO ('m')|((a IS NOT NULL) AND (a >= 'a'::text) AND (a < 'm'::text))
rts1||FOR VALUES FROM ('2024-01-01 00:00:00') TO ('2024-02-01 12:30:00')|((d IS NOT NULL) AND (d >= '2024-01-01 00:00:00'::timestamp without time zone) AND (d < '2024-02-01 12:30:00'::timestamp without time zone))
rtz1||FOR VALUES FROM ('2024-01-01 00:00:00+00') TO ('2024-02-01 00:00:00+00')|((d IS NOT NULL) AND (d >= '2024-01-01 00:00:00+00'::timestamp with time zone) AND (d < '2024-02-01 00:00:00+00'::timestamp with time zone))
rv1||FOR VALUES IN ('x', 'y')|((c IS NOT NULL) AND ((c)::text = ANY (ARRAY['x'::character varying(10), 'y'::character varying(10)])))
sub|RANGE (a)||
sub1|LIST (b)|FOR VALUES FROM (0) TO (100)|((a IS NOT NULL) AND (a >= 0) AND (a < 100))
sub1a||FOR VALUES IN (1)|((a IS NOT NULL) AND (a >= 0) AND (a < 100) AND (b IS NOT NULL) AND (b = 1))
sub1d||DEFAULT|((a IS NOT NULL) AND (a >= 0) AND (a < 100) AND (NOT ((b IS NOT NULL) AND (b = 1))))
vc1||FOR VALUES IN ('a')|((a IS NOT NULL) AND ((a)::text = 'a'::character varying(5)))`
	for _, line := range strings.Split(strings.TrimSpace(want), "\n") {
		f := strings.Split(strings.ReplaceAll(line, "HM", hm), "|")
		tab := cat.Table(f[0])
		if tab == nil {
			t.Errorf("%s: no such table", f[0])
			continue
		}
		cons, _ := catalog.PartitionConstraintDef(cat, tab)
		got := []string{f[0], catalog.PartitionKeyDef(tab), catalog.PartitionBoundDef(tab), cons}
		if strings.Join(got, "|") != strings.Join(f, "|") {
			t.Errorf("\n got %s\nwant %s", strings.Join(got, "|"), strings.Join(f, "|"))
		}
	}
	if got := cat.DefaultPartition(cat.Table("l")); got != cat.Table("ld").OID || cat.DefaultPartition(cat.Table("ri")) != 0 {
		t.Errorf("defaultPartition: %d", got)
	}
	var kids []string
	for _, k := range cat.PartitionChildren(cat.Table("l")) {
		kids = append(kids, k.Name)
	}
	if strings.Join(kids, " ") != "l2 l1 ld" { // PostgreSQL's order: by smallest value, default last
		t.Errorf("partitions of l in bound order: %v", kids)
	}
	// a partitioned table has no storage; its partitions do
	if ri := cat.Table("ri"); ri.RelFile != 0 || ri.Relkind() != 'p' || cat.Table("ri1").RelFile == 0 || cat.Table("ri1").Relkind() != 'r' {
		t.Errorf("relfile/relkind: ri %d %c, ri1 %d %c", ri.RelFile, ri.Relkind(), cat.Table("ri1").RelFile, cat.Table("ri1").Relkind())
	}
}

// TestOldCatalogLoads: a catalog file written before partitioning existed
// (no relkind, partition or bound fields) loads as ordinary tables.
func TestOldCatalogLoads(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "global"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := `{"version": 3, "next_oid": 16387,
 "tables": {"16384": {"oid": 16384, "name": "a", "cols": [{"name": "id", "type": 23, "typmod": -1, "not_null": true}], "relfile": 16384, "indexes": [16385]}},
 "indexes": {"16385": {"oid": 16385, "name": "a_pkey", "table": 16384, "cols": [0], "unique": true, "primary": true, "relfile": 16385}}}`
	if err := os.WriteFile(filepath.Join(dir, "global", "lockd_catalog.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.OpenCatalog(nil, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	st := c.State()
	a, ix := st.Table("a"), st.Indexes[16385]
	if a == nil || a.Partitioned() || a.Relkind() != 'r' || a.Parent != 0 || ix.Relkind() != 'i' || st.PartDesc(a.OID) != nil {
		t.Fatalf("old catalog: %+v %+v", a, ix)
	}
}

func pgParse(q string) (*pg.SelectStmt, error) {
	tree, err := pg.Parse(q)
	if err != nil {
		return nil, err
	}
	return tree.Stmts[0].Stmt.GetSelectStmt(), nil
}

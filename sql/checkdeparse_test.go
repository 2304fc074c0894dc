package sql

import (
	"testing"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/catalog"
)

// TestCheckDefs: pg_get_constraintdef of CHECK expressions, plain and
// pretty, as PostgreSQL 15 printed them for a table of these columns.
func TestCheckDefs(t *testing.T) {
	_, s := testEngine(t, -1)
	mustRun(t, s, "create table d (a int, b int, s smallint, l bigint, n numeric(10,2), f float8, r real, t text, v varchar(10), c char(3), d date, bo bool)")
	tab := s.Cat().Table("d")
	for _, c := range []struct{ expr, plain, pretty string }{
		{"a > 0", "CHECK ((a > 0))", "CHECK (a > 0)"},
		{"a + b > 1 + 2", "CHECK (((a + b) > (1 + 2)))", "CHECK ((a + b) > (1 + 2))"},
		{"a - b - 1 > 0", "CHECK ((((a - b) - 1) > 0))", "CHECK ((a - b - 1) > 0)"},
		{"a between 1 and 10", "CHECK (((a >= 1) AND (a <= 10)))", "CHECK (a >= 1 AND a <= 10)"},
		{"a in (1,2,3)", "CHECK ((a = ANY (ARRAY[1, 2, 3])))", "CHECK (a = ANY (ARRAY[1, 2, 3]))"},
		{"a not in (4,5)", "CHECK ((a <> ALL (ARRAY[4, 5])))", "CHECK (a <> ALL (ARRAY[4, 5]))"},
		{"t in (v, 'x')", "CHECK (((t = (v)::text) OR (t = 'x'::text)))", "CHECK (t = v::text OR t = 'x'::text)"},
		{"v in ('a','b')", "CHECK (((v)::text = ANY ((ARRAY['a'::character varying, 'b'::character varying])::text[])))",
			"CHECK (v::text = ANY (ARRAY['a'::character varying, 'b'::character varying]::text[]))"},
		{"v = 'A'", "CHECK (((v)::text = 'A'::text))", "CHECK (v::text = 'A'::text)"},
		{"c = 'ab'", "CHECK ((c = 'ab'::bpchar))", "CHECK (c = 'ab'::bpchar)"},
		{"c = t", "CHECK (((c)::text = t))", "CHECK (c::text = t)"},
		{"s > a", "CHECK ((s > a))", "CHECK (s > a)"},
		{"n > 0", "CHECK ((n > (0)::numeric))", "CHECK (n > 0::numeric)"},
		{"n > 1.5", "CHECK ((n > 1.5))", "CHECK (n > 1.5)"},
		{"n >= -1", "CHECK ((n >= ('-1'::integer)::numeric))", "CHECK (n >= '-1'::integer::numeric)"},
		{"r > 0", "CHECK ((r > (0)::double precision))", "CHECK (r > 0::double precision)"},
		{"f > n", "CHECK ((f > (n)::double precision))", "CHECK (f > n::double precision)"},
		{"l > 3000000000", "CHECK ((l > '3000000000'::bigint))", "CHECK (l > '3000000000'::bigint)"},
		{"not (a > 0 and b > 0)", "CHECK ((NOT ((a > 0) AND (b > 0))))", "CHECK (NOT (a > 0 AND b > 0))"},
		{"(a > 0 or b > 0) and t is not null", "CHECK ((((a > 0) OR (b > 0)) AND (t IS NOT NULL)))", "CHECK ((a > 0 OR b > 0) AND t IS NOT NULL)"},
		{"a in (1, 2) and l > 0", "CHECK (((a = ANY (ARRAY[1, 2])) AND (l > 0)))", "CHECK ((a = ANY (ARRAY[1, 2])) AND l > 0)"},
		{"lower(v) <> 'x'", "CHECK ((lower((v)::text) <> 'x'::text))", "CHECK (lower(v::text) <> 'x'::text)"},
		{"length(c) > 0", "CHECK ((length(c) > 0))", "CHECK (length(c) > 0)"},
		{"round(a) > 0", "CHECK ((round((a)::double precision) > (0)::double precision))", "CHECK (round(a::double precision) > 0::double precision)"},
		{"coalesce(v, t) <> ''", "CHECK (((COALESCE(v, (t)::character varying))::text <> ''::text))", "CHECK (COALESCE(v, t::character varying)::text <> ''::text)"},
		{"(a + 1)::text <> 'x'", "CHECK ((((a + 1))::text <> 'x'::text))", "CHECK (((a + 1)::text) <> 'x'::text)"},
		{"d > '2020-01-01'", "CHECK ((d > '2020-01-01'::date))", "CHECK (d > '2020-01-01'::date)"},
		{"t is not distinct from 'x'", "CHECK ((NOT (t IS DISTINCT FROM 'x'::text)))", "CHECK (NOT t IS DISTINCT FROM 'x'::text)"},
		{"bo", "CHECK (bo)", "CHECK (bo)"},
		{"case when a > 0 then b > 0 else true end", "CHECK (\nCASE\n    WHEN (a > 0) THEN (b > 0)\n    ELSE true\nEND)",
			"CHECK (\nCASE\n    WHEN a > 0 THEN b > 0\n    ELSE true\nEND)"},
	} {
		tree, err := pg.Parse("SELECT " + c.expr)
		if err != nil {
			t.Fatal(err)
		}
		plain, pretty := s.CheckDefs(tab, tree.Stmts[0].Stmt.GetSelectStmt().TargetList[0].GetResTarget().Val)
		if plain != c.plain || pretty != c.pretty {
			t.Errorf("%s:\n got %s | %s\nwant %s | %s", c.expr, plain, pretty, c.plain, c.pretty)
		}
	}
}

// TestMakeObjectName: PostgreSQL's truncation of generated names to 63
// bytes, the longer part first.
func TestMakeObjectName(t *testing.T) {
	long := "tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt"
	for _, c := range []struct{ n1, n2, label, want string }{
		{"items", "qty", "check", "items_qty_check"},
		{"items", "", "check", "items_check"},
		{long, "cccccccccccccccccccccccccccccc", "check", "tttttttttttttttttttttttttttt_cccccccccccccccccccccccccccc_check"},
		{long, "d", "check1", "tttttttttttttttttttttttttttttttttttttttttttttttttttttt_d_check1"},
	} {
		if got := catalog.MakeObjectName(c.n1, c.n2, c.label); got != c.want {
			t.Errorf("makeObjectName(%q, %q, %q) = %q, want %q", c.n1, c.n2, c.label, got, c.want)
		}
	}
}

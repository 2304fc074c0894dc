package difftest

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func rows(rs ...string) *result {
	res := &result{names: []string{"a", "b"}, oids: []uint32{23, 25}, tag: "SELECT"}
	for _, r := range rs {
		a, b, _ := strings.Cut(r, ",")
		if b == "NULL" {
			b = nullText
		}
		res.rows = append(res.rows, []string{a, b})
	}
	return res
}

func failed(code string) *result {
	return &result{err: &pgconn.PgError{Code: code, Message: "m " + code}}
}

// TestCompare shows what the comparison accepts and what it reports.
func TestCompare(t *testing.T) {
	byA := meta{keys: []int{0}}
	cases := []struct {
		name      string
		m         meta
		lockd, pg *result
		want      outcome
	}{
		{"multiset in another order", meta{}, rows("1,x", "2,y", "2,y"), rows("2,y", "1,x", "2,y"), same},
		{"a row missing", meta{}, rows("1,x", "2,y"), rows("1,x", "2,y", "2,y"), different},
		{"a duplicate instead of another row", meta{}, rows("1,x", "1,x"), rows("1,x", "2,y"), different},
		{"NULL is not the text NULL", meta{}, rows("1,NULL"), &result{names: []string{"a", "b"}, oids: []uint32{23, 25}, tag: "SELECT", rows: [][]string{{"1", "NULL"}}}, different},
		{"ties in another order", byA, rows("1,x", "1,y", "2,z"), rows("1,y", "1,x", "2,z"), same},
		{"sort keys out of order", byA, rows("2,z", "1,x"), rows("1,x", "2,z"), different},
		{"a tie group with other rows", byA, rows("1,x", "1,x", "2,z"), rows("1,x", "1,y", "2,z"), different},
		{"LIMIT may cut the last tie group", meta{keys: []int{0}, limited: true}, rows("1,x", "2,a"), rows("1,x", "2,b"), same},
		{"LIMIT does not excuse the first group", meta{keys: []int{0}, limited: true}, rows("1,x", "2,a"), rows("1,y", "2,a"), different},
		{"OFFSET may cut the first tie group", meta{keys: []int{0}, offset: true}, rows("1,x", "2,a"), rows("1,y", "2,a"), same},
		{"OFFSET does not excuse the last group", meta{keys: []int{0}, offset: true}, rows("1,x", "2,a"), rows("1,x", "2,b"), different},
		{"a cut group keeps its keys", meta{keys: []int{0}, limited: true}, rows("1,x", "3,a"), rows("1,x", "2,a"), different},
		{"column type", meta{}, &result{names: []string{"a"}, oids: []uint32{701}, tag: "SELECT"}, &result{names: []string{"a"}, oids: []uint32{1700}, tag: "SELECT"}, different},
		{"column name", meta{}, &result{names: []string{"?column?"}, oids: []uint32{23}, tag: "SELECT"}, &result{names: []string{"x"}, oids: []uint32{23}, tag: "SELECT"}, different},
		{"the same error code", meta{}, failed("22012"), failed("22012"), same},
		{"another error code", meta{}, failed("42883"), failed("42P18"), different},
		{"an error against rows", meta{}, failed("42601"), rows("1,x"), different},
		{"rows against an error", meta{}, rows("1,x"), failed("0A000"), different},
		{"lockd's 0A000", meta{}, failed("0A000"), rows("1,x"), unsupported},
		{"lockd's 0A000 against another error", meta{}, failed("0A000"), failed("42883"), different},
	}
	for _, c := range cases {
		got, detail := compare(c.m, c.lockd, c.pg)
		if got != c.want {
			t.Errorf("%s: outcome %d, want %d (%s)", c.name, got, c.want, detail)
		}
		if (got == different) != (detail != "") {
			t.Errorf("%s: outcome %d with detail %q", c.name, got, detail)
		}
	}
}

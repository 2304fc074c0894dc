package catalog

import (
	"os"
	"strings"
	"testing"

	"lockd/sql/types"
)

// pgbenchHashRemainders is, for aid 1..1000, the remainder of the
// partition a real PostgreSQL 15 put the row in after
// `pgbench -i -s 2 --partitions=10 --partition-method=hash`
// (partition pgbench_accounts_N has remainder N-1), from
//
//	select string_agg((substr(tableoid::regclass::text, 18)::int - 1)::text, '' order by aid)
//	from pgbench_accounts where aid <= 1000
//
// kept in testdata/pgbench-hash-remainders.txt (the planner's pruning
// tests read it too).
func pgbenchHashRemainders(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/pgbench-hash-remainders.txt")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestPartitionHashMatchesPgbench(t *testing.T) {
	var got strings.Builder
	for aid := int64(1); aid <= 1000; aid++ {
		h := PartitionHash([]types.Type{types.TypeInt4}, []types.Datum{types.IntDatum(aid)})
		got.WriteByte(byte('0' + h%10))
	}
	if want := pgbenchHashRemainders(t); got.String() != want {
		t.Fatalf("aid 1..1000 remainders differ from PostgreSQL 15's:\n got %s\nwant %s", got.String(), want)
	}
}

// TestPartitionHashTypes checks each key type against the remainder
// (modulus 7) PostgreSQL 15 chose for the value: tables
// `create table T (k TYPE) partition by hash (k)` with seven partitions
// `for values with (modulus 7, remainder R)`, one row per value, and
// `select k, tableoid::regclass from T` (timestamptz under TimeZone UTC).
func TestPartitionHashTypes(t *testing.T) {
	fc := &types.FormatCtx{}
	bpchar6 := types.TypeBpchar
	bpchar6.Mod = 6 + 4
	varchar20 := types.TypeVarchar
	varchar20.Mod = 20 + 4
	cases := []struct {
		t    types.Type
		want string // value=remainder;...
	}{
		{types.TypeInt2, "-1=0;-32768=0;5=1;0=4;1=5;32767=5;1000=5"},
		{types.TypeInt4, "-1=0;2147483647=0;5=1;-2147483648=3;123456=3;0=4;1=5"},
		{types.TypeInt8, "-1=0;-9223372036854775808=0;5=1;5000000000=2;-5000000000=2;9223372036854775807=3;0=4;1=5"},
		{types.TypeText, "=1;a=3;abc=3;héllo wörld ünïcode=3;abcdefghijklmnopqrstuvwxyz=4;thirteen byte=4;abcd=5;hello world!=5;ab=6;twelve bytes=6"},
		{varchar20, "=1;a=3;abc=3;abcdefghijklmnopq=4;hello world!=5"},
		{bpchar6, "=1;abcdef=1;a=3;ab  =6"},
		{types.TypeDate, "1999-12-31=0;1970-01-01=0;2024-02-29=2;2000-01-01=4;2100-06-15=6"},
		{types.TypeTimestamp, "2000-01-01 00:00:00=4;2024-02-29 12:34:56.789=4;2100-06-15 01:02:03=5;1999-12-31 23:59:59.5=6;1970-01-01 00:00:00=6"},
		{types.TypeTimestamptz, "2000-01-01 00:00:00+00=4;2024-02-29 12:34:56.789+00=4;1970-01-01 00:00:00+00=6"},
		{types.TypeBool, "false=4;true=5"},
	}
	for _, c := range cases {
		for _, kv := range strings.Split(c.want, ";") {
			i := strings.LastIndexByte(kv, '=')
			v, want := kv[:i], kv[i+1:]
			d, err := types.ParseText(c.t, v, fc)
			if err != nil {
				t.Fatalf("%s %q: %v", c.t.Name, v, err)
			}
			h := PartitionHash([]types.Type{c.t}, []types.Datum{d})
			if got := string(rune('0' + h%7)); got != want {
				t.Errorf("%s %q: remainder %s, PostgreSQL 15 says %s", c.t.Name, v, got, want)
			}
		}
	}
	// two key columns, NULLs skipped: partition by hash (a int, b text), modulus 3
	multi := []struct {
		a, b types.Datum
		want uint64
	}{
		{types.NullDatum, types.NullDatum, 0}, {types.IntDatum(1), types.TextDatum("a"), 1}, {types.IntDatum(2), types.TextDatum("b"), 1},
		{types.IntDatum(3), types.NullDatum, 1}, {types.NullDatum, types.TextDatum("x"), 1}, {types.IntDatum(100), types.TextDatum("hello"), 2},
	}
	for _, m := range multi {
		if got := PartitionHash([]types.Type{types.TypeInt4, types.TypeText}, []types.Datum{m.a, m.b}) % 3; got != m.want {
			t.Errorf("(%v, %v): remainder %d, PostgreSQL 15 says %d", m.a, m.b, got, m.want)
		}
	}
}

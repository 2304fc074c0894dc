package sql

import (
	"strings"
	"testing"
)

// pgbenchHashRemainders is, for aid 1..1000, the remainder of the
// partition a real PostgreSQL 15 put the row in after
// `pgbench -i -s 2 --partitions=10 --partition-method=hash`
// (partition pgbench_accounts_N has remainder N-1), from
//
//	select string_agg((substr(tableoid::regclass::text, 18)::int - 1)::text, '' order by aid)
//	from pgbench_accounts where aid <= 1000
const pgbenchHashRemainders = "" +
	"0615577399188072625713692442363432739905348845046462065577001064126759491849434021800548752388979509647839267350648329219547803403856664340822069455626025444210799544663866587858401949048205149077205108684422423040883361984746452852759078027679114495861526711322617889127577054113794699791154307022603895848691761876675943980099520615583016512042619069329345670699224372245584502056622440900765659553862567212429579662421695214007054151816761347789990370184688057461430472439362660519199816540159923180316244652543626643891651211148157888499283980873807095736294384173368415381769261632371325881693418758262813867029774060151441771724934708720600520433189276837449435879051294160034813324234213069028043766567402676699168489937670662230784761193723645486399441694616649596460230586841066463276890262698265395913086306804593448756722300386998988686131325263710349972219619247570875816852857324801162926186916361725713480300929974471027050154758344722032233950247954229530956358888099718547780418090154"

func TestPartitionHashMatchesPgbench(t *testing.T) {
	var got strings.Builder
	for aid := int64(1); aid <= 1000; aid++ {
		h := partitionHash([]Type{TypeInt4}, []Datum{intDatum(aid)})
		got.WriteByte(byte('0' + h%10))
	}
	if got.String() != pgbenchHashRemainders {
		t.Fatalf("aid 1..1000 remainders differ from PostgreSQL 15's:\n got %s\nwant %s", got.String(), pgbenchHashRemainders)
	}
}

// TestPartitionHashTypes checks each key type against the remainder
// (modulus 7) PostgreSQL 15 chose for the value: tables
// `create table T (k TYPE) partition by hash (k)` with seven partitions
// `for values with (modulus 7, remainder R)`, one row per value, and
// `select k, tableoid::regclass from T` (timestamptz under TimeZone UTC).
func TestPartitionHashTypes(t *testing.T) {
	fc := &formatCtx{}
	bpchar6 := TypeBpchar
	bpchar6.Mod = 6 + 4
	varchar20 := TypeVarchar
	varchar20.Mod = 20 + 4
	cases := []struct {
		t    Type
		want string // value=remainder;...
	}{
		{TypeInt2, "-1=0;-32768=0;5=1;0=4;1=5;32767=5;1000=5"},
		{TypeInt4, "-1=0;2147483647=0;5=1;-2147483648=3;123456=3;0=4;1=5"},
		{TypeInt8, "-1=0;-9223372036854775808=0;5=1;5000000000=2;-5000000000=2;9223372036854775807=3;0=4;1=5"},
		{TypeText, "=1;a=3;abc=3;héllo wörld ünïcode=3;abcdefghijklmnopqrstuvwxyz=4;thirteen byte=4;abcd=5;hello world!=5;ab=6;twelve bytes=6"},
		{varchar20, "=1;a=3;abc=3;abcdefghijklmnopq=4;hello world!=5"},
		{bpchar6, "=1;abcdef=1;a=3;ab  =6"},
		{TypeDate, "1999-12-31=0;1970-01-01=0;2024-02-29=2;2000-01-01=4;2100-06-15=6"},
		{TypeTimestamp, "2000-01-01 00:00:00=4;2024-02-29 12:34:56.789=4;2100-06-15 01:02:03=5;1999-12-31 23:59:59.5=6;1970-01-01 00:00:00=6"},
		{TypeTimestamptz, "2000-01-01 00:00:00+00=4;2024-02-29 12:34:56.789+00=4;1970-01-01 00:00:00+00=6"},
		{TypeBool, "false=4;true=5"},
	}
	for _, c := range cases {
		for _, kv := range strings.Split(c.want, ";") {
			i := strings.LastIndexByte(kv, '=')
			v, want := kv[:i], kv[i+1:]
			d, err := parseText(c.t, v, fc)
			if err != nil {
				t.Fatalf("%s %q: %v", c.t.Name, v, err)
			}
			h := partitionHash([]Type{c.t}, []Datum{d})
			if got := string(rune('0' + h%7)); got != want {
				t.Errorf("%s %q: remainder %s, PostgreSQL 15 says %s", c.t.Name, v, got, want)
			}
		}
	}
	// two key columns, NULLs skipped: partition by hash (a int, b text), modulus 3
	multi := []struct {
		a, b Datum
		want uint64
	}{
		{NullDatum, NullDatum, 0}, {intDatum(1), textDatum("a"), 1}, {intDatum(2), textDatum("b"), 1},
		{intDatum(3), NullDatum, 1}, {NullDatum, textDatum("x"), 1}, {intDatum(100), textDatum("hello"), 2},
	}
	for _, m := range multi {
		if got := partitionHash([]Type{TypeInt4, TypeText}, []Datum{m.a, m.b}) % 3; got != m.want {
			t.Errorf("(%v, %v): remainder %d, PostgreSQL 15 says %d", m.a, m.b, got, m.want)
		}
	}
}

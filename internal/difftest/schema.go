package difftest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"
)

// typ is a column type the generator uses.
type typ uint8

const (
	tInt  typ = iota // integer
	tBig             // bigint
	tText            // text
	tNum             // numeric(8,2): one scale, so equal values print alike
	tBool            // boolean
	tDate            // date
	tTS              // timestamp without time zone
)

var typNames = [...]string{"integer", "bigint", "text", "numeric(8,2)", "boolean", "date", "timestamp"}

func (t typ) String() string { return typNames[t] }

// family groups the types that compare with each other without a cast.
func (t typ) family() int {
	switch t {
	case tInt, tBig, tNum:
		return 0
	case tText:
		return 1
	case tBool:
		return 2
	default:
		return 3 // date and timestamp
	}
}

// numeric reports whether sum and avg take the type.
func (t typ) numeric() bool { return t == tInt || t == tBig || t == tNum }

// ordered reports whether min, max and BETWEEN are used on the type
// (boolean has no min and max in PostgreSQL).
func (t typ) ordered() bool { return t != tBool }

// integral reports whether +, % and / by constants are used on the type.
func (t typ) integral() bool { return t == tInt || t == tBig }

// value is one value of a column: its text form (as PostgreSQL prints it
// and as a text parameter carries it), or NULL.
type value struct {
	null bool
	text string
}

var null = value{null: true}

// lit renders v as an SQL literal of type t. typed literals (date
// '2024-01-01') are written when typed is set, else unknown-type strings
// that the context coerces.
func (v value) lit(t typ, typed bool) string {
	if v.null {
		return "NULL"
	}
	switch t {
	case tText:
		return quote(v.text)
	case tDate, tTS:
		if typed {
			return t.keyword() + " " + quote(v.text)
		}
		return quote(v.text)
	case tBool:
		if v.text == "t" {
			return "true"
		}
		return "false"
	default:
		return v.text
	}
}

func (t typ) keyword() string {
	if t == tTS {
		return "timestamp"
	}
	return "date"
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// textPool is what text columns hold: duplicates, the empty string,
// upper and lower case (bytewise order under the C collation), blanks,
// LIKE's special characters, a quote and a multi-byte character.
var textPool = []string{"", "a", "A", "ab", "abc", "b", "B", "ba", "bb", "c", "z", "a b", "x%_", "O'Neil", "é", "zz top", "ac"}

var baseDate = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

// domain generates the values of a column.
type domain struct {
	t        typ
	nullFrac float64
	lo, hi   int64 // integers: [lo, hi]; numeric: cents; dates: days from baseDate
	big      bool  // bigint: also values beyond int4
}

func (d domain) gen(r *rand.Rand) value {
	if d.nullFrac > 0 && r.Float64() < d.nullFrac {
		return null
	}
	return d.nonNull(r)
}

func (d domain) nonNull(r *rand.Rand) value {
	span := d.hi - d.lo + 1
	n := d.lo + r.Int64N(span)
	switch d.t {
	case tInt:
		return value{text: strconv.FormatInt(n, 10)}
	case tBig:
		if d.big && r.IntN(4) == 0 {
			n = n*1_000_000_007 + int64(r.IntN(3))
		}
		return value{text: strconv.FormatInt(n, 10)}
	case tText:
		if r.IntN(8) == 0 {
			var b strings.Builder
			for range 1 + r.IntN(3) {
				b.WriteByte("abc"[r.IntN(3)])
			}
			return value{text: b.String()}
		}
		return value{text: textPool[r.IntN(len(textPool))]}
	case tNum:
		if r.IntN(3) == 0 {
			n -= n % 100 // whole numbers, to meet integer columns
		}
		return value{text: formatCents(n)}
	case tBool:
		if r.IntN(2) == 0 {
			return value{text: "t"}
		}
		return value{text: "f"}
	case tDate:
		return value{text: baseDate.AddDate(0, 0, int(n)).Format("2006-01-02")}
	default: // tTS
		ts := baseDate.AddDate(0, 0, int(n))
		switch r.IntN(3) {
		case 0: // midnight: equal to the date
		case 1:
			ts = ts.Add(time.Duration(r.IntN(24)) * time.Hour)
		default:
			ts = ts.Add(time.Duration(r.IntN(86400)) * time.Second)
		}
		return value{text: ts.Format("2006-01-02 15:04:05")}
	}
}

// formatCents prints n/100 with two decimals, as numeric(8,2) prints.
func formatCents(n int64) string {
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	return fmt.Sprintf("%s%d.%02d", sign, n/100, n%100)
}

// column is a column of a generated table.
type column struct {
	name    string
	t       typ
	dom     domain
	notNull bool
	unique  bool    // no two rows share a non-null value (ids)
	ndv     int     // distinct non-null values in the generated rows
	vals    []value // the generated rows' values
	canon   map[string]bool
}

// table is a generated table with its rows.
type table struct {
	name    string
	cols    []*column
	pk      []string
	indexes []string // CREATE INDEX statements
	part    *partitioning
	rows    [][]value
	// dml are UPDATE and DELETE statements run after the load, so that
	// scans meet dead rows and moved partition rows.
	dml []string
}

// partitioning describes a partitioned table's key and partitions.
type partitioning struct {
	strategy string // "range" or "list"
	key      string
	parts    []string // "for values ..." clauses, or "default"
}

func (t *table) col(name string) *column {
	for _, c := range t.cols {
		if c.name == name {
			return c
		}
	}
	return nil
}

// schema is one round's tables.
type schema struct {
	tables []*table
}

// genSchema builds 3–5 tables, one or two of them partitioned.
func genSchema(r *rand.Rand) *schema {
	s := &schema{}
	nPlain := 2 + r.IntN(2)
	for i := range nPlain {
		s.tables = append(s.tables, genPlainTable(r, fmt.Sprintf("t%c", 'a'+i)))
	}
	s.tables = append(s.tables, genRangeTable(r, "pr"))
	if r.IntN(3) > 0 {
		s.tables = append(s.tables, genListTable(r, "pl"))
	}
	for _, t := range s.tables {
		genRows(r, t)
		genDML(r, t)
	}
	return s
}

// joinDomains are the integer domains join columns share, from
// selective to not at all.
var joinDomains = []int64{6, 12, 25, 50}

// addColumns adds n random columns to t, named by type and number.
func addColumns(r *rand.Rand, t *table, n int) {
	counts := map[typ]int{}
	for _, c := range t.cols {
		counts[c.t]++
	}
	// every table gets two integer columns and a text column, so joins
	// and text predicates always find partners
	want := []typ{tInt, tInt, tText}
	for len(want) < n {
		want = append(want, []typ{tInt, tBig, tText, tNum, tBool, tDate, tTS, tInt, tNum}[r.IntN(9)])
	}
	for _, ty := range want[:n] {
		counts[ty]++
		prefix := map[typ]string{tInt: "i", tBig: "b", tText: "s", tNum: "n", tBool: "f", tDate: "d", tTS: "ts"}[ty]
		c := &column{name: fmt.Sprintf("%s%d", prefix, counts[ty]), t: ty}
		c.dom = randomDomain(r, ty)
		t.cols = append(t.cols, c)
	}
}

func randomDomain(r *rand.Rand, ty typ) domain {
	d := domain{t: ty, nullFrac: []float64{0, 0.1, 0.25}[r.IntN(3)]}
	switch ty {
	case tInt:
		d.lo, d.hi = -2, joinDomains[r.IntN(len(joinDomains))]
	case tBig:
		d.lo, d.hi, d.big = -3, joinDomains[r.IntN(len(joinDomains))], true
	case tNum:
		d.lo, d.hi = -2000, 5000
	case tDate, tTS:
		d.lo, d.hi = -20, 20+int64(r.IntN(400))
	}
	return d
}

func genPlainTable(r *rand.Rand, name string) *table {
	t := &table{name: name}
	switch r.IntN(4) {
	case 0: // no primary key
		addColumns(r, t, 3+r.IntN(4))
	case 1: // a two-column primary key
		addColumns(r, t, 3+r.IntN(4))
		id := &column{name: "id", t: tInt, notNull: true, unique: true, dom: domain{t: tInt}}
		t.cols = append([]*column{id}, t.cols...)
		t.cols[1].notNull, t.cols[1].dom.nullFrac = true, 0
		t.pk = []string{t.cols[1].name, "id"}
	default:
		ty := tInt
		if r.IntN(4) == 0 {
			ty = tBig
		}
		id := &column{name: "id", t: ty, notNull: true, unique: true, dom: domain{t: ty}}
		t.cols = []*column{id}
		addColumns(r, t, 3+r.IntN(4))
		t.pk = []string{"id"}
	}
	addIndexes(r, t, 1+r.IntN(3))
	return t
}

// genRangeTable builds a table range-partitioned on an integer or a date
// column, with a default partition and sometimes a partition that is
// itself list-partitioned.
func genRangeTable(r *rand.Rand, name string) *table {
	t := &table{name: name}
	byDate := r.IntN(3) == 0
	key := &column{name: "k", t: tInt, dom: domain{t: tInt, lo: -5, hi: 45, nullFrac: 0.05}}
	p := &partitioning{strategy: "range", key: "k"}
	if byDate {
		key = &column{name: "k", t: tDate, dom: domain{t: tDate, lo: -40, hi: 130, nullFrac: 0.05}}
		p.parts = []string{
			"for values from (minvalue) to ('2024-01-01')",
			"for values from ('2024-01-01') to ('2024-02-01')",
			"for values from ('2024-02-01') to ('2024-03-01')",
			"for values from ('2024-03-01') to ('2024-04-01')",
		}
	} else {
		p.parts = []string{
			"for values from (minvalue) to (0)",
			"for values from (0) to (10)",
			"for values from (10) to (20)",
			"for values from (20) to (30)",
		}
	}
	if r.IntN(3) > 0 {
		p.parts = append(p.parts, "default")
	} else {
		// without a default partition the keys must stay inside the bounds
		key.dom.nullFrac = 0
		if byDate {
			key.dom.hi = 90
		} else {
			key.dom.hi = 29
		}
	}
	id := &column{name: "id", t: tInt, notNull: true, unique: true, dom: domain{t: tInt}}
	t.cols = []*column{key, id}
	t.part = p
	if r.IntN(2) == 0 {
		key.notNull, key.dom.nullFrac = true, 0
		t.pk = []string{"k", "id"}
	}
	addColumns(r, t, 2+r.IntN(4))
	addIndexes(r, t, r.IntN(3))
	return t
}

// genListTable builds a table list-partitioned on a text column, with a
// partition that takes NULL and usually a default partition.
func genListTable(r *rand.Rand, name string) *table {
	t := &table{name: name}
	key := &column{name: "s", t: tText, dom: domain{t: tText, nullFrac: 0.1}}
	p := &partitioning{strategy: "list", key: "s", parts: []string{
		"for values in ('a', 'b')",
		"for values in ('ab', 'abc', 'ba')",
		"for values in (NULL, 'c', 'A')",
	}}
	if r.IntN(4) > 0 {
		p.parts = append(p.parts, "default")
	} else {
		key.dom = domain{t: tText, nullFrac: 0.1, lo: 0, hi: 6} // index into the listed values
	}
	id := &column{name: "id", t: tInt, notNull: true, unique: true, dom: domain{t: tInt}}
	t.cols = []*column{id, key}
	t.part = p
	addColumns(r, t, 2+r.IntN(3))
	addIndexes(r, t, r.IntN(3))
	return t
}

// listValues are the keys of genListTable's partitions without a default.
var listValues = []string{"a", "b", "ab", "abc", "ba", "c", "A"}

// addIndexes adds n indexes of one to three columns, ascending or not.
func addIndexes(r *rand.Rand, t *table, n int) {
	seen := map[string]bool{}
	for i := range n {
		k := 1 + r.IntN(3)
		perm := r.Perm(len(t.cols))
		var cols []string
		for _, j := range perm[:min(k, len(perm))] {
			c := t.cols[j].name
			switch r.IntN(8) {
			case 0:
				c += " desc"
			case 1:
				c += " desc nulls last"
			case 2:
				c += " nulls first"
			}
			cols = append(cols, c)
		}
		key := strings.Join(cols, ", ")
		if seen[key] {
			continue
		}
		seen[key] = true
		// unique only where the rows are: with the id column, and on a
		// partitioned table with the partition key as well
		has := func(name string) bool {
			return slices.ContainsFunc(cols, func(c string) bool { return strings.Fields(c)[0] == name })
		}
		unique := ""
		if has("id") && (t.part == nil || has(t.part.key)) && r.IntN(2) == 0 {
			unique = "unique "
		}
		t.indexes = append(t.indexes, fmt.Sprintf("create %sindex %s_i%d on %s (%s)", unique, t.name, i, t.name, key))
	}
}

// genRows fills t with rows: usually 10–110, sometimes none or a few,
// sometimes up to 2,000.
func genRows(r *rand.Rand, t *table) {
	n := 10 + r.IntN(100)
	switch r.IntN(20) {
	case 0:
		n = r.IntN(4) // (nearly) empty
	case 1:
		n = 150 + r.IntN(100)
	case 2, 3:
		// large enough that index scans win on cost
		n = 600 + r.IntN(1400)
	}
	ids := r.Perm(n * 2)
	for i := range n {
		row := make([]value, len(t.cols))
		for j, c := range t.cols {
			switch {
			case c.unique:
				row[j] = value{text: strconv.Itoa(ids[i] + 1)}
			case t.part != nil && t.part.strategy == "list" && c.name == t.part.key && c.dom.hi > 0:
				if r.Float64() < c.dom.nullFrac {
					row[j] = null
				} else {
					row[j] = value{text: listValues[r.IntN(len(listValues))]}
				}
			default:
				row[j] = c.dom.gen(r)
				if c.notNull && row[j].null {
					row[j] = c.dom.nonNull(r)
				}
			}
		}
		t.rows = append(t.rows, row)
	}
	for j, c := range t.cols {
		seen := map[string]bool{}
		for _, row := range t.rows {
			c.vals = append(c.vals, row[j])
			if !row[j].null {
				seen[row[j].text] = true
			}
		}
		c.ndv = len(seen)
	}
}

// genDML writes a few updates and deletes by id ranges, so that scans and
// index scans meet dead and updated rows, and rows of a partitioned table
// move between partitions.
func genDML(r *rand.Rand, t *table) {
	if len(t.rows) == 0 || r.IntN(3) == 0 {
		return
	}
	by := "id"
	if t.col("id") == nil {
		by = t.cols[0].name // an integer column: see addColumns
	}
	for range 1 + r.IntN(3) {
		lo := 1 + r.IntN(2*len(t.rows))
		hi := lo + r.IntN(10)
		if by != "id" {
			lo, hi = r.IntN(10), r.IntN(10)
		}
		switch r.IntN(3) {
		case 0:
			t.dml = append(t.dml, fmt.Sprintf("delete from %s where %s between %d and %d", t.name, by, lo, hi))
		default:
			var c *column
			for range 10 {
				cand := t.cols[r.IntN(len(t.cols))]
				if !cand.unique && !slices.Contains(t.pk, cand.name) {
					c = cand
					break
				}
			}
			if c == nil || (t.part != nil && c.name == t.part.key && !t.part.hasDefault()) {
				continue
			}
			v := c.dom.gen(r)
			if c.notNull && v.null {
				v = c.dom.nonNull(r)
			}
			if t.part != nil && t.part.strategy == "list" && c.name == t.part.key && !t.part.hasDefault() {
				continue
			}
			t.dml = append(t.dml, fmt.Sprintf("update %s set %s = %s where %s between %d and %d", t.name, c.name, v.lit(c.t, true), by, lo, hi))
		}
	}
}

func (p *partitioning) hasDefault() bool { return slices.Contains(p.parts, "default") }

// setupSQL is what creates and fills the schema: one statement a string.
func (s *schema) setupSQL() []string {
	var out []string
	for _, t := range s.tables {
		var defs []string
		for _, c := range t.cols {
			d := c.name + " " + c.t.String()
			if c.notNull && !slices.Contains(t.pk, c.name) {
				d += " not null"
			}
			defs = append(defs, d)
		}
		if t.pk != nil {
			defs = append(defs, "primary key ("+strings.Join(t.pk, ", ")+")")
		}
		ddl := fmt.Sprintf("create table %s (%s)", t.name, strings.Join(defs, ", "))
		if t.part != nil {
			ddl += fmt.Sprintf(" partition by %s (%s)", t.part.strategy, t.part.key)
		}
		out = append(out, ddl)
		if t.part != nil {
			for i, p := range t.part.parts {
				name := fmt.Sprintf("%s_%d", t.name, i)
				if p == "default" {
					name = t.name + "_def"
				}
				out = append(out, fmt.Sprintf("create table %s partition of %s %s", name, t.name, p))
			}
		}
		out = append(out, t.indexes...)
		for i := 0; i < len(t.rows); i += 50 {
			var vals []string
			for _, row := range t.rows[i:min(i+50, len(t.rows))] {
				var f []string
				for j, v := range row {
					f = append(f, v.lit(t.cols[j].t, false))
				}
				vals = append(vals, "("+strings.Join(f, ", ")+")")
			}
			out = append(out, fmt.Sprintf("insert into %s values %s", t.name, strings.Join(vals, ", ")))
		}
		out = append(out, t.dml...)
	}
	// Half the schemas are vacuumed too, so index-only scans meet pages the
	// visibility map calls all-visible (and, on the others, dead rows).
	// Decided by the rows, not the random stream, which the queries use.
	rows := 0
	for _, t := range s.tables {
		rows += len(t.rows)
	}
	if rows%2 == 0 {
		out = append(out, "vacuum analyze")
	} else {
		out = append(out, "analyze")
	}
	return out
}

// dropSQL drops the schema's tables.
func (s *schema) dropSQL() string {
	var names []string
	for _, t := range s.tables {
		names = append(names, t.name)
	}
	return "drop table if exists " + strings.Join(names, ", ")
}

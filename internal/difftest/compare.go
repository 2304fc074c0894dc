package difftest

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// result is what a client saw of one statement: an error, or columns
// (names and type OIDs) and rows in the text format.
type result struct {
	err   *pgconn.PgError
	other error // an error without an SQLSTATE (the connection broke)
	names []string
	oids  []uint32
	rows  [][]string // nullText for NULL
	tag   string
}

// nullText stands for NULL in rows: no text value is invalid UTF-8.
const nullText = "\xff"

func newResult(fields []pgconn.FieldDescription, rows [][][]byte, tag pgconn.CommandTag, err error) *result {
	res := &result{}
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			res.err = pe
		} else {
			res.other = err
		}
		return res
	}
	for _, f := range fields {
		res.names = append(res.names, f.Name)
		res.oids = append(res.oids, f.DataTypeOID)
	}
	for _, r := range rows {
		row := make([]string, len(r))
		for i, v := range r {
			if v == nil {
				row[i] = nullText
			} else {
				row[i] = string(v)
			}
		}
		res.rows = append(res.rows, row)
	}
	res.tag = tag.String()
	return res
}

func (r *result) failed() bool { return r.err != nil || r.other != nil }

func (r *result) String() string {
	switch {
	case r.err != nil:
		return fmt.Sprintf("ERROR %s: %s", r.err.Code, r.err.Message)
	case r.other != nil:
		return "error: " + r.other.Error()
	}
	return fmt.Sprintf("%d rows", len(r.rows))
}

func fmtRow(row []string) string {
	var f []string
	for _, v := range row {
		if v == nullText {
			f = append(f, "NULL")
		} else {
			f = append(f, strconv.Quote(v))
		}
	}
	return "(" + strings.Join(f, ", ") + ")"
}

func rowKey(row []string) string { return strings.Join(row, "\x00") }

// outcome classifies a comparison.
type outcome int

const (
	same        outcome = iota
	unsupported         // lockd answered 0A000 where PostgreSQL did not fail
	different
)

// compare compares lockd's result with PostgreSQL's for a query of shape
// m. It returns the outcome and, for a difference, a description.
func compare(m meta, lockd, pg *result) (outcome, string) {
	switch {
	case lockd.err != nil && lockd.err.Code == "0A000" && !pg.failed():
		return unsupported, ""
	case lockd.failed() || pg.failed():
		if lockd.err != nil && pg.err != nil && lockd.err.Code == pg.err.Code {
			return same, ""
		}
		return different, fmt.Sprintf("lockd: %s\nPostgreSQL: %s", lockd, pg)
	}
	if len(lockd.rows) != len(pg.rows) {
		// first: without rows, a prepared statement's execution has no
		// column descriptions to compare
		return different, compareRows(m, lockd.rows, pg.rows)
	}
	if len(lockd.names) != len(pg.names) {
		return different, fmt.Sprintf("columns: lockd %q, PostgreSQL %q", lockd.names, pg.names)
	}
	for i := range pg.names {
		if lockd.names[i] != pg.names[i] || lockd.oids[i] != pg.oids[i] {
			return different, fmt.Sprintf("column %d: lockd %q (type oid %d), PostgreSQL %q (type oid %d)",
				i+1, lockd.names[i], lockd.oids[i], pg.names[i], pg.oids[i])
		}
	}
	if lockd.tag != pg.tag {
		return different, fmt.Sprintf("command tag: lockd %q, PostgreSQL %q", lockd.tag, pg.tag)
	}
	if d := compareRows(m, lockd.rows, pg.rows); d != "" {
		return different, d
	}
	return same, ""
}

// compareRows compares the rows: as multisets without sort keys, else by
// runs of equal sort keys (see the package comment).
func compareRows(m meta, lockd, pg [][]string) string {
	if len(lockd) != len(pg) {
		return fmt.Sprintf("row count: lockd %d, PostgreSQL %d\n%s", len(lockd), len(pg), multisetDiff(lockd, pg))
	}
	if len(m.keys) == 0 {
		return multisetDiff(lockd, pg)
	}
	key := func(row []string) string {
		k := make([]string, len(m.keys))
		for i, p := range m.keys {
			k[i] = row[p]
		}
		return rowKey(k)
	}
	for i := range pg {
		if key(lockd[i]) != key(pg[i]) {
			return fmt.Sprintf("order: row %d has sort keys %s in lockd, %s in PostgreSQL (keys are output columns %v)\n%s",
				i+1, fmtRow(keysOf(lockd[i], m.keys)), fmtRow(keysOf(pg[i], m.keys)), plus1(m.keys), sideBySide(lockd, pg, i))
		}
	}
	// the same key sequence: compare each run of equal keys
	for start := 0; start < len(pg); {
		end := start + 1
		for end < len(pg) && key(pg[end]) == key(pg[start]) {
			end++
		}
		cut := (start == 0 && m.offset) || (end == len(pg) && m.limited)
		if !cut {
			if d := multisetDiff(lockd[start:end], pg[start:end]); d != "" {
				return fmt.Sprintf("rows %d–%d (equal sort keys %s) differ\n%s", start+1, end, fmtRow(keysOf(pg[start], m.keys)), d)
			}
		}
		start = end
	}
	return ""
}

func keysOf(row []string, keys []int) []string {
	var out []string
	for _, p := range keys {
		out = append(out, row[p])
	}
	return out
}

func plus1(ps []int) []int {
	var out []int
	for _, p := range ps {
		out = append(out, p+1)
	}
	return out
}

// multisetDiff describes the rows one side has more often than the other
// ("" when the multisets are equal).
func multisetDiff(lockd, pg [][]string) string {
	count := map[string]int{}
	rows := map[string][]string{}
	for _, r := range lockd {
		count[rowKey(r)]++
		rows[rowKey(r)] = r
	}
	for _, r := range pg {
		count[rowKey(r)]--
		rows[rowKey(r)] = r
	}
	var onlyL, onlyP []string
	for k, n := range count {
		for ; n > 0; n-- {
			onlyL = append(onlyL, fmtRow(rows[k]))
		}
		for ; n < 0; n++ {
			onlyP = append(onlyP, fmtRow(rows[k]))
		}
	}
	if len(onlyL) == 0 && len(onlyP) == 0 {
		return ""
	}
	slices.Sort(onlyL)
	slices.Sort(onlyP)
	var b strings.Builder
	show := func(what string, rs []string) {
		fmt.Fprintf(&b, "%d rows only in %s", len(rs), what)
		for i, r := range rs {
			if i == 5 {
				b.WriteString("\n  ...")
				break
			}
			b.WriteString("\n  " + r)
		}
		b.WriteString("\n")
	}
	show("lockd", onlyL)
	show("PostgreSQL", onlyP)
	return strings.TrimSuffix(b.String(), "\n")
}

// sideBySide shows the rows around row i of both results.
func sideBySide(lockd, pg [][]string, i int) string {
	var b strings.Builder
	for j := max(0, i-2); j < min(len(pg), i+3); j++ {
		mark := " "
		if j == i {
			mark = ">"
		}
		fmt.Fprintf(&b, "%s %d lockd      %s\n%s %d PostgreSQL %s\n", mark, j+1, fmtRow(lockd[j]), mark, j+1, fmtRow(pg[j]))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

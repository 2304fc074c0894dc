package sqlscript

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// outcome is what one step got back, in the order it arrived.
type outcome struct {
	parts  []part
	err    error
	status byte // ReadyForQuery status after the step
}

// part is one notice or one result.
type part struct {
	notice *pgconn.Notice
	result *result
	err    error // an error of a statement \gexec ran
	times  int   // \gexec: the outcome before this ran this many times
}

type result struct {
	columns []string
	rows    [][][]byte // nil: NULL
	copyOut []byte     // data of a COPY TO STDOUT
	isCopy  bool
	tag     string
	params  []string // \parse: parameter and column types
	fields  []string
}

// renderer prints outcomes; pids maps the backend pids of the case's
// sessions to their names.
type renderer struct {
	pids    map[uint32]string
	verbose bool
}

func (r *renderer) render(o *outcome) []string {
	var out []string
	for _, p := range o.parts {
		switch {
		case p.notice != nil:
			out = append(out, r.message((*pgconn.PgError)(p.notice))...)
		case p.err != nil:
			out = append(out, r.err(p.err)...)
		case p.times > 0:
			out = append(out, fmt.Sprintf("(%d times)", p.times))
		default:
			out = append(out, r.result(p.result)...)
		}
	}
	if o.err != nil {
		out = append(out, r.err(o.err)...)
	}
	return out
}

func (r *renderer) err(err error) []string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return r.message(pe)
	}
	return []string{"error: " + r.substitute(err.Error())}
}

func (r *renderer) result(res *result) []string {
	var out []string
	if res.params != nil || res.fields != nil {
		list := func(l []string) string {
			if len(l) == 0 {
				return "(none)"
			}
			return strings.Join(l, ", ")
		}
		return append(out, "parameters: "+list(res.params), "columns: "+list(res.fields))
	}
	if res.isCopy {
		data := string(res.copyOut)
		for data != "" {
			line, rest, found := strings.Cut(data, "\n")
			if found {
				line += "\n"
			}
			out = append(out, "> "+strconv.Quote(line))
			data = rest
		}
	}
	if res.columns != nil {
		out = append(out, r.table(res)...)
	}
	if res.tag != "" {
		out = append(out, res.tag)
	}
	return out
}

// table lays out rows under their column names, padded to the widest
// value of each column.
func (r *renderer) table(res *result) []string {
	cells := make([][]string, 0, len(res.rows)+1)
	head := make([]string, len(res.columns))
	pidCol := make([]bool, len(res.columns))
	for i, c := range res.columns {
		head[i] = quoteValue(c)
		pidCol[i] = strings.HasSuffix(c, "pid") || strings.HasSuffix(c, "pids")
	}
	cells = append(cells, head)
	for _, row := range res.rows {
		line := make([]string, len(row))
		for i, v := range row {
			switch {
			case v == nil:
				line[i] = "NULL"
			case i < len(pidCol) && pidCol[i]:
				line[i] = r.pidNames(quoteValue(string(v)))
			default:
				line[i] = quoteValue(string(v))
			}
		}
		cells = append(cells, line)
	}
	width := make([]int, len(res.columns))
	for _, line := range cells {
		for i, c := range line {
			if i < len(width) {
				width[i] = max(width[i], utf8.RuneCountInString(c))
			}
		}
	}
	var out []string
	join := func(line []string, sep string, pad func(s string, w int) string) string {
		var b strings.Builder
		for i, c := range line {
			if i > 0 {
				b.WriteString(sep)
			}
			if i < len(line)-1 {
				c = pad(c, width[i])
			}
			b.WriteString(c)
		}
		return b.String()
	}
	spaces := func(s string, w int) string { return s + strings.Repeat(" ", w-utf8.RuneCountInString(s)) }
	out = append(out, join(head, " | ", spaces))
	rule := make([]string, len(width))
	for i, w := range width {
		rule[i] = strings.Repeat("-", max(w, 1))
	}
	out = append(out, join(rule, "-+-", func(s string, _ int) string { return s }))
	for _, line := range cells[1:] {
		out = append(out, join(line, " | ", spaces))
	}
	return out
}

var digitsRE = regexp.MustCompile(`[0-9]+`)

// pidNames replaces the pids of the case's sessions in a pid column
// (a number, or an array of them) by $NAME.
func (r *renderer) pidNames(v string) string {
	return digitsRE.ReplaceAllStringFunc(v, func(d string) string {
		if n, err := strconv.ParseUint(d, 10, 32); err == nil {
			if name, ok := r.pids[uint32(n)]; ok {
				return "$" + name
			}
		}
		return d
	})
}

var processRE = regexp.MustCompile(`(?i)\bprocess ([0-9]+)`)

// substitute replaces session pids named as "process N" in a message.
func (r *renderer) substitute(msg string) string {
	return processRE.ReplaceAllStringFunc(msg, func(m string) string {
		word, num, _ := strings.Cut(m, " ")
		return word + " " + r.pidNames(num)
	})
}

// message prints an error or a notice, as psql's default verbosity does
// (and its verbose one for the fields that name objects).
func (r *renderer) message(pe *pgconn.PgError) []string {
	field := func(name, v string) []string {
		if v == "" {
			return nil
		}
		v = r.substitute(v)
		return []string{name + ": " + strings.ReplaceAll(v, "\n", "\n  ")}
	}
	sev := pe.Severity
	if sev == "" {
		sev = pe.SeverityUnlocalized
	}
	var out []string
	out = append(out, field(sev+" "+pe.Code, pe.Message)...)
	out = append(out, field("DETAIL", pe.Detail)...)
	out = append(out, field("HINT", pe.Hint)...)
	if pe.Position != 0 {
		out = append(out, fmt.Sprintf("POSITION: %d", pe.Position))
	}
	out = append(out, field("CONTEXT", pe.Where)...)
	if r.verbose {
		out = append(out, field("SCHEMA NAME", pe.SchemaName)...)
		out = append(out, field("TABLE NAME", pe.TableName)...)
		out = append(out, field("COLUMN NAME", pe.ColumnName)...)
		out = append(out, field("DATATYPE NAME", pe.DataTypeName)...)
		out = append(out, field("CONSTRAINT NAME", pe.ConstraintName)...)
	}
	// one line per output line: a message with a newline continues
	// indented
	var lines []string
	for _, l := range out {
		lines = append(lines, strings.Split(l, "\n")...)
	}
	return lines
}

// quoteValue prints a value as it is unless that could be misread: then
// Go-quoted.
func quoteValue(v string) string {
	if needsQuotes(v) {
		return strconv.Quote(v)
	}
	return v
}

func needsQuotes(v string) bool {
	if v == "" || v == "NULL" || v[0] == '"' || v[0] == '<' || v[0] == '>' || v[0] == '#' || v[0] == '$' {
		return true
	}
	first, _ := utf8.DecodeRuneInString(v)
	last, _ := utf8.DecodeLastRuneInString(v)
	if unicode.IsSpace(first) || unicode.IsSpace(last) {
		return true
	}
	for _, c := range v {
		if c == '|' || c == utf8.RuneError || !unicode.IsPrint(c) && c != ' ' {
			return true
		}
	}
	return false
}

package sql

import (
	"bytes"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
)

// CopySource feeds COPY FROM STDIN: each call returns the next CopyData
// payload (valid until the next call), or done at CopyDone. The server
// implements it over the protocol.
type CopySource func() (data []byte, done bool, err error)

// CopyInColumns reports, for a COPY FROM STDIN statement, how many
// columns the client must send (0 for any other statement).
func (st *Stmt) CopyInColumns() int { return st.copyCols }

// SetCopySource installs the data source for the next COPY FROM STDIN.
func (s *Session) SetCopySource(src CopySource) { s.copySrc = src }

type copyPlan struct {
	t       *TableDef
	targets []int
	indexes []*IndexDef
	delim   byte
	null    string
	types   []Type
}

func (s *Session) compileCopy(c *pg.CopyStmt, st *Stmt) error {
	if c.Query != nil || !c.IsFrom {
		return pgerr.NotSupported("COPY TO is not supported yet")
	}
	if c.Filename != "" || c.IsProgram {
		return pgerr.NotSupported("COPY from a file or program is not supported yet")
	}
	if c.WhereClause != nil {
		return pgerr.NotSupported("COPY FROM ... WHERE is not supported")
	}
	t, err := s.resolveTable(c.Relation)
	if err != nil {
		return err
	}
	p := &copyPlan{t: t, indexes: s.cat().tableIndexes(t), delim: '\t', null: `\N`}
	for _, o := range c.Options {
		de := o.GetDefElem()
		switch de.Defname {
		case "format":
			if f := strings.ToLower(defString(de)); f != "text" {
				return pgerr.NotSupported("COPY format \"%s\" is not supported yet", f)
			}
		case "freeze":
			// accepted: lockd has no visibility map to freeze into
		case "delimiter":
			d := defString(de)
			if len(d) != 1 {
				return pgerr.NotSupported("COPY delimiter must be a single one-byte character")
			}
			p.delim = d[0]
		case "null":
			p.null = defString(de)
		case "encoding":
			if e := strings.ToUpper(defString(de)); e != "UTF8" && e != "UTF-8" {
				return pgerr.NotSupported("COPY encoding %s is not supported", e)
			}
		default:
			return pgerr.NotSupported("COPY option \"%s\" is not supported yet", de.Defname)
		}
	}
	if len(c.Attlist) == 0 {
		for i := range t.Cols {
			p.targets = append(p.targets, i)
		}
	}
	for _, a := range c.Attlist {
		name := nodeName(a)
		i := t.colIndex(name)
		if i < 0 {
			return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
		}
		p.targets = append(p.targets, i)
	}
	for _, i := range p.targets {
		p.types = append(p.types, t.Cols[i].Type())
	}
	st.rels = tableLocks(s.cat(), t, locks.RowExclusiveLock)
	st.Tag = "COPY"
	st.writes = true
	st.copyCols = len(p.targets)
	st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
		n, err := s.execCopyIn(ec, p)
		if err != nil {
			return "", err
		}
		return "COPY " + strconv.FormatInt(n, 10), nil
	}
	return nil
}

func (s *Session) execCopyIn(ec *evalCtx, p *copyPlan) (int64, error) {
	src := s.copySrc
	s.copySrc = nil
	if src == nil {
		return 0, pgerr.New(pgerr.ProtocolViolation, "COPY FROM STDIN without a data source")
	}
	var n, line int64
	var pending []byte
	row := make([]Datum, len(p.t.Cols))
	fields := make([]string, 0, len(p.targets))
	handle := func(l []byte) (bool, error) {
		line++
		if len(l) > 0 && l[len(l)-1] == '\r' {
			l = l[:len(l)-1]
		}
		if string(l) == `\.` {
			return true, nil
		}
		fields = fields[:0]
		var err error
		if fields, err = splitCopyLine(l, p.delim, fields); err != nil {
			return false, copyErr(err, p.t.Name, line)
		}
		if len(fields) < len(p.targets) {
			return false, copyErr(pgerr.New(pgerr.BadCopyFileFormat, "missing data for column \"%s\"", p.t.Cols[p.targets[len(fields)]].Name), p.t.Name, line)
		}
		if len(fields) > len(p.targets) {
			return false, copyErr(pgerr.New(pgerr.BadCopyFileFormat, "extra data after last expected column"), p.t.Name, line)
		}
		for i := range row {
			row[i] = NullDatum
		}
		for j, f := range fields {
			c := p.targets[j]
			if f == "\x00null" {
				continue
			}
			d, err := parseText(p.types[j], f, &s.fc)
			if err != nil {
				return false, copyErr(err, p.t.Name, line)
			}
			if p.types[j].OID == OIDBpchar || p.types[j].OID == OIDVarchar {
				if d, err = coerceString(p.types[j], f, false); err != nil {
					return false, copyErr(err, p.t.Name, line)
				}
			}
			row[c] = d
		}
		for i := range p.t.Cols {
			if p.t.Cols[i].Default != "" && !contains(p.targets, i) {
				a := newAnalyzer(s, nil)
				e, err := s.compileDefault(a, &p.t.Cols[i])
				if err != nil {
					return false, err
				}
				if row[i], err = e.eval(ec, nil); err != nil {
					return false, err
				}
			}
		}
		if err := s.insertRow(ec, p.t, p.indexes, row); err != nil {
			return false, copyErr(err, p.t.Name, line)
		}
		n++
		return false, nil
	}
	ended := false
	for {
		data, done, err := src()
		if err != nil {
			return 0, err
		}
		if done {
			break
		}
		if ended {
			continue
		}
		pending = append(pending, data...)
		for {
			i := bytes.IndexByte(pending, '\n')
			if i < 0 {
				break
			}
			end, err := handle(pending[:i])
			pending = pending[i+1:]
			if err != nil {
				drain(src)
				return 0, err
			}
			if end {
				ended = true
				break
			}
		}
		if len(pending) == 0 {
			pending = pending[:0:0]
		}
		if n&1023 == 0 && ec.ctx.Err() != nil {
			drain(src)
			return 0, ec.ctx.Err()
		}
	}
	if !ended && len(pending) > 0 {
		if _, err := handle(pending); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// drain consumes the rest of the client's COPY data after an error.
func drain(src CopySource) {
	for {
		_, done, err := src()
		if done || err != nil {
			return
		}
	}
}

func copyErr(err error, table string, line int64) error {
	e := pgerr.From(err)
	if e.Code == pgerr.InternalError {
		return e
	}
	ce := *e
	ce.Detail = strings.TrimSpace(ce.Detail)
	if ce.Detail == "" {
		ce.Detail = "COPY " + table + ", line " + strconv.FormatInt(line, 10)
	}
	return &ce
}

// splitCopyLine splits one text-format line into de-escaped fields; a
// NULL field is returned as "\x00null".
func splitCopyLine(l []byte, delim byte, out []string) ([]string, error) {
	var b strings.Builder
	raw := true
	isNull := false
	flush := func() {
		if isNull {
			out = append(out, "\x00null")
		} else {
			out = append(out, b.String())
		}
		b.Reset()
		raw, isNull = true, false
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		switch {
		case c == delim:
			flush()
		case c == '\\' && i+1 < len(l):
			i++
			e := l[i]
			switch e {
			case 'N':
				if raw && (i+1 == len(l) || l[i+1] == delim) {
					isNull = true
					continue
				}
				b.WriteByte('N')
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for k := 0; k < 2 && i+1 < len(l) && l[i+1] >= '0' && l[i+1] <= '7'; k++ {
						i++
						v = v*8 + int(l[i]-'0')
					}
					b.WriteByte(byte(v))
				} else {
					b.WriteByte(e)
				}
			}
			raw = false
		default:
			b.WriteByte(c)
			raw = false
		}
	}
	flush()
	return out, nil
}

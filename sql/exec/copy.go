package exec

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// CopySource feeds COPY FROM STDIN: each call returns the next CopyData
// payload (valid until the next call), or done at CopyDone. The server
// implements it over the protocol.
type CopySource func() (data []byte, done bool, err error)

// CopySink receives COPY TO STDOUT output. Begin is called once before
// any data (the server sends CopyOutResponse); Data with each chunk.
type CopySink interface {
	Begin(format int16, columns int) error
	Data(chunk []byte) error
}

// copyOptions are COPY's format options (PostgreSQL's defaults).
type copyOptions struct {
	format byte // 't' text, 'c' csv, 'b' binary
	delim  byte
	null   string
	quote  byte
	escape byte
	header bool
	freeze bool // FREEZE: COPY FROM writes frozen rows (copymulti.go)
}

func parseCopyOptions(opts []*pg.Node) (copyOptions, error) {
	o := copyOptions{format: 't'}
	var delim, null, quote, escape *string
	for _, n := range opts {
		de := n.GetDefElem()
		v := analyze.DefString(de)
		switch de.Defname {
		case "format":
			switch strings.ToLower(v) {
			case "text":
				o.format = 't'
			case "csv":
				o.format = 'c'
			case "binary":
				o.format = 'b'
			default:
				return o, pgerr.New(pgerr.InvalidParameterValue, "COPY format \"%s\" not recognized", v)
			}
		case "freeze":
			o.freeze = true
			if de.Arg != nil {
				b, ok := types.ParseBool(v)
				if !ok {
					return o, pgerr.New(pgerr.SyntaxError, "freeze requires a Boolean value")
				}
				o.freeze = b
			}
		case "delimiter":
			delim = &v
		case "null":
			null = &v
		case "quote":
			quote = &v
		case "escape":
			escape = &v
		case "header":
			if de.Arg == nil {
				o.header = true
			} else {
				b, ok := types.ParseBool(v)
				if !ok {
					return o, pgerr.New(pgerr.SyntaxError, "header requires a Boolean value")
				}
				o.header = b
			}
		case "encoding":
			if e := strings.ToUpper(v); e != "UTF8" && e != "UTF-8" {
				return o, pgerr.NotSupported("COPY encoding %s is not supported", v)
			}
		default:
			return o, pgerr.NotSupported("COPY option \"%s\" is not supported", de.Defname)
		}
	}
	o.delim = '\t'
	o.null = `\N`
	if o.format == 'c' {
		o.delim, o.null, o.quote, o.escape = ',', "", '"', '"'
	}
	if o.format == 'b' && (delim != nil || null != nil || quote != nil || escape != nil || o.header) {
		return o, pgerr.New(pgerr.SyntaxError, "cannot specify DELIMITER, NULL, QUOTE, ESCAPE or HEADER in BINARY mode")
	}
	if delim != nil {
		if len(*delim) != 1 {
			return o, pgerr.NotSupported("COPY delimiter must be a single one-byte character")
		}
		o.delim = (*delim)[0]
	}
	if null != nil {
		o.null = *null
	}
	if quote != nil || escape != nil {
		if o.format != 'c' {
			return o, pgerr.NotSupported("COPY quote and escape are available only in CSV mode")
		}
		if quote != nil {
			if len(*quote) != 1 {
				return o, pgerr.NotSupported("COPY quote must be a single one-byte character")
			}
			o.quote, o.escape = (*quote)[0], (*quote)[0]
		}
		if escape != nil {
			if len(*escape) != 1 {
				return o, pgerr.NotSupported("COPY escape must be a single one-byte character")
			}
			o.escape = (*escape)[0]
		}
	}
	if o.header && o.format == 't' {
		return o, pgerr.NotSupported("COPY HEADER available only in CSV mode")
	}
	return o, nil
}

type copyPlan struct {
	opts    copyOptions
	t       *catalog.TableDef
	targets []int
	indexes []*catalog.IndexDef
	types   []types.Type
	names   []string
	file    string           // server-side file, else STDIN/STDOUT
	query   *plan.SelectPlan // COPY (query) TO
	route   *plan.PartRouter // COPY FROM into a partitioned table or a partition (routing.go)
	ixLocks plan.ExecIndexLocks
}

// dataPath resolves a server-side COPY file name: relative names are
// relative to the data directory, as PostgreSQL's are.
func (s *Executor) dataPath(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(s.DataDir, name)
}

func (s *Executor) CompileCopy(c *pg.CopyStmt, params *[]types.Type, st *plan.Stmt) error {
	if c.IsProgram {
		return pgerr.NotSupported("COPY to or from a program is not supported")
	}
	if c.WhereClause != nil {
		return pgerr.NotSupported("COPY FROM ... WHERE is not supported")
	}
	opts, err := parseCopyOptions(c.Options)
	if err != nil {
		return err
	}
	p := &copyPlan{opts: opts, file: c.Filename}
	if c.Query != nil {
		if c.IsFrom {
			return pgerr.New(pgerr.SyntaxError, "COPY FROM does not accept a query")
		}
		sel := c.Query.GetSelectStmt()
		if sel == nil {
			return pgerr.NotSupported("COPY (statement) TO supports only SELECT")
		}
		sp, err := s.CompileSelect(sel, params)
		if err != nil {
			return err
		}
		p.query = sp
		for _, col := range sp.Cols {
			p.types = append(p.types, col.Type)
			p.names = append(p.names, col.Name)
		}
		st.Rels = sp.Rels
	} else {
		t, err := s.ResolveTable(c.Relation)
		if err != nil {
			return err
		}
		if p.route, err = s.copyPartitioned(c, t); err != nil {
			return err
		}
		p.t = t
		p.indexes = s.Cat().TableIndexes(t)
		if len(c.Attlist) == 0 {
			for i := range t.Cols {
				p.targets = append(p.targets, i)
			}
		}
		for _, a := range c.Attlist {
			name := analyze.NodeName(a)
			i := t.ColIndex(name)
			if i < 0 {
				return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", name, t.Name)
			}
			p.targets = append(p.targets, i)
		}
		for _, i := range p.targets {
			p.types = append(p.types, t.Cols[i].Type())
			p.names = append(p.names, t.Cols[i].Name)
		}
		mode := locks.AccessShareLock
		if c.IsFrom {
			mode = locks.RowExclusiveLock
		}
		// the table only: COPY plans nothing, and COPY FROM's executor
		// locks the indexes while it runs (execIndexLocks)
		st.Rels = []expr.RelLock{{Oid: t.OID, Mode: mode}}
	}
	st.Tag = "COPY"
	st.CopyCols = len(p.types)
	if opts.format == 'b' {
		st.CopyFormat = 1
	}
	if c.IsFrom {
		st.Writes = true
		st.FromStdin = p.file == ""
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			n, err := s.execCopyFrom(ec, p)
			if err != nil {
				return "", err
			}
			return "COPY " + strconv.FormatInt(n, 10), nil
		}
		return nil
	}
	st.ToStdout = p.file == ""
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		n, err := s.execCopyTo(ec, p)
		if err != nil {
			return "", err
		}
		return "COPY " + strconv.FormatInt(n, 10), nil
	}
	return nil
}

// fileSource reads a server-side file in chunks.
func fileSource(f *os.File) CopySource {
	buf := make([]byte, 64<<10)
	return func() ([]byte, bool, error) {
		n, err := f.Read(buf)
		if n > 0 {
			return buf[:n], false, nil
		}
		if errors.Is(err, io.EOF) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, pgerr.New("58030", "could not read from COPY file: %v", err)
		}
		return nil, false, nil
	}
}

func (s *Executor) execCopyFrom(ec *expr.EvalCtx, p *copyPlan) (int64, error) {
	var src CopySource
	if p.file != "" {
		f, err := os.Open(s.dataPath(p.file))
		if err != nil {
			return 0, pgerr.New(pgerr.UndefinedFile, "could not open file \"%s\" for reading: %s", p.file, errText(err))
		}
		defer f.Close()
		src = fileSource(f)
	} else {
		src = s.CopySrc
		s.CopySrc = nil
		if src == nil {
			return 0, pgerr.New(pgerr.ProtocolViolation, "COPY FROM STDIN without a data source")
		}
	}
	if p.opts.freeze {
		if err := s.checkCopyFreeze(p.t); err != nil {
			drain(src)
			return 0, err
		}
	}
	r := &copyReader{src: src, opts: p.opts}
	row := make([]types.Datum, len(p.t.Cols))
	var defaults []expr.Expr
	for i := range p.t.Cols {
		var d expr.Expr
		if p.t.Cols[i].Default != "" && !slices.Contains(p.targets, i) {
			var err error
			if d, err = s.CompileDefault(plan.NewAnalyzer(&s.Backend, nil), &p.t.Cols[i]); err != nil {
				return 0, err
			}
		}
		defaults = append(defaults, d)
	}
	var n, line int64
	if p.route != nil {
		s.routeBegin(p.route)
		defer s.routeEnd(p.route)
	}
	if !p.t.Partitioned() {
		defer s.closeIndexLocks(&p.ixLocks)
		if err := s.openIndexLocks(ec, &p.ixLocks, p.t); err != nil {
			return 0, err
		}
	}
	var batch *copyBatch
	if copyBatchable(defaults) {
		batch = &copyBatch{name: p.t.Name, frozen: p.opts.freeze}
	}
	fields := make([]copyField, 0, len(p.targets))
	for {
		var err error
		var more bool
		fields, more, err = r.next(fields[:0])
		line++
		if err != nil {
			drain(src)
			return 0, copyErr(err, r.lineContext(p.t.Name, line))
		}
		if !more {
			if batch != nil {
				if err := s.flushCopyBatch(ec, batch); err != nil {
					drain(src)
					return 0, err
				}
			}
			break
		}
		if p.opts.header && line == 1 {
			continue
		}
		if len(fields) < len(p.targets) {
			drain(src)
			return 0, copyErr(pgerr.New(pgerr.BadCopyFileFormat, "missing data for column \"%s\"", p.names[len(fields)]), r.lineContext(p.t.Name, line))
		}
		if len(fields) > len(p.targets) {
			drain(src)
			return 0, copyErr(pgerr.New(pgerr.BadCopyFileFormat, "extra data after last expected column"), r.lineContext(p.t.Name, line))
		}
		for i := range row {
			row[i] = types.NullDatum
			if defaults[i] != nil {
				if row[i], err = defaults[i].Eval(ec, nil); err != nil {
					drain(src)
					return 0, err
				}
			}
		}
		for j, f := range fields {
			if f.null {
				continue
			}
			t := p.types[j]
			dst := &row[p.targets[j]] // NULL: targets have no default
			if p.opts.format != 'b' {
				// most integers, stored without a Datum to copy
				if v, ok := types.ParseIntBytes(t, f.data); ok {
					dst.SetInt(v)
					continue
				}
			}
			var d types.Datum
			if p.opts.format == 'b' {
				d, err = types.DecodeBinary(t, f.data)
				if err == nil && (t.OID == types.OIDBpchar || t.OID == types.OIDVarchar) {
					d, err = types.CoerceString(t, d.S, false)
				}
			} else {
				// char(n) and varchar(n) are coerced by the parse
				d, err = types.ParseTextBytes(t, f.data, &s.Format)
			}
			if err != nil {
				drain(src)
				return 0, copyErr(err, r.columnContext(p.t.Name, line, p.names[j], f.data))
			}
			*dst = d
		}
		switch {
		case batch != nil:
			err = s.bufferCopyRow(ec, p, batch, row, line)
		case p.route != nil:
			err = s.routeInsert(ec, p.route, row)
		default:
			_, err = s.InsertRow(ec, p.t, p.indexes, row)
		}
		if err != nil {
			drain(src)
			return 0, copyErr(err, r.lineContext(p.t.Name, line))
		}
		n++
		if n&1023 == 0 && ec.Ctx.Err() != nil {
			drain(src)
			return 0, ec.Ctx.Err()
		}
	}
	return n, nil
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return "No such file or directory"
		case errors.Is(err, os.ErrPermission):
			return "Permission denied"
		}
		return pe.Err.Error()
	}
	return err.Error()
}

// checkCopyFreeze is COPY FREEZE's precondition (CopyFrom's): a table
// with storage of its own (not a partitioned one), no cursor or
// suspended portal whose snapshot could see the frozen rows, and storage
// that t got in the current subtransaction, which no other transaction
// can read until this one commits.
func (s *Executor) checkCopyFreeze(t *catalog.TableDef) error {
	if t.Partitioned() {
		return pgerr.NotSupported("cannot perform COPY FREEZE on a partitioned table")
	}
	if s.ReadyPortals != nil && s.ReadyPortals() {
		return pgerr.New(pgerr.InvalidTransactionState, "cannot perform COPY FREEZE because of prior transaction activity")
	}
	if !s.NewStorageInSubxact(t.OID) {
		return pgerr.New(pgerr.ObjectNotInPrerequisiteState, "cannot perform COPY FREEZE because the table was not created or truncated in the current subtransaction")
	}
	return nil
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

// copyErr gives err the context where (PostgreSQL's CopyFromErrorCallback)
// unless it has one.
func copyErr(err error, where string) error {
	e := pgerr.From(err)
	if e.Code == pgerr.InternalError || e.Code == pgerr.QueryCanceled || e.Code == pgerr.ProtocolViolation || e.Where != "" {
		return e
	}
	ce := *e
	ce.Where = where
	return &ce
}

// maxCopyDataDisplay is how much of an input line or value an error's
// context shows (MAX_COPY_DATA_DISPLAY), cut at a character boundary and
// followed by "...".
const maxCopyDataDisplay = 100

func limitPrintout(b []byte) string {
	if len(b) <= maxCopyDataDisplay {
		return string(b)
	}
	n := maxCopyDataDisplay
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "..."
}

// lineContext is the context of an error about the row read at line: the
// line's text too where the format is text or CSV and the line was read
// whole.
func (r *copyReader) lineContext(table string, line int64) string {
	where := "COPY " + table + ", line " + strconv.FormatInt(line, 10)
	if r.opts.format == 'b' || r.line == nil {
		return where
	}
	return where + ": \"" + limitPrintout(r.line) + "\""
}

// columnContext is the context of an error converting the value of
// column col read at line.
func (r *copyReader) columnContext(table string, line int64, col string, value []byte) string {
	where := "COPY " + table + ", line " + strconv.FormatInt(line, 10) + ", column " + col
	if r.opts.format == 'b' {
		return where
	}
	return where + ": \"" + limitPrintout(value) + "\""
}

// execCopyTo writes a table's rows or a query's result.
func (s *Executor) execCopyTo(ec *expr.EvalCtx, p *copyPlan) (int64, error) {
	var w io.Writer
	var bw *bufio.Writer
	if p.file != "" {
		f, err := os.OpenFile(s.dataPath(p.file), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return 0, pgerr.New(pgerr.UndefinedFile, "could not open file \"%s\" for writing: %s", p.file, errText(err))
		}
		defer f.Close()
		bw = bufio.NewWriterSize(f, 64<<10)
		w = bw
	} else {
		sink := s.CopySink
		s.CopySink = nil
		if sink == nil {
			return 0, pgerr.New(pgerr.ProtocolViolation, "COPY TO STDOUT without a destination")
		}
		format := int16(0)
		if p.opts.format == 'b' {
			format = 1
		}
		if err := sink.Begin(format, len(p.types)); err != nil {
			return 0, err
		}
		w = sinkWriter{sink}
	}
	var buf []byte
	if p.opts.format == 'b' {
		buf = append(buf, binarySignature...)
		buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0)
	}
	if p.opts.header {
		for i, name := range p.names {
			if i > 0 {
				buf = append(buf, p.opts.delim)
			}
			buf = appendCSV(buf, name, p.opts, false)
		}
		buf = append(buf, '\n')
	}
	var n int64
	vals := make([]types.Datum, len(p.types))
	emit := func(row []types.Datum) error {
		var err error
		if buf, err = s.appendCopyRow(buf, p, row); err != nil {
			return err
		}
		n++
		if len(buf) >= 32<<10 || p.file == "" {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
		return nil
	}
	var err error
	if p.query != nil {
		err = s.RunSelect(ec, p.query, emit)
	} else {
		err = s.ScanTableTIDs(ec, plan.NewTableSource(p.t, p.t.Name), func(_ storage.TID, row []types.Datum) error {
			for j, c := range p.targets {
				vals[j] = row[c]
			}
			return emit(vals)
		})
	}
	if err != nil {
		return 0, err
	}
	if p.opts.format == 'b' {
		buf = append(buf, 0xff, 0xff)
	}
	if len(buf) > 0 {
		if _, err := w.Write(buf); err != nil {
			return 0, err
		}
	}
	if bw != nil {
		if err := bw.Flush(); err != nil {
			return 0, pgerr.New("58030", "could not write to COPY file: %v", err)
		}
	}
	return n, nil
}

type sinkWriter struct{ s CopySink }

func (w sinkWriter) Write(b []byte) (int, error) {
	if err := w.s.Data(b); err != nil {
		return 0, err
	}
	return len(b), nil
}

// appendCopyRow formats one row in the plan's format.
func (s *Executor) appendCopyRow(buf []byte, p *copyPlan, row []types.Datum) ([]byte, error) {
	if p.opts.format == 'b' {
		buf = binary.BigEndian.AppendUint16(buf, uint16(len(row)))
		for i, d := range row {
			if d.Null {
				buf = binary.BigEndian.AppendUint32(buf, math.MaxUint32)
				continue
			}
			at := len(buf)
			buf = append(buf, 0, 0, 0, 0)
			var err error
			if buf, err = types.AppendBinary(buf, p.types[i], d); err != nil {
				return nil, err
			}
			binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		}
		return buf, nil
	}
	for i, d := range row {
		if i > 0 {
			buf = append(buf, p.opts.delim)
		}
		if d.Null {
			buf = append(buf, p.opts.null...)
			continue
		}
		text := string(types.AppendText(nil, p.types[i], d, &s.Format))
		if p.opts.format == 'c' {
			buf = appendCSV(buf, text, p.opts, text == p.opts.null)
			continue
		}
		for j := 0; j < len(text); j++ {
			switch c := text[j]; c {
			case '\\':
				buf = append(buf, '\\', '\\')
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				if c == p.opts.delim {
					buf = append(buf, '\\')
				}
				buf = append(buf, c)
			}
		}
	}
	return append(buf, '\n'), nil
}

// appendCSV quotes a value when CSV needs it (delimiter, quote, newline,
// or a value that would read back as NULL).
func appendCSV(buf []byte, v string, o copyOptions, force bool) []byte {
	need := force || v == "" && o.null == "" || strings.ContainsAny(v, "\r\n") ||
		strings.IndexByte(v, o.delim) >= 0 || strings.IndexByte(v, o.quote) >= 0 || v == `\.`
	if !need {
		return append(buf, v...)
	}
	buf = append(buf, o.quote)
	for i := 0; i < len(v); i++ {
		if v[i] == o.quote || v[i] == o.escape {
			buf = append(buf, o.escape)
		}
		buf = append(buf, v[i])
	}
	return append(buf, o.quote)
}

// copyPartitioned checks COPY against a partitioned table or a partition
// and sets up row routing for COPY FROM.
func (s *Executor) copyPartitioned(c *pg.CopyStmt, t *catalog.TableDef) (*plan.PartRouter, error) {
	if t.Partitioned() && !c.IsFrom {
		return nil, pgerr.New(pgerr.WrongObjectType, "cannot copy from partitioned table \"%s\"", t.Name).
			WithHint("Try the COPY (SELECT ...) TO variant.")
	}
	if !c.IsFrom || !t.Partitioned() && t.Parent == 0 {
		return nil, nil
	}
	return plan.NewPartRouter(t), nil
}

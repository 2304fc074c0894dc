package sqlscript

import (
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// session is one client connection of a case.
type session struct {
	name string
	conn *pgx.Conn
	pid  uint32

	mu      sync.Mutex
	notices []*pgconn.Notice // guarded by mu: the connection's reader adds, the statement's goroutine takes

	pending *pending // a statement started with waits; only the case's goroutine touches it
}

// pending is a statement running in its own goroutine.
type pending struct {
	done   chan *outcome
	lineNo int
}

func (s *session) addNotice(n *pgconn.Notice) {
	s.mu.Lock()
	s.notices = append(s.notices, n)
	s.mu.Unlock()
}

// takeNotices returns the notices that arrived since the last call.
func (s *session) takeNotices() []part {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []part
	for _, n := range s.notices {
		out = append(out, part{notice: n})
	}
	s.notices = nil
	return out
}

var (
	metaRE     = regexp.MustCompile(`(?s)^(.*?)\s\\(bind|parse|gexec)(?:\s+(.*))?$`)
	copyFromRE = regexp.MustCompile(`(?is)^\s*copy\b.*\bfrom\s+stdin\b`)
	copyToRE   = regexp.MustCompile(`(?is)^\s*copy\b.*\bto\s+stdout\b`)
	copyBinRE  = regexp.MustCompile(`^(\S+)\s*\(([^)]*)\)$`)
)

// run sends one statement's text and reads everything it gets back.
func (s *session) run(ctx context.Context, text string, input []string) *outcome {
	o := &outcome{}
	pc := s.conn.PgConn()
	o.err = s.send(ctx, o, text, input)
	o.parts = append(o.parts, s.takeNotices()...)
	o.status = pc.TxStatus()
	return o
}

func (s *session) send(ctx context.Context, o *outcome, text string, input []string) error {
	pc := s.conn.PgConn()
	trimmed := strings.TrimSpace(text)
	if meta, ok := strings.CutPrefix(trimmed, `\`); ok {
		cmd, args, _ := strings.Cut(meta, " ")
		switch cmd {
		case "bind_named":
			p, err := splitParams(args)
			if err != nil || len(p) == 0 {
				return fmt.Errorf(`want: \bind_named NAME [PARAM...]`)
			}
			return s.readOne(o, pc.ExecPrepared(ctx, p[0], params(p[1:]), nil, nil))
		case "close":
			if err := pc.Deallocate(ctx, strings.TrimSpace(args)); err != nil {
				return err
			}
			o.parts = append(o.parts, part{result: &result{tag: "CLOSE"}})
			return nil
		case "copy_binary":
			m := copyBinRE.FindStringSubmatch(strings.TrimSpace(args))
			if m == nil {
				return fmt.Errorf(`want: \copy_binary TABLE (COLUMN, ...)`)
			}
			var cols []string
			for _, c := range strings.Split(m[2], ",") {
				cols = append(cols, strings.TrimSpace(c))
			}
			var rows [][]any
			for _, l := range input {
				r, err := splitLiterals(l)
				if err != nil {
					return fmt.Errorf("row %s: %v", l, err)
				}
				rows = append(rows, r)
			}
			n, err := s.conn.CopyFrom(ctx, pgx.Identifier{m[1]}, cols, pgx.CopyFromRows(rows))
			o.parts = append(o.parts, s.takeNotices()...)
			if err != nil {
				return err
			}
			o.parts = append(o.parts, part{result: &result{tag: "COPY " + strconv.FormatInt(n, 10)}})
			return nil
		}
		return fmt.Errorf(`unknown meta-command \%s`, cmd)
	}
	if m := metaRE.FindStringSubmatch(text); m != nil {
		sql := m[1]
		p, err := splitParams(m[3])
		if err != nil {
			return err
		}
		if m[2] == "gexec" {
			if len(p) != 0 {
				return fmt.Errorf(`\gexec takes no arguments`)
			}
			return s.gexec(ctx, o, sql)
		}
		if m[2] == "parse" {
			if len(p) != 1 {
				return fmt.Errorf(`want: SQL \parse NAME`)
			}
			sd, err := pc.Prepare(ctx, p[0], sql, nil)
			o.parts = append(o.parts, s.takeNotices()...)
			if err != nil {
				return err
			}
			res := &result{params: []string{}, fields: []string{}}
			for _, oid := range sd.ParamOIDs {
				res.params = append(res.params, s.typeName(oid))
			}
			for _, f := range sd.Fields {
				res.fields = append(res.fields, quoteValue(f.Name)+" "+s.typeName(f.DataTypeOID))
			}
			o.parts = append(o.parts, part{result: res})
			return nil
		}
		return s.readOne(o, pc.ExecParams(ctx, sql, params(p), nil, nil, nil))
	}
	if len(input) > 0 || copyFromRE.MatchString(text) {
		data, err := copyInput(input)
		if err != nil {
			return err
		}
		tag, err := pc.CopyFrom(ctx, strings.NewReader(data), text)
		o.parts = append(o.parts, s.takeNotices()...)
		if err != nil {
			return err
		}
		o.parts = append(o.parts, part{result: &result{tag: tag.String()}})
		return nil
	}
	if copyToRE.MatchString(text) {
		var buf bytes.Buffer
		tag, err := pc.CopyTo(ctx, &buf, text)
		o.parts = append(o.parts, s.takeNotices()...)
		res := &result{isCopy: true, copyOut: buf.Bytes()}
		if err == nil {
			res.tag = tag.String()
		}
		if err == nil || buf.Len() > 0 {
			o.parts = append(o.parts, part{result: res})
		}
		return err
	}
	mrr := pc.Exec(ctx, text)
	for mrr.NextResult() {
		if err := s.readOne(o, mrr.ResultReader()); err != nil {
			break
		}
	}
	return mrr.Close()
}

// gexec runs the query, then each value of its result as a statement of
// its own, as psql's \gexec does. Only the generated statements' outcomes
// are printed, a run of equal ones once with its count.
func (s *session) gexec(ctx context.Context, o *outcome, sql string) error {
	gen := &outcome{}
	rr := s.conn.PgConn().ExecParams(ctx, sql, nil, nil, nil, nil)
	if err := s.readOne(gen, rr); err != nil {
		o.parts = append(o.parts, gen.parts...)
		return err
	}
	var stmts []string
	for _, p := range gen.parts {
		if p.result == nil {
			continue
		}
		for _, row := range p.result.rows {
			for _, v := range row {
				if v != nil {
					stmts = append(stmts, string(v))
				}
			}
		}
	}
	var runs []*gexecRun
	for _, st := range stmts {
		one := &outcome{}
		one.err = s.send(ctx, one, st, nil)
		one.parts = append(one.parts, s.takeNotices()...)
		if k := len(runs); k > 0 && sameOutcome(runs[k-1].o, one) {
			runs[k-1].n++
			continue
		}
		runs = append(runs, &gexecRun{o: one, n: 1})
	}
	for _, r := range runs {
		o.parts = append(o.parts, r.o.parts...)
		if r.o.err != nil {
			o.parts = append(o.parts, part{err: r.o.err})
		}
		if r.n > 1 {
			o.parts = append(o.parts, part{times: r.n})
		}
	}
	return nil
}

type gexecRun struct {
	o *outcome
	n int
}

// sameOutcome compares two outcomes as they print.
func sameOutcome(a, b *outcome) bool {
	r := &renderer{}
	return equal(r.render(a), r.render(b))
}

// readOne reads one statement's result.
func (s *session) readOne(o *outcome, rr *pgconn.ResultReader) error {
	res := &result{}
	if fds := rr.FieldDescriptions(); len(fds) > 0 {
		res.columns = make([]string, len(fds))
		for i, f := range fds {
			res.columns[i] = f.Name
		}
	}
	for rr.NextRow() {
		vals := rr.Values()
		row := make([][]byte, len(vals))
		for i, v := range vals {
			if v != nil {
				row[i] = append([]byte{}, v...)
			}
		}
		res.rows = append(res.rows, row)
	}
	tag, err := rr.Close()
	o.parts = append(o.parts, s.takeNotices()...)
	if err != nil {
		return err
	}
	res.tag = tag.String()
	o.parts = append(o.parts, part{result: res})
	return nil
}

func (s *session) typeName(oid uint32) string {
	if t, ok := s.conn.TypeMap().TypeForOID(oid); ok {
		return t.Name
	}
	return strconv.FormatUint(uint64(oid), 10)
}

func params(p []string) [][]byte {
	out := make([][]byte, len(p))
	for i, v := range p {
		out[i] = []byte(v)
	}
	return out
}

// start runs a statement in its own goroutine.
func (s *session) start(text string, input []string, lineNo int) *pending {
	p := &pending{done: make(chan *outcome, 1), lineNo: lineNo}
	s.pending = p
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p.done <- s.run(ctx, text, input)
	}()
	return p
}

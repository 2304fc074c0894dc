package sql

import (
	"fmt"
	"slices"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
)

// Named prepared statements: the extended protocol's named Parse and SQL
// PREPARE share one namespace per session, as in PostgreSQL; EXECUTE and
// DEALLOCATE reach both, and pg_prepared_statements lists them with the
// plan cache's counts (plancache.go).

// preparedStmt is one named prepared statement.
type preparedStmt struct {
	name     string
	st       *Stmt
	text     string // the query string that prepared it
	prepared time.Time
	fromSQL  bool
}

// PrepareNamed analyses query as the named prepared statement name (a
// Parse message with a name). A name in use is 42P05.
func (s *Session) PrepareNamed(name, query string, paramOIDs []uint32) (*Stmt, error) {
	if _, ok := s.prepared[name]; ok {
		return nil, duplicatePrepared(name)
	}
	st, err := s.Prepare(query, paramOIDs)
	if err != nil {
		return nil, err
	}
	// its own copy: Prepare may return a plan shared through its cache,
	// and a named statement keeps plan cache counts
	c := *st
	c.named = true
	s.addPrepared(name, &c, query, false)
	return &c, nil
}

// Prepared returns the named prepared statement name.
func (s *Session) Prepared(name string) (*Stmt, bool) {
	p, ok := s.prepared[name]
	if !ok {
		return nil, false
	}
	return p.st, true
}

// ClosePrepared drops the named prepared statement name, if there is one
// (a Close message).
func (s *Session) ClosePrepared(name string) { delete(s.prepared, name) }

func (s *Session) addPrepared(name string, st *Stmt, text string, fromSQL bool) {
	if s.prepared == nil {
		s.prepared = map[string]*preparedStmt{}
	}
	s.prepared[name] = &preparedStmt{name: name, st: st, text: text, prepared: time.Now(), fromSQL: fromSQL}
}

func duplicatePrepared(name string) error {
	return pgerr.New(pgerr.DuplicatePreparedStatement, "prepared statement \"%s\" already exists", name)
}

func noPrepared(name string) error {
	return pgerr.New(pgerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", name)
}

// compilePrepare is PREPARE name [(type, ...)] AS statement. The statement
// is analysed when PREPARE runs, against the catalog as it is then.
func (s *Session) compilePrepare(p *pg.PrepareStmt, text string, params *[]Type, st *Stmt) error {
	a := newAnalyzer(&s.Backend, params)
	declared := make([]Type, len(p.Argtypes))
	for i, n := range p.Argtypes {
		t, err := a.typeName(n.GetTypeName())
		if err != nil {
			return err
		}
		declared[i] = t
	}
	inner, ok := preparedText(text)
	if !ok {
		return pgerr.NotSupported("this form of PREPARE is not supported")
	}
	st.Tag = "PREPARE"
	st.noSnapshot = true
	s.foldedVolatile = true // keeps it out of the plan caches: each PREPARE analyses afresh
	st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
		if _, ok := s.prepared[p.Name]; ok {
			return "", duplicatePrepared(p.Name)
		}
		ps := append([]Type(nil), declared...)
		pst, err := s.analyze(p.Query, inner, &ps)
		if err != nil {
			return "", err
		}
		finishParams(ps)
		pst.params = ps
		pst.named = true
		full := text
		if s.queryText != "" {
			full = s.queryText
		}
		s.addPrepared(p.Name, pst, full, true)
		return "PREPARE", nil
	}
	return nil
}

// preparedText is the statement of PREPARE name [(types)] AS statement:
// what follows the first AS outside parentheses.
func preparedText(text string) (string, bool) {
	sc, err := pg.Scan(text)
	if err != nil {
		return "", false
	}
	depth := 0
	for _, t := range sc.Tokens {
		switch t.Token {
		case pg.Token_ASCII_40: // (
			depth++
		case pg.Token_ASCII_41: // )
			depth--
		case pg.Token_AS:
			if depth == 0 && int(t.End) <= len(text) {
				return strings.TrimSpace(text[t.End:]), true
			}
		}
	}
	return "", false
}

// compileExecute is EXECUTE name [(value, ...)]: the prepared
// statement's rows and command tag, its parameters the values converted
// to their declared types as an assignment would.
func (s *Session) compileExecute(x *pg.ExecuteStmt, params *[]Type, st *Stmt) error {
	p, ok := s.prepared[x.Name]
	if !ok {
		return noPrepared(x.Name)
	}
	inner := p.st
	if len(x.Params) != len(inner.params) {
		return pgerr.New(pgerr.SyntaxError, "wrong number of parameters for prepared statement \"%s\"", x.Name).
			WithDetail(fmt.Sprintf("Expected %d parameters but got %d.", len(inner.params), len(x.Params)))
	}
	a := newAnalyzer(&s.Backend, params)
	args := make([]expr, len(x.Params))
	for i, n := range x.Params {
		e, err := a.expr(n)
		if err != nil {
			return err
		}
		want := inner.params[i]
		switch {
		case isUnknown(e):
			e, err = a.coerceUnknown(e, want)
		case e.typ().OID == want.OID:
		case assignable(e.typ(), want):
			e, err = a.castTo(e, want, false)
		default:
			return posErr(pgerr.New(pgerr.DatatypeMismatch, "parameter $%d of type %s cannot be coerced to the expected type %s", i+1, e.typ().Name, want.Name).
				WithHint("You will need to rewrite or cast the expression."), exprLocation(n))
		}
		if err != nil {
			if pe, ok := err.(*pgerr.Error); ok {
				return posErr(pe, exprLocation(n))
			}
			return err
		}
		args[i] = e
	}
	st.Tag = inner.Tag
	st.cols = inner.cols
	st.noSnapshot = true    // the prepared statement takes its own
	s.foldedVolatile = true // resolved by name: never reused from a plan cache
	st.run = func(ec *evalCtx, emit func([]Datum) error) (string, error) {
		if cur, ok := s.prepared[x.Name]; !ok || cur != p {
			// deallocated (or replaced) since this EXECUTE was analysed
			return "", noPrepared(x.Name)
		}
		vals := make([]Datum, len(args))
		for i, e := range args {
			v, err := e.eval(ec, nil)
			if err != nil {
				return "", err
			}
			vals[i] = v
		}
		return s.runStmt(ec.ctx, inner, vals, emit)
	}
	return nil
}

// compileDeallocate is DEALLOCATE [PREPARE] name | ALL.
func (s *Session) compileDeallocate(d *pg.DeallocateStmt, st *Stmt) {
	st.Tag = "DEALLOCATE"
	st.noSnapshot = true
	s.foldedVolatile = true
	st.run = func(*evalCtx, func([]Datum) error) (string, error) {
		if d.Isall || d.Name == "" {
			clear(s.prepared)
			return "DEALLOCATE ALL", nil
		}
		if _, ok := s.prepared[d.Name]; !ok {
			return "", noPrepared(d.Name)
		}
		delete(s.prepared, d.Name)
		return "DEALLOCATE", nil
	}
}

// oidPgPreparedStatements is the view's OID in PostgreSQL 15.
const oidPgPreparedStatements = 12095

func (e *Engine) preparedStatementsView() *view {
	return &view{
		name: "pg_prepared_statements",
		oid:  oidPgPreparedStatements,
		cols: cols(oidPgPreparedStatements,
			"name", TypeText, "statement", TypeText, "prepare_time", TypeTimestamptz,
			"parameter_types", Type{OID: 2211, Len: -1, Mod: -1, Name: "regtype[]"}, "from_sql", TypeBool,
			"generic_plans", TypeInt8, "custom_plans", TypeInt8),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			own := e.session(ec.s.pid)
			names := make([]string, 0, len(own.prepared))
			for n := range own.prepared {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				p := own.prepared[n]
				paramTypes := Datum{A: make([]Datum, 0, len(p.st.params))}
				for _, t := range p.st.params {
					paramTypes.A = append(paramTypes.A, intDatum(int64(t.OID)))
				}
				row := []Datum{textDatum(p.name), textDatum(p.text), tsDatum(p.prepared), paramTypes, boolDatum(p.fromSQL),
					intDatum(int64(p.st.genericPlans)), intDatum(int64(p.st.customPlans))}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// compileDiscard is DISCARD ALL | PLANS | SEQUENCES | TEMP. DISCARD ALL
// (a connection pooler's reset) is, as in PostgreSQL, RESET ALL,
// DEALLOCATE ALL, pg_advisory_unlock_all() and DISCARD PLANS; lockd has no
// temporary tables and no LISTEN, so DISCARD TEMP has nothing to drop.
func (s *Session) compileDiscard(d *pg.DiscardStmt, st *Stmt) {
	st.noSnapshot = true
	s.foldedVolatile = true
	switch d.Target {
	case pg.DiscardMode_DISCARD_ALL:
		st.Tag = "DISCARD ALL"
		st.noBlock = "DISCARD ALL"
	case pg.DiscardMode_DISCARD_PLANS:
		st.Tag = "DISCARD PLANS"
	case pg.DiscardMode_DISCARD_SEQUENCES:
		st.Tag = "DISCARD SEQUENCES"
	default:
		st.Tag = "DISCARD TEMP"
	}
	tag := st.Tag
	st.run = func(*evalCtx, func([]Datum) error) (string, error) {
		switch d.Target {
		case pg.DiscardMode_DISCARD_ALL:
			s.gucs.ResetAll()
			s.refreshFormat()
			clear(s.prepared)
			s.locks.ReleaseSessionLocks(s.proc, true)
			s.discardPlans()
			discardSequences(&s.Backend) // seqfuncs.go
		case pg.DiscardMode_DISCARD_PLANS:
			s.discardPlans()
		case pg.DiscardMode_DISCARD_SEQUENCES:
			discardSequences(&s.Backend)
		}
		return tag, nil
	}
}

// discardPlans forgets every cached plan: the session's plan caches, and
// the cached generic plans of its prepared statements, which plan afresh
// at their next execution (PostgreSQL's ResetPlanCache).
func (s *Session) discardPlans() {
	clear(s.cache)
	clear(s.prepCache)
	clear(s.shapeCache)
	for _, p := range s.prepared {
		p.st.genericCached = false
	}
}

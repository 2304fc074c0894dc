package sql

import (
	"fmt"
	"slices"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/plan"
	"lockd/sql/sysviews"
	"lockd/sql/types"
)

// Named prepared statements: the extended protocol's named Parse and SQL
// PREPARE share one namespace per session, as in PostgreSQL; EXECUTE and
// DEALLOCATE reach both, and pg_prepared_statements lists them with the
// plan cache's counts (sql/plan/plancache.go).

// preparedStmt is one named prepared statement.
type preparedStmt struct {
	name     string
	st       *plan.Stmt
	text     string // the query string that prepared it
	prepared time.Time
	fromSQL  bool
}

// PrepareNamed analyses query as the named prepared statement name (a
// Parse message with a name). A name in use is 42P05.
func (s *Session) PrepareNamed(name, query string, paramOIDs []uint32) (*plan.Stmt, error) {
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
	c.Named = true
	s.addPrepared(name, &c, query, false)
	return &c, nil
}

// Prepared returns the named prepared statement name.
func (s *Session) Prepared(name string) (*plan.Stmt, bool) {
	p, ok := s.prepared[name]
	if !ok {
		return nil, false
	}
	return p.st, true
}

// ClosePrepared drops the named prepared statement name, if there is one
// (a Close message).
func (s *Session) ClosePrepared(name string) { delete(s.prepared, name) }

func (s *Session) addPrepared(name string, st *plan.Stmt, text string, fromSQL bool) {
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
func (s *Session) compilePrepare(p *pg.PrepareStmt, text string, params *[]types.Type, st *plan.Stmt) error {
	a := plan.NewAnalyzer(&s.Backend, params)
	declared := make([]types.Type, len(p.Argtypes))
	for i, n := range p.Argtypes {
		t, err := a.TypeName(n.GetTypeName())
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
	st.NoSnapshot = true
	s.FoldedVolatile = true // keeps it out of the plan caches: each PREPARE analyses afresh
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if _, ok := s.prepared[p.Name]; ok {
			return "", duplicatePrepared(p.Name)
		}
		ps := append([]types.Type(nil), declared...)
		pst, err := s.analyze(p.Query, inner, &ps)
		if err != nil {
			return "", err
		}
		analyze.FinishParams(ps)
		pst.Params = ps
		pst.Named = true
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
func (s *Session) compileExecute(x *pg.ExecuteStmt, params *[]types.Type, st *plan.Stmt) error {
	p, ok := s.prepared[x.Name]
	if !ok {
		return noPrepared(x.Name)
	}
	inner := p.st
	if len(x.Params) != len(inner.Params) {
		return pgerr.New(pgerr.SyntaxError, "wrong number of parameters for prepared statement \"%s\"", x.Name).
			WithDetail(fmt.Sprintf("Expected %d parameters but got %d.", len(inner.Params), len(x.Params)))
	}
	a := plan.NewAnalyzer(&s.Backend, params)
	args := make([]expr.Expr, len(x.Params))
	for i, n := range x.Params {
		e, err := a.Expr(n)
		if err != nil {
			return err
		}
		want := inner.Params[i]
		switch {
		case analyze.IsUnknown(e):
			e, err = a.CoerceUnknown(e, want)
		case e.Type().OID == want.OID:
		case analyze.Assignable(e.Type(), want):
			e, err = a.CastTo(e, want, false)
		default:
			return expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "parameter $%d of type %s cannot be coerced to the expected type %s", i+1, e.Type().Name, want.Name).
				WithHint("You will need to rewrite or cast the expression."), analyze.ExprLocation(n))
		}
		if err != nil {
			if pe, ok := err.(*pgerr.Error); ok {
				return expr.PosErr(pe, analyze.ExprLocation(n))
			}
			return err
		}
		args[i] = e
	}
	st.Tag = inner.Tag
	st.Cols = inner.Cols
	st.NoSnapshot = true    // the prepared statement takes its own
	s.FoldedVolatile = true // resolved by name: never reused from a plan cache
	st.Run = func(ec *expr.EvalCtx, emit func([]types.Datum) error) (string, error) {
		if cur, ok := s.prepared[x.Name]; !ok || cur != p {
			// deallocated (or replaced) since this EXECUTE was analysed
			return "", noPrepared(x.Name)
		}
		vals := make([]types.Datum, len(args))
		for i, e := range args {
			v, err := e.Eval(ec, nil)
			if err != nil {
				return "", err
			}
			vals[i] = v
		}
		return s.runStmt(ec.Ctx, inner, vals, emit)
	}
	return nil
}

// compileDeallocate is DEALLOCATE [PREPARE] name | ALL.
func (s *Session) compileDeallocate(d *pg.DeallocateStmt, st *plan.Stmt) {
	st.Tag = "DEALLOCATE"
	st.NoSnapshot = true
	s.FoldedVolatile = true
	st.Run = func(*expr.EvalCtx, func([]types.Datum) error) (string, error) {
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

func (e *Engine) preparedStatementsView() *expr.View {
	return &expr.View{
		Name: "pg_prepared_statements",
		Oid:  oidPgPreparedStatements,
		Cols: sysviews.Cols(oidPgPreparedStatements,
			"name", types.TypeText, "statement", types.TypeText, "prepare_time", types.TypeTimestamptz,
			"parameter_types", types.Type{OID: 2211, Len: -1, Mod: -1, Name: "regtype[]"}, "from_sql", types.TypeBool,
			"generic_plans", types.TypeInt8, "custom_plans", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			own := e.session(ec.B.PID)
			names := make([]string, 0, len(own.prepared))
			for n := range own.prepared {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				p := own.prepared[n]
				paramTypes := types.Datum{A: make([]types.Datum, 0, len(p.st.Params))}
				for _, t := range p.st.Params {
					paramTypes.A = append(paramTypes.A, types.IntDatum(int64(t.OID)))
				}
				row := []types.Datum{types.TextDatum(p.name), types.TextDatum(p.text), funcs.TsDatum(p.prepared), paramTypes, types.BoolDatum(p.fromSQL),
					types.IntDatum(int64(p.st.GenericPlans)), types.IntDatum(int64(p.st.CustomPlans))}
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
func (s *Session) compileDiscard(d *pg.DiscardStmt, st *plan.Stmt) {
	st.NoSnapshot = true
	s.FoldedVolatile = true
	switch d.Target {
	case pg.DiscardMode_DISCARD_ALL:
		st.Tag = "DISCARD ALL"
		st.NoBlock = "DISCARD ALL"
	case pg.DiscardMode_DISCARD_PLANS:
		st.Tag = "DISCARD PLANS"
	case pg.DiscardMode_DISCARD_SEQUENCES:
		st.Tag = "DISCARD SEQUENCES"
	default:
		st.Tag = "DISCARD TEMP"
	}
	tag := st.Tag
	st.Run = func(*expr.EvalCtx, func([]types.Datum) error) (string, error) {
		switch d.Target {
		case pg.DiscardMode_DISCARD_ALL:
			for _, p := range s.portals {
				s.dropPortal(p) // CLOSE ALL
			}
			s.Settings.ResetAll()
			s.RefreshFormat()
			clear(s.prepared)
			s.Locks.ReleaseSessionLocks(s.Proc, true)
			s.discardPlans()
			funcs.DiscardSequences(&s.Backend) // sql/funcs/sequence.go
		case pg.DiscardMode_DISCARD_PLANS:
			s.discardPlans()
		case pg.DiscardMode_DISCARD_SEQUENCES:
			funcs.DiscardSequences(&s.Backend)
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
		p.st.GenericCached = false
	}
}

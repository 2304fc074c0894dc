package sql

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// Parse splits and analyses a simple-protocol query string. An empty
// result means an empty query. params are the parameter values of a
// statement found by its shape (see shapeOf); nil otherwise.
func (s *Session) Parse(query string) (sts []*plan.Stmt, params []types.Datum, err error) {
	if err := types.VerifyUTF8(query); err != nil {
		return nil, nil, err
	}
	sts, params, err = s.parseQuery(query)
	// several statements run in an implicit transaction block, where
	// PostgreSQL lets DECLARE without WITH HOLD run (until Sync)
	s.multiStmt = len(sts) > 1
	return sts, params, err
}

func (s *Session) parseQuery(query string) (sts []*plan.Stmt, params []types.Datum, err error) {
	if s.Tx == expr.TxFailed {
		// In a failed block only syntax errors come before 25P02: defer
		// analysis to Resolve.
		return s.parseLazy(query)
	}
	// a cached plan stands for planning the query again (PostgreSQL plans
	// every simple query) while neither the catalog nor a setting changed
	if sts, ok := s.cache[query]; ok && (len(sts) == 0 || sts[0].CatVer == s.Cat().Version && sts[0].SetGen == s.Settings.Changes()) {
		return sts, nil, nil
	}
	if st, params, ok := s.parseShape(query); ok {
		return []*plan.Stmt{st}, params, nil
	}
	sts, err = s.parseFull(query)
	return sts, nil, err
}

// parseShape finds or builds the plan of query's shape and binds its
// literals. ok is false when the statement has no usable shape; the
// caller then parses it as it is (which also reports errors exactly as
// PostgreSQL does, with positions).
func (s *Session) parseShape(query string) (*plan.Stmt, []types.Datum, bool) {
	key, lits, ok := shapeOf(query)
	if !ok || s.noShape[key] {
		return nil, nil, false
	}
	st := s.shapeCache[key]
	if st == nil || st.CatVer != s.Cat().Version || st.SetGen != s.Settings.Changes() {
		text := key[strings.IndexByte(key, '|')+1:]
		tree, err := pg.Parse(text)
		if err != nil || len(tree.Stmts) != 1 {
			s.markNoShape(key)
			return nil, nil, false
		}
		params := make([]types.Type, len(lits))
		for i, l := range lits {
			params[i] = literalType(l.kind)
		}
		st, err = s.analyze(tree.Stmts[0].Stmt, text, &params)
		if err != nil || len(params) != len(lits) || !st.Cacheable {
			s.markNoShape(key)
			return nil, nil, false
		}
		analyze.FinishParams(params)
		st.Params = params
		if len(s.shapeCache) >= 256 {
			clear(s.shapeCache)
		}
		s.shapeCache[key] = st
	}
	vals := make([]types.Datum, len(lits))
	for i, l := range lits {
		d, err := types.ParseText(st.Params[i], l.text, &s.Format)
		if err != nil {
			return nil, nil, false
		}
		vals[i] = d
	}
	return st, vals, true
}

func (s *Session) markNoShape(key string) {
	if len(s.noShape) >= 256 {
		clear(s.noShape)
	}
	s.noShape[key] = true
}

func (s *Session) parseFull(query string) ([]*plan.Stmt, error) {
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	sts := make([]*plan.Stmt, 0, len(tree.Stmts))
	if len(tree.Stmts) > 1 {
		// As in PostgreSQL, each statement of a multi-statement string is
		// analysed just before it runs ("create table t ...; insert into
		// t ..." must see t): Resolve does it.
		return lazyStmts(query, tree), nil
	}
	cacheable := true
	for _, raw := range tree.Stmts {
		st, err := s.analyzeSimple(raw.Stmt, stmtText(query, raw))
		if err != nil {
			return nil, err
		}
		cacheable = cacheable && st.Cacheable
		sts = append(sts, st)
	}
	if cacheable {
		if len(s.cache) >= 256 {
			clear(s.cache)
		}
		s.cache[query] = sts
	}
	return sts, nil
}

func (s *Session) parseLazy(query string) ([]*plan.Stmt, []types.Datum, error) {
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, nil, parseError(err)
	}
	return lazyStmts(query, tree), nil, nil
}

func lazyStmts(query string, tree *pg.ParseResult) []*plan.Stmt {
	sts := make([]*plan.Stmt, 0, len(tree.Stmts))
	for _, raw := range tree.Stmts {
		sts = append(sts, &plan.Stmt{Text: stmtText(query, raw), Lazy: raw.Stmt})
	}
	return sts
}

// analyzeSimple analyses one simple-protocol statement, which may not
// have parameters.
func (s *Session) analyzeSimple(n *pg.Node, text string) (*plan.Stmt, error) {
	var params []types.Type
	st, err := s.analyze(n, text, &params)
	if err != nil {
		return nil, err
	}
	if len(params) > 0 {
		return nil, pgerr.New(pgerr.UndefinedParameter, "there is no parameter $%d", len(params))
	}
	return st, nil
}

// Resolve returns st ready to run: a statement of a multi-statement
// string is analysed now, against the catalog as the statements before
// it left it. The server calls it before describing and executing each
// statement of a Query message.
func (s *Session) Resolve(st *plan.Stmt) (*plan.Stmt, error) {
	if st.Lazy == nil {
		return st, nil
	}
	if s.Tx == expr.TxFailed && st.Lazy.GetTransactionStmt() == nil {
		// PostgreSQL refuses everything but transaction control in a
		// failed block before analysing it: Execute says 25P02.
		return &plan.Stmt{Text: st.Text, Run: func(*expr.EvalCtx, func([]types.Datum) error) (string, error) { return "", nil }}, nil
	}
	return s.analyzeSimple(st.Lazy, st.Text)
}

// Prepare analyses one statement for the extended protocol. paramOIDs
// are the client's declared types (0 = infer).
func (s *Session) Prepare(query string, paramOIDs []uint32) (*plan.Stmt, error) {
	// Clients such as pgbench -M extended send the same unnamed Parse for
	// every execution; a plan analysed once serves them all (plans are
	// read-only, and re-planned if the catalog changes).
	if err := types.VerifyUTF8(query); err != nil {
		return nil, err
	}
	cacheKey := ""
	if allZero(paramOIDs) {
		cacheKey = query
		if st, ok := s.prepCache[cacheKey]; ok && st.CatVer == s.Cat().Version {
			return st, nil
		}
	}
	tree, err := pg.Parse(query)
	if err != nil {
		return nil, parseError(err)
	}
	switch len(tree.Stmts) {
	case 0:
		return &plan.Stmt{Text: query, Run: nil, Cacheable: true}, nil
	case 1:
	default:
		return nil, pgerr.New(pgerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	params := make([]types.Type, len(paramOIDs))
	for i, oid := range paramOIDs {
		if oid != 0 {
			t, ok := types.TypeByOID(oid)
			if !ok {
				return nil, pgerr.NotSupported("parameter type %d is not supported", oid)
			}
			params[i] = t
		}
	}
	st, err := s.analyze(tree.Stmts[0].Stmt, query, &params)
	if err != nil {
		return nil, err
	}
	analyze.FinishParams(params)
	st.Params = params
	if cacheKey != "" && st.Cacheable && len(paramOIDs) == 0 {
		if len(s.prepCache) >= 256 {
			clear(s.prepCache)
		}
		s.prepCache[cacheKey] = st
	}
	return st, nil
}

func allZero(oids []uint32) bool {
	for _, o := range oids {
		if o != 0 {
			return false
		}
	}
	return true
}

func stmtText(query string, raw *pg.RawStmt) string {
	start := int(raw.StmtLocation)
	end := len(query)
	if raw.StmtLen > 0 {
		end = start + int(raw.StmtLen)
	}
	if start < 0 || start > len(query) || end > len(query) || start > end {
		return query
	}
	return strings.TrimSpace(query[start:end])
}

func parseError(err error) error {
	if pe, ok := err.(*parser.Error); ok {
		e := pgerr.New(pgerr.SyntaxError, "%s", pe.Message)
		if pe.Cursorpos > 0 {
			e.Position = int32(pe.Cursorpos)
		}
		if strings.HasPrefix(pe.Message, "unterminated") || strings.Contains(pe.Message, "invalid") {
			if strings.Contains(pe.Message, "unicode") || strings.Contains(pe.Message, "escape") {
				e.Code = pgerr.InvalidEscapeSequence
			}
		}
		return e
	}
	return pgerr.New(pgerr.SyntaxError, "%s", err.Error())
}

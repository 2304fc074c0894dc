package sql

import (
	"fmt"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// compileExplain is EXPLAIN [(option [value], ...)] statement: the plan
// of a query as PostgreSQL prints it (sql/plan/explain.go); with ANALYZE
// the statement runs and each node shows what it did. EXPLAIN takes the
// statement's locks, as PostgreSQL's planner does.
func (s *Session) compileExplain(x *pg.ExplainStmt, text string, params *[]types.Type, st *plan.Stmt) error {
	opts := plan.ExplainOptions{Costs: true, Timing: true}
	timingSet, summarySet := false, false
	for _, o := range x.Options {
		de := o.GetDefElem()
		name := de.Defname
		switch name {
		case "analyze", "verbose", "costs", "buffers", "timing", "summary", "settings", "wal":
			v, err := explainBool(name, de.Arg)
			if err != nil {
				return err
			}
			switch name {
			case "analyze":
				opts.Analyze = v
			case "verbose":
				opts.Verbose = v
			case "costs":
				opts.Costs = v
			case "timing":
				opts.Timing, timingSet = v, true
			case "summary":
				opts.Summary, summarySet = v, true
			}
		case "format":
			f := strings.ToLower(analyze.DefElemString(de.Arg))
			switch f {
			case "text":
			case "json":
				opts.JSON = true
			case "xml", "yaml":
				return pgerr.NotSupported("EXPLAIN (FORMAT %s) is not supported by lockd; TEXT and JSON are", strings.ToUpper(f))
			default:
				return pgerr.New(pgerr.InvalidParameterValue, "unrecognized value for EXPLAIN option \"format\": \"%s\"", f).WithPosition(de.Location + 1)
			}
		default:
			return pgerr.New(pgerr.SyntaxError, "unrecognized EXPLAIN option \"%s\"", name).WithPosition(de.Location + 1)
		}
	}
	if timingSet && opts.Timing && !opts.Analyze {
		return pgerr.New(pgerr.InvalidParameterValue, "EXPLAIN option TIMING requires ANALYZE")
	}
	if !summarySet {
		opts.Summary = opts.Analyze
	}
	planning := time.Now()
	inner, err := s.analyze(x.Query, text, params)
	if err != nil {
		return err
	}
	planMs := float64(time.Since(planning).Microseconds()) / 1000
	var explain func(ec *expr.EvalCtx, stats map[any]*expr.NodeStats) []string
	switch p := inner.Plan.(type) {
	case *plan.SelectPlan:
		explain = func(ec *expr.EvalCtx, stats map[any]*expr.NodeStats) []string {
			return plan.ExplainSelect(&s.Backend, ec, p, opts, stats)
		}
	case *plan.ModifyPlan:
		if p.Parts == nil {
			explain = func(ec *expr.EvalCtx, stats map[any]*expr.NodeStats) []string {
				return plan.ExplainModify(&s.Backend, ec, p, opts, stats)
			}
		}
	case *plan.InsertPlan:
		explain = func(ec *expr.EvalCtx, stats map[any]*expr.NodeStats) []string {
			return plan.ExplainInsert(&s.Backend, ec, p, opts, stats)
		}
	}
	if explain == nil {
		return pgerr.NotSupported("EXPLAIN of this form of %s is not supported by lockd yet", analyze.CommandName(x.Query))
	}
	st.Tag = "EXPLAIN"
	// lockd has no json type: FORMAT JSON's column is text
	st.Cols = []types.Column{{Name: "QUERY PLAN", Type: types.TypeText}}
	st.Rels = inner.Rels
	if opts.Analyze {
		// EXPLAIN ANALYZE runs the statement: it writes as the statement
		// does (and is refused where the statement would be)
		st.Writes = inner.Writes
	}
	s.FoldedVolatile = true // planned afresh each time, as PostgreSQL plans EXPLAIN
	st.Run = func(ec *expr.EvalCtx, emit func([]types.Datum) error) (string, error) {
		var stats map[any]*expr.NodeStats
		var execMs float64
		if opts.Analyze {
			stats = map[any]*expr.NodeStats{}
			ec.Instr = stats
			start := time.Now()
			_, err := s.RunPlan(ec, inner, func([]types.Datum) error { return nil })
			ec.Instr = nil
			execMs = float64(time.Since(start).Microseconds()) / 1000
			if err != nil {
				return "", err
			}
		}
		lines := explain(ec, stats)
		if opts.Summary && !opts.JSON {
			lines = append(lines, fmt.Sprintf("Planning Time: %.3f ms", planMs))
			if opts.Analyze {
				lines = append(lines, fmt.Sprintf("Execution Time: %.3f ms", execMs))
			}
		}
		for _, l := range lines {
			if err := emit([]types.Datum{types.TextDatum(l)}); err != nil {
				return "", err
			}
		}
		return "EXPLAIN", nil
	}
	return nil
}

// explainBool reads a boolean EXPLAIN option's value (defGetBoolean): no
// value is true; true/false, on/off, 1/0.
func explainBool(name string, arg *pg.Node) (bool, error) {
	if arg == nil {
		return true, nil
	}
	if i, ok := analyze.DefElemInt(arg); ok {
		switch i {
		case 0:
			return false, nil
		case 1:
			return true, nil
		}
	}
	switch strings.ToLower(analyze.DefElemString(arg)) {
	case "true", "on":
		return true, nil
	case "false", "off":
		return false, nil
	}
	return false, pgerr.New(pgerr.SyntaxError, "%s requires a Boolean value", name)
}

package sql

import (
	"context"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/commands"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// Execute runs a statement with bound parameters, sending result rows to
// emit, and returns the command tag. It applies the transaction rules:
// an implicit transaction starts if none is open; in a failed block only
// COMMIT/ROLLBACK run.
func (s *Session) Execute(ctx context.Context, st *plan.Stmt, params []types.Datum, emit func([]types.Datum) error) (string, error) {
	return s.ExecuteDescribed(ctx, st, params, nil, emit)
}

// ExecuteDescribed is Execute for a statement not described to the
// client yet (the simple query protocol): describe gets its result
// columns once its relation locks are held, before any row. A statement
// that waited for a lock behind DDL is planned again and described as it
// is now, as PostgreSQL's parse analysis, which takes those locks, would
// see it: a SELECT * queued behind ALTER TABLE ADD COLUMN returns the new
// column.
func (s *Session) ExecuteDescribed(ctx context.Context, st *plan.Stmt, params []types.Datum, describe func([]types.Column), emit func([]types.Datum) error) (string, error) {
	s.describe = describe
	defer func() { s.describe = nil }()
	if st.IsEmpty() {
		return "", nil
	}
	if s.Tx == expr.TxFailed && !st.TxControl {
		return "", pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	if st.NoBlock != "" && s.Tx == expr.TxBlock {
		return "", pgerr.New(pgerr.ActiveSQLTransaction, "%s cannot run inside a transaction block", st.NoBlock)
	}
	now := time.Now()
	defer s.stats.statementDone(st.Tag, now)
	s.StmtStart = now
	if s.Tx == expr.TxNone {
		s.Settings.Refresh()
		s.RefreshFormat()
		s.beginTxn(now, expr.TxImplicit)
	}
	text := st.Text
	if s.queryText != "" {
		text = s.queryText
	}
	s.startStatement(text, now)
	tag, err := s.runStmt(ctx, st, params, emit)
	if err != nil {
		s.failStatement()
		return "", err
	}
	return tag, nil
}

// runStmt runs an analysed statement in the open transaction: it takes
// the statement's relation locks (planning again when the catalog
// changed), its snapshot, runs it and advances the command counter after
// a write. Execute calls it, and EXECUTE of a prepared statement.
//
// Its evaluation context is the session's stmtEC unless another run
// holds that: nothing keeps an EvalCtx past the run it was made for (a
// portal's suspended run has one of its own, sql/portal.go), so the
// next statement can have it. A run that panics leaves it held, and the
// statements after it make their own.
func (s *Session) runStmt(ctx context.Context, st *plan.Stmt, params []types.Datum, emit func([]types.Datum) error) (string, error) {
	var ec *expr.EvalCtx
	if s.stmtECBusy {
		ec = new(expr.EvalCtx)
	} else {
		ec, s.stmtECBusy = &s.stmtEC, true
	}
	*ec = expr.EvalCtx{B: &s.Backend, Exec: &s.Executor, Ctx: ctx, Params: params}
	var tag string
	run, err := s.startRun(ec, st, nil, false)
	if err == nil {
		tag, err = s.finishRun(ec, st, run, emit)
	}
	if ec == &s.stmtEC {
		s.stmtEC, s.stmtECBusy = expr.EvalCtx{}, false // what it points to can go
	}
	return tag, err
}

// startRun prepares st's execution in ec: the checks, the relation locks
// (planning again when the catalog changed), the description to the
// client and the snapshot; it returns what runs (st, or st planned
// again). For a portal's run (sql/portal.go), owner is the portal (which
// its own start does not materialize) and keepSnapshot says it runs with
// the snapshot in place.
func (s *Session) startRun(ec *expr.EvalCtx, st *plan.Stmt, owner *portal, keepSnapshot bool) (*plan.Stmt, error) {
	ctx := ec.Ctx
	if len(s.streaming) > 0 {
		if err := s.portalsBeforeStatement(ctx, st, owner); err != nil { // sql/portal.go
			return nil, err
		}
	}
	if err := s.checkReadOnly(st); err != nil {
		return nil, err
	}
	run := st
	// the locks follow the plan PostgreSQL's plan cache would run
	// (sql/plan/plancache.go): a cached generic plan locks fewer relations
	ec.Plan = st.PlanFor(s.Settings.StringAt(gucPlanCacheMode))
	if len(st.Rels) > 0 {
		if err := s.LockRelations(ctx, st.Rels, ec.Plan == expr.GenericReuse); err != nil {
			return nil, err
		}
		if st.CatVer != s.Cat().Version {
			// The catalog changed since the plan was made (also by this
			// transaction's own DDL, or its rollback): plan again
			// (PostgreSQL re-plans a cached plan on invalidation too).
			fresh, err := s.replan(st, s.describe != nil)
			if err != nil {
				if s.describe == nil {
					// a prepared statement's text is not the query the
					// client sent now: no position into it
					err = commands.NoPosition(err)
				}
				return nil, err
			}
			if err := s.LockRelations(ctx, fresh.Rels, false); err != nil {
				return nil, err
			}
			if ec.Plan == expr.GenericReuse {
				ec.Plan = expr.GenericBuild
			}
			run = fresh
		}
	}
	if d := s.describe; d != nil {
		s.describe = nil // once: an EXECUTE's prepared statement is not described again
		d(st.Cols)
	}
	if !st.NoSnapshot && !keepSnapshot {
		s.Txn.StatementSnapshot()
	}
	return run, nil
}

// finishRun runs what startRun prepared, rows to emit, and ends the
// statement: the plan cache's accounting, the foreign-key checks and
// actions, the command counter.
func (s *Session) finishRun(ec *expr.EvalCtx, st, run *plan.Stmt, emit func([]types.Datum) error) (string, error) {
	tag, err := s.RunPlan(ec, run, emit)
	st.PlanDone(ec.Plan, s.Settings.StringAt(gucPlanCacheMode), ec.RuntimePruned)
	err = s.AfterStatement(ec, err) // fire the statement's foreign-key checks and actions (sql/exec/ri.go)
	if err != nil {
		return "", err
	}
	if st.Writes {
		s.Txn.CommandCounterIncrement()
	}
	return tag, nil
}

// replan analyses st's text again against the current catalog;
// newColumns: the client has not been told st's result columns yet.
func (s *Session) replan(st *plan.Stmt, newColumns bool) (*plan.Stmt, error) {
	tree, err := pg.Parse(st.Text)
	if err != nil || len(tree.Stmts) != 1 {
		return nil, parseError(err)
	}
	params := append([]types.Type(nil), st.Params...)
	fresh, err := s.analyze(tree.Stmts[0].Stmt, st.Text, &params)
	if err != nil {
		return nil, err
	}
	if !newColumns && !sameColumns(fresh.Cols, st.Cols) {
		return nil, pgerr.NotSupported("cached plan must not change result type")
	}
	named, customPlans, genericPlans, choice := st.Named, st.CustomPlans, st.GenericPlans, st.Choice
	*st = *fresh
	st.Params = params
	// the cached generic plan is invalid; the counts stay (PostgreSQL
	// keeps a plan source's custom plan statistics across invalidation)
	st.Named, st.CustomPlans, st.GenericPlans, st.Choice = named, customPlans, genericPlans, choice
	return st, nil
}

func sameColumns(a, b []types.Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Type.OID != b[i].Type.OID || a[i].Name != b[i].Name {
			return false
		}
	}
	return true
}

package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/plan"
)

// Read-only transactions: BEGIN READ ONLY, SET TRANSACTION READ ONLY and
// default_transaction_read_only. As in PostgreSQL, a statement that
// writes, locks rows or changes the catalog fails with 25006 "cannot
// execute <command> in a read-only transaction" before it takes any lock;
// reading, SET, LOCK TABLE, ANALYZE, PREPARE and transaction control
// still run.

// readOnlyName is the command name a read-only transaction refuses st
// under (PostgreSQL's CreateCommandName), or "" when st may run in one.
func readOnlyName(n *pg.Node, st *plan.Stmt) string {
	switch {
	case n.GetInsertStmt() != nil:
		return "INSERT"
	case n.GetUpdateStmt() != nil:
		return "UPDATE"
	case n.GetDeleteStmt() != nil:
		return "DELETE"
	case n.GetSelectStmt() != nil:
		if n.GetSelectStmt().IntoClause != nil {
			return "SELECT INTO"
		}
		if st.Writes { // a data-modifying WITH
			return "SELECT"
		}
		for _, r := range st.Rels {
			if r.Mode == locks.RowShareLock {
				return "SELECT FOR " + lockStrengthName(firstLockingClause(n.GetSelectStmt()))
			}
		}
		return ""
	case n.GetExplainStmt() != nil && st.Writes:
		// EXPLAIN ANALYZE runs its statement (sql/explain.go)
		return readOnlyName(n.GetExplainStmt().Query, st)
	case n.GetCopyStmt() != nil:
		if n.GetCopyStmt().IsFrom {
			return "COPY FROM"
		}
		return ""
	case n.GetVariableSetStmt() != nil, n.GetVariableShowStmt() != nil, n.GetTransactionStmt() != nil,
		n.GetLockStmt() != nil, n.GetVacuumStmt() != nil, n.GetExplainStmt() != nil,
		n.GetPrepareStmt() != nil, n.GetExecuteStmt() != nil, n.GetDeallocateStmt() != nil,
		n.GetAlterSystemStmt() != nil, n.GetCheckPointStmt() != nil, n.GetDiscardStmt() != nil:
		// EXECUTE: the prepared statement is checked when it runs
		return ""
	}
	return analyze.CommandName(n)
}

// firstLockingClause is the strength of the first FOR UPDATE/SHARE clause
// of sel, its set-operation branches or its subqueries in FROM and WITH,
// which PostgreSQL names the statement by.
func firstLockingClause(sel *pg.SelectStmt) pg.LockClauseStrength {
	if sel == nil {
		return pg.LockClauseStrength_LOCK_CLAUSE_STRENGTH_UNDEFINED
	}
	for _, lc := range sel.LockingClause {
		if c := lc.GetLockingClause(); c != nil {
			return c.Strength
		}
	}
	var subs []*pg.SelectStmt
	if sel.WithClause != nil {
		for _, c := range sel.WithClause.Ctes {
			if cte := c.GetCommonTableExpr(); cte != nil {
				subs = append(subs, cte.Ctequery.GetSelectStmt())
			}
		}
	}
	subs = append(subs, sel.Larg, sel.Rarg)
	for _, f := range sel.FromClause {
		subs = append(subs, fromSubqueries(f)...)
	}
	for _, sub := range subs {
		if s := firstLockingClause(sub); s != pg.LockClauseStrength_LOCK_CLAUSE_STRENGTH_UNDEFINED {
			return s
		}
	}
	return pg.LockClauseStrength_LOCK_CLAUSE_STRENGTH_UNDEFINED
}

// fromSubqueries lists the subqueries of one FROM item, through joins.
func fromSubqueries(n *pg.Node) []*pg.SelectStmt {
	switch {
	case n.GetRangeSubselect() != nil:
		return []*pg.SelectStmt{n.GetRangeSubselect().Subquery.GetSelectStmt()}
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		return append(fromSubqueries(j.Larg), fromSubqueries(j.Rarg)...)
	}
	return nil
}

func lockStrengthName(s pg.LockClauseStrength) string {
	switch s {
	case pg.LockClauseStrength_LCS_FORKEYSHARE:
		return "KEY SHARE"
	case pg.LockClauseStrength_LCS_FORSHARE:
		return "SHARE"
	case pg.LockClauseStrength_LCS_FORNOKEYUPDATE:
		return "NO KEY UPDATE"
	}
	return "UPDATE"
}

// checkReadOnly refuses st in a read-only transaction.
func (s *Session) checkReadOnly(st *plan.Stmt) error {
	if st.RoName == "" || !s.Settings.BoolAt(gucTransactionReadOnly) {
		return nil
	}
	return pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute %s in a read-only transaction", st.RoName)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

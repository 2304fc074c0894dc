package server

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/pgerr"
	"lockd/sql"
)

// The simple query protocol: one Query message, any number of statements,
// one ReadyForQuery.

// testHook is set only by tests (export_test.go).
var testHook func(query string)

// simpleQuery runs a Query message: every statement in the string, in one
// implicit transaction unless the string itself manages transactions.
func (b *backend) simpleQuery(q string) {
	if testHook != nil {
		testHook(q)
	}
	b.sess.SetQueryText(q)
	defer b.sess.SetQueryText("")
	b.sess.ClosePortal("") // a simple Query replaces the unnamed portal (exec_simple_query)
	sts, params, err := b.sess.Parse(q)
	if err != nil {
		b.sess.Fail()
		b.sendError(err)
		_ = b.sess.Sync() // the transaction was rolled back
		b.readyForQuery()
		return
	}
	if len(sts) == 0 {
		b.send(&pgproto3.EmptyQueryResponse{})
		b.readyForQuery()
		return
	}
	for _, st := range sts {
		st, err := b.sess.Resolve(st)
		if err != nil {
			b.sess.Fail()
			b.sendError(err)
			break
		}
		if !b.runStatement(st, params, nil, 0) {
			break
		}
	}
	if err := b.sess.Sync(); err != nil {
		b.sendError(err)
	}
	b.readyForQuery()
}

// runStatement executes st, streaming rows; it reports success.
func (b *backend) runStatement(st *sql.Stmt, params []sql.Datum, formats []int16, _ int) bool {
	if b.sess.InFailedBlock() && !st.AllowedInFailedBlock() {
		// Refused before the portal starts: no RowDescription (postgres.c).
		b.sendError(pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block"))
		return false
	}
	// described once its locks are held: a statement that waited behind
	// DDL shows the table as it is now (sql.Session.ExecuteDescribed)
	var cols []sql.Column
	if formats == nil && st.BinaryRows {
		formats = binaryFormats // FETCH from a BINARY cursor
	}
	describe := func(c []sql.Column) {
		if cols = c; cols != nil {
			b.sendRowDescription(cols, formats)
		}
	}
	sink := b.prepareCopy(st)
	tag, err := b.sess.ExecuteDescribed(b.statementContext(), st, params, describe, func(row []sql.Datum) error {
		return b.sendRow(cols, formats, row)
	})
	b.endStatement()
	if err != nil {
		b.sendError(err)
		return false
	}
	if sink != nil && sink.began {
		b.send(&pgproto3.CopyDone{})
	}
	b.sendNotices()
	b.sendCommandComplete(tag)
	return true
}

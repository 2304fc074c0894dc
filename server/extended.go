package server

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/pgerr"
	"lockd/sql"
)

// extendedError reports an error in the extended protocol: the
// transaction fails and everything up to Sync is skipped.
func (b *backend) extendedError(err error) {
	b.sess.Fail()
	b.sendError(err)
	b.ignoreTillSync = true
}

func (b *backend) parse(m *pgproto3.Parse) {
	if b.ignoreTillSync {
		return
	}
	if m.Name == "" {
		st, err := b.sess.Prepare(m.Query, m.ParameterOIDs)
		if err != nil {
			b.extendedError(err)
			return
		}
		b.unnamed = st
	} else if _, err := b.sess.PrepareNamed(m.Name, m.Query, m.ParameterOIDs); err != nil {
		// named statements live in the session, with SQL PREPARE's
		b.extendedError(err)
		return
	}
	b.send(&pgproto3.ParseComplete{})
}

func (b *backend) lookupStmt(name string) (*sql.Stmt, error) {
	if name == "" {
		if b.unnamed == nil {
			return nil, pgerr.New(pgerr.InvalidSQLStatementName, "unnamed prepared statement does not exist")
		}
		return b.unnamed, nil
	}
	st, ok := b.sess.Prepared(name)
	if !ok {
		return nil, pgerr.New(pgerr.InvalidSQLStatementName, "prepared statement \"%s\" does not exist", name)
	}
	return st, nil
}

func (b *backend) bind(m *pgproto3.Bind) {
	if b.ignoreTillSync {
		return
	}
	st, err := b.lookupStmt(m.PreparedStatement)
	if err != nil {
		b.extendedError(err)
		return
	}
	if b.sess.InFailedBlock() && !st.AllowedInFailedBlock() {
		b.extendedError(pgerr.New(pgerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block"))
		return
	}
	if m.DestinationPortal != "" {
		if _, ok := b.sess.PortalStmt(m.DestinationPortal); ok {
			b.extendedError(pgerr.New(pgerr.DuplicateCursor, "cursor \"%s\" already exists", m.DestinationPortal))
			return
		}
	}
	cols := st.Columns()
	if n := len(m.ResultFormatCodes); n > 1 && n != len(cols) {
		b.extendedError(pgerr.New(pgerr.ProtocolViolation, "bind message has %d result formats but query has %d columns", n, len(cols)))
		return
	}
	for _, f := range m.ResultFormatCodes {
		if f != 0 && f != 1 {
			b.extendedError(pgerr.New(pgerr.ProtocolViolation, "unsupported format code: %d", f))
			return
		}
	}
	params, err := b.sess.BindParams(st, m.PreparedStatement, m.Parameters, m.ParameterFormatCodes)
	if err != nil {
		b.extendedError(err)
		return
	}
	// Bind's slices point into pgproto3's read buffer: keep copies.
	if err := b.sess.Bind(m.DestinationPortal, st, params, resultFormats(m.ResultFormatCodes)); err != nil {
		b.extendedError(err)
		return
	}
	b.send(&pgproto3.BindComplete{})
}

func (b *backend) describe(m *pgproto3.Describe) {
	if b.ignoreTillSync {
		return
	}
	switch m.ObjectType {
	case 'S':
		st, err := b.lookupStmt(m.Name)
		if err != nil {
			b.extendedError(err)
			return
		}
		b.send(&pgproto3.ParameterDescription{ParameterOIDs: st.ParamTypes()})
		if cols := st.Columns(); cols != nil {
			b.sendRowDescription(cols, nil)
		} else {
			b.send(&pgproto3.NoData{})
		}
	case 'P':
		cols, formats, err := b.sess.PortalColumns(m.Name)
		if err != nil {
			b.extendedError(err)
			return
		}
		if cols != nil {
			b.sendRowDescription(cols, formats)
		} else {
			b.send(&pgproto3.NoData{})
		}
	default:
		b.extendedError(pgerr.New(pgerr.ProtocolViolation, "invalid DESCRIBE message subtype %d", m.ObjectType))
	}
}

func (b *backend) execute(m *pgproto3.Execute) {
	if b.ignoreTillSync {
		return
	}
	st, ok := b.sess.PortalStmt(m.Portal)
	if !ok {
		b.extendedError(pgerr.New(pgerr.InvalidCursorName, "portal \"%s\" does not exist", m.Portal))
		return
	}
	if st.IsEmpty() {
		b.send(&pgproto3.EmptyQueryResponse{})
		return
	}
	b.rowCols, b.rowFmts, _ = b.sess.PortalColumns(m.Portal)
	sink := b.prepareCopy(st)
	tag, suspended, err := b.sess.ExecutePortal(b.statementContext(), m.Portal, int64(m.MaxRows), b.rowEmitter())
	b.endStatement()
	b.rowCols, b.rowFmts = nil, nil
	if err != nil {
		b.extendedError(err)
		return
	}
	b.sendNotices()
	if suspended {
		b.send(&pgproto3.PortalSuspended{})
		return
	}
	if sink != nil && sink.began {
		b.send(&pgproto3.CopyDone{})
	}
	b.sendCommandComplete(tag)
}

func (b *backend) closeMsg(m *pgproto3.Close) {
	if b.ignoreTillSync {
		return
	}
	switch m.ObjectType {
	case 'S':
		if m.Name == "" {
			b.unnamed = nil
		} else {
			b.sess.ClosePrepared(m.Name)
		}
	case 'P':
		b.sess.ClosePortal(m.Name)
	default:
		b.extendedError(pgerr.New(pgerr.ProtocolViolation, "invalid CLOSE message subtype %d", m.ObjectType))
		return
	}
	b.send(&pgproto3.CloseComplete{})
}

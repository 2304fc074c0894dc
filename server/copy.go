package server

import (
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/pgerr"
	"lockd/sql"
)

// copySource reads COPY FROM STDIN data from the client. The first call
// sends CopyInResponse; later calls return each CopyData payload until
// CopyDone. CopyFail ends the COPY with 57014, as PostgreSQL does. Flush
// and Sync are ignored during COPY (the protocol allows them there).
func (b *backend) copySource(st *sql.Stmt) sql.CopySource {
	started, done := false, false
	return func() ([]byte, bool, error) {
		if done {
			return nil, true, nil
		}
		if !started {
			started = true
			b.send(&pgproto3.CopyInResponse{OverallFormat: 0, ColumnFormatCodes: make([]uint16, st.CopyInColumns())})
			if err := b.be.Flush(); err != nil {
				done = true
				return nil, false, err
			}
		}
		for {
			msg, err := b.be.Receive()
			if err != nil {
				done = true
				return nil, false, err
			}
			switch m := msg.(type) {
			case *pgproto3.CopyData:
				return m.Data, false, nil
			case *pgproto3.CopyDone:
				done = true
				return nil, true, nil
			case *pgproto3.CopyFail:
				done = true
				return nil, false, pgerr.New(pgerr.QueryCanceled, "COPY from stdin failed: %s", m.Message)
			case *pgproto3.Flush, *pgproto3.Sync:
			default:
				done = true
				return nil, false, pgerr.New(pgerr.ProtocolViolation, "unexpected message type %s during COPY from stdin", fmt.Sprintf("%T", msg))
			}
		}
	}
}

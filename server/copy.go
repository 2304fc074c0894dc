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
			_, format := st.CopyIn()
			codes := make([]uint16, st.CopyInColumns())
			for i := range codes {
				codes[i] = uint16(format)
			}
			b.send(&pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: codes})
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

// prepareCopy connects a COPY FROM STDIN or TO STDOUT statement to the
// protocol before it runs; it returns the sink for TO STDOUT (else nil).
func (b *backend) prepareCopy(st *sql.Stmt) *copySink {
	if st.CopyInColumns() > 0 {
		b.sess.SetCopySource(b.copySource(st))
	}
	if !st.CopyOut() {
		return nil
	}
	sink := &copySink{b: b}
	b.sess.SetCopySink(sink)
	return sink
}

// copySink sends COPY TO STDOUT output: CopyOutResponse first, then a
// CopyData per chunk; CopyDone follows when the statement succeeds.
type copySink struct {
	b     *backend
	began bool
}

func (c *copySink) Begin(format int16, columns int) error {
	codes := make([]uint16, columns)
	for i := range codes {
		codes[i] = uint16(format)
	}
	c.b.send(&pgproto3.CopyOutResponse{OverallFormat: byte(format), ColumnFormatCodes: codes})
	c.began = true
	return nil
}

func (c *copySink) Data(chunk []byte) error {
	c.b.send(&pgproto3.CopyData{Data: chunk})
	if c.b.unflushed += len(chunk); c.b.unflushed > 256<<10 {
		c.b.unflushed = 0
		return c.b.be.Flush()
	}
	return nil
}

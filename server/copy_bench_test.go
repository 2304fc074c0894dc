package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/internal/lockdtest"
)

// BenchmarkCopyFromAccounts is pgbench -i's client-side data generation
// at scale 1: 100,000 pgbench_accounts rows sent by COPY FROM STDIN in
// text format, one CopyData message a row as libpq's PQputline sends
// them, into a table truncated in the same transaction (COPY FREEZE, as
// pgbench 15 asks for). One op is one COPY of all the rows; the bytes
// and allocations are the server's and the client's together, the
// client's being a single write:
//
//	go test ./server -run XXX -bench CopyFromAccounts -benchmem
func BenchmarkCopyFromAccounts(b *testing.B) {
	const rows = 100000
	inst := lockdtest.Start(b, lockdtest.Options{Settings: []string{"fsync=off", "synchronous_commit=off"}})
	c := inst.Connect(b)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "create table pgbench_accounts (aid int not null, bid int, abalance int, filler char(84)) with (fillfactor=100)"); err != nil {
		b.Fatal(err)
	}
	hc, err := c.PgConn().Hijack()
	if err != nil {
		b.Fatal(err)
	}
	defer hc.Conn.Close()
	fe := hc.Frontend

	// begin; truncate; copy ... freeze: the messages up to the COPY's
	// CopyInResponse, then the data and CopyDone, then commit.
	var head, data, tail []byte
	head, _ = (&pgproto3.Query{String: "begin; truncate pgbench_accounts"}).Encode(head)
	head, _ = (&pgproto3.Query{String: "copy pgbench_accounts from stdin with (freeze on)"}).Encode(head)
	for aid := 1; aid <= rows; aid++ {
		line := fmt.Appendf(nil, "%d\t%d\t0\t\n", aid, (aid-1)/100000+1)
		data, _ = (&pgproto3.CopyData{Data: line}).Encode(data)
	}
	data, _ = (&pgproto3.CopyDone{}).Encode(data)
	tail, _ = (&pgproto3.Query{String: "commit"}).Encode(tail)

	// readUntil reads messages to the next ReadyForQuery (or
	// CopyInResponse when copyIn), failing on an error.
	readUntil := func(copyIn bool) string {
		var tag string
		for {
			msg, err := fe.Receive()
			if err != nil {
				b.Fatal(err)
			}
			switch m := msg.(type) {
			case *pgproto3.ErrorResponse:
				b.Fatalf("%s: %s", m.Code, m.Message)
			case *pgproto3.CommandComplete:
				tag = string(m.CommandTag)
			case *pgproto3.CopyInResponse:
				if copyIn {
					return tag
				}
			case *pgproto3.ReadyForQuery:
				if !copyIn {
					return tag
				}
			}
		}
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := hc.Conn.Write(head); err != nil {
			b.Fatal(err)
		}
		readUntil(false) // begin; truncate
		readUntil(true)
		if _, err := hc.Conn.Write(data); err != nil {
			b.Fatal(err)
		}
		if tag := readUntil(false); tag != fmt.Sprintf("COPY %d", rows) {
			b.Fatalf("tag %q", tag)
		}
		if _, err := hc.Conn.Write(tail); err != nil {
			b.Fatal(err)
		}
		readUntil(false)
	}
}

package server_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/internal/lockdtest"
)

// BenchmarkPreparedPointSelect is pgbench -S -M prepared's transaction
// as libpq's PQexecPrepared sends it: Bind, Describe portal, Execute and
// Sync in one write, answered by BindComplete, RowDescription, DataRow,
// CommandComplete and ReadyForQuery in one read. The bytes and
// allocations are the server's and the client's together, the client's
// being a write and a read whose messages pgproto3 decodes in place:
//
//	go test ./server -run XXX -bench PreparedPointSelect -benchmem
func BenchmarkPreparedPointSelect(b *testing.B) {
	inst := lockdtest.Start(b, lockdtest.Options{Settings: []string{"fsync=off", "synchronous_commit=off"}})
	c := inst.Connect(b)
	ctx := context.Background()
	for _, q := range []string{
		"create table pgbench_accounts (aid int primary key, bid int, abalance int, filler char(84))",
		"insert into pgbench_accounts select g, 1, 0, '' from generate_series(1, 10000) g",
		"analyze pgbench_accounts",
	} {
		if _, err := c.Exec(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	hc, err := c.PgConn().Hijack()
	if err != nil {
		b.Fatal(err)
	}
	defer hc.Conn.Close()
	fe := hc.Frontend

	readUntil := func() int { return readToReady(b, fe) }
	var prep, step []byte
	prep, _ = (&pgproto3.Parse{Name: "P_1", Query: "SELECT abalance FROM pgbench_accounts WHERE aid = $1"}).Encode(prep)
	prep, _ = (&pgproto3.Sync{}).Encode(prep)
	if _, err := hc.Conn.Write(prep); err != nil {
		b.Fatal(err)
	}
	readUntil()
	// libpq names one result format, text
	step, _ = (&pgproto3.Bind{PreparedStatement: "P_1", Parameters: [][]byte{[]byte("1234")}, ResultFormatCodes: []int16{0}}).Encode(step)
	step, _ = (&pgproto3.Describe{ObjectType: 'P'}).Encode(step)
	step, _ = (&pgproto3.Execute{}).Encode(step)
	step, _ = (&pgproto3.Sync{}).Encode(step)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hc.Conn.Write(step); err != nil {
			b.Fatal(err)
		}
		if rows := readUntil(); rows != 1 {
			b.Fatalf("%d rows", rows)
		}
	}
}

// readToReady reads messages to the next ReadyForQuery, failing on an
// error, and counts the DataRows.
func readToReady(b *testing.B, fe *pgproto3.Frontend) (rows int) {
	for {
		msg, err := fe.Receive()
		if err != nil {
			b.Fatal(err)
		}
		switch m := msg.(type) {
		case *pgproto3.ErrorResponse:
			b.Fatalf("%s: %s", m.Code, m.Message)
		case *pgproto3.DataRow:
			rows++
		case *pgproto3.ReadyForQuery:
			return rows
		}
	}
}

package server_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"

	"lockd/internal/lockdtest"
)

// BenchmarkPreparedTPCB is pgbench's tpcb-like transaction under
// -M prepared: seven statements, each sent as Bind, Describe portal,
// Execute and Sync in one write and answered before the next is sent.
// An op is one transaction; the allocations are the server's (the
// client's messages are encoded before the loop):
//
//	go test ./server -run XXX -bench PreparedTPCB -benchmem
func BenchmarkPreparedTPCB(b *testing.B) {
	inst := lockdtest.Start(b, lockdtest.Options{Settings: []string{"fsync=off", "synchronous_commit=off"}})
	c := inst.Connect(b)
	ctx := context.Background()
	for _, q := range []string{
		"create table pgbench_branches (bid int primary key, bbalance int, filler char(88))",
		"create table pgbench_tellers (tid int primary key, bid int, tbalance int, filler char(84))",
		"create table pgbench_accounts (aid int primary key, bid int, abalance int, filler char(84))",
		"create table pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))",
		"insert into pgbench_branches select g, 0, '' from generate_series(1, 1) g",
		"insert into pgbench_tellers select g, 1, 0, '' from generate_series(1, 10) g",
		"insert into pgbench_accounts select g, 1, 0, '' from generate_series(1, 10000) g",
		"analyze",
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
	readUntil := func() { readToReady(b, fe) }
	stmts := []string{
		"BEGIN",
		"UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2",
		"SELECT abalance FROM pgbench_accounts WHERE aid = $1",
		"UPDATE pgbench_tellers SET tbalance = tbalance + $1 WHERE tid = $2",
		"UPDATE pgbench_branches SET bbalance = bbalance + $1 WHERE bid = $2",
		"INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ($1, $2, $3, $4, CURRENT_TIMESTAMP)",
		"END",
	}
	var prep []byte
	for i, q := range stmts {
		prep, _ = (&pgproto3.Parse{Name: fmt.Sprintf("P0_%d", i), Query: q}).Encode(prep)
	}
	prep, _ = (&pgproto3.Sync{}).Encode(prep)
	if _, err := hc.Conn.Write(prep); err != nil {
		b.Fatal(err)
	}
	readUntil()
	// 64 transactions' messages, with pgbench's random aid, tid and delta
	const variants = 64
	txs := make([][][]byte, variants)
	for v := range txs {
		aid, tid, delta := []byte(strconv.Itoa(1+v*151%10000)), []byte(strconv.Itoa(1+v%10)), []byte(strconv.Itoa(v*37%10001-5000))
		params := [][][]byte{nil, {delta, aid}, {aid}, {delta, tid}, {delta, []byte("1")}, {tid, []byte("1"), aid, delta}, nil}
		for i, p := range params {
			var m []byte
			m, _ = (&pgproto3.Bind{PreparedStatement: fmt.Sprintf("P0_%d", i), Parameters: p, ResultFormatCodes: []int16{0}}).Encode(m)
			m, _ = (&pgproto3.Describe{ObjectType: 'P'}).Encode(m)
			m, _ = (&pgproto3.Execute{}).Encode(m)
			m, _ = (&pgproto3.Sync{}).Encode(m)
			txs[v] = append(txs[v], m)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for _, m := range txs[i%variants] {
			if _, err := hc.Conn.Write(m); err != nil {
				b.Fatal(err)
			}
			readUntil()
		}
		i++
	}
}

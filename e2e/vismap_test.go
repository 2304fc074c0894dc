package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestCrashVisibilityMap: index-only scans answer from the index alone on
// the pages the visibility map calls all-visible, so after a crash a bit
// that survived must never cover a page with a tuple someone cannot see.
// Each round: VACUUM marks the pages, a checkpoint saves the map; then
// committed updates, deletes and inserts change some pages, a second
// VACUUM marks some again (its records after the checkpoint's redo
// point), and a transaction left open at the crash inserts into freed
// space, updates and deletes; a later commit flushes its records. After
// the crash (in process over the fault-injecting file system, or kill -9
// with -crash.binary) index-only scans of both indexes must find what a
// sequential scan and a plain index scan find — none of the open
// transaction's rows — with most pages still all-visible.
func TestCrashVisibilityMap(t *testing.T) {
	srv := &crashServer{t: t, dir: t.TempDir(), rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11)),
		settings: []string{"max_connections=20", "shared_buffers=1MB", "autovacuum=off"}}
	defer srv.stop()
	srv.start()
	ctx := context.Background()
	connect := func() *pgx.Conn {
		c, err := pgx.Connect(ctx, srv.dsn())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := connect()
	const rows = 40000
	for _, q := range []string{
		"create table vm_t (a int primary key, b int not null, pad text)",
		"create index vm_t_b on vm_t (b)",
		fmt.Sprintf("insert into vm_t select g, g %% 97, repeat('x', 60) from generate_series(1, %d) g", rows),
	} {
		exec1(t, c, q)
	}
	c.Close(ctx)
	want := int64(rows)
	next := int64(1000000) // keys of rows inserted later
	for round := 1; round <= *crashRounds; round++ {
		c := connect()
		lo := int64(srv.rng.IntN(rows - 1000))
		for _, q := range []string{
			"vacuum analyze vm_t",
			"checkpoint",
			fmt.Sprintf("update vm_t set b = b + 1000 where a %% 500 = %d", round),
			fmt.Sprintf("delete from vm_t where a between %d and %d", lo, lo+299),
			"vacuum vm_t",
			fmt.Sprintf("insert into vm_t values (%d, 7, 'new')", next),
		} {
			exec1(t, c, q)
		}
		want = int1(t, c, "select count(*) from vm_t") // the deleted range may hold deleted keys already
		open := connect()
		for _, q := range []string{
			"begin",
			fmt.Sprintf("insert into vm_t select g, 5000, 'y' from generate_series(%d, %d) g", next+1, next+300),
			fmt.Sprintf("update vm_t set b = -1 where a %% 777 = %d", round),
			fmt.Sprintf("delete from vm_t where a between %d and %d", lo+2000, lo+2049),
		} {
			exec1(t, open, q)
		}
		exec1(t, c, fmt.Sprintf("insert into vm_t values (%d, 8, 'flush')", next+1000)) // flushes the open one's records too
		next += 2000
		want++
		before := heapFetches(t, c, round)
		c.Close(ctx)
		how := srv.crash()
		open.Close(ctx)
		srv.start()

		c = connect()
		ck := checker{t, c}
		type result struct{ n, sumA, sumB int64 }
		query := func(settings, q, plan string) result {
			t.Helper()
			for _, s := range strings.Split(settings, ";") {
				exec1(t, c, "set "+s)
			}
			defer exec1(t, c, "reset all")
			var sb strings.Builder
			// the simple protocol: a prepared statement would keep the
			// plan it was first given, as PostgreSQL's plan cache does
			rs, err := c.Query(ctx, "explain "+q, pgx.QueryExecModeSimpleProtocol)
			if err != nil {
				t.Fatal(err)
			}
			for rs.Next() {
				var line string
				rs.Scan(&line)
				sb.WriteString(line + "\n")
			}
			if !strings.Contains(sb.String(), plan) {
				t.Fatalf("round %d: %s with %s is not a %s:\n%s", round, q, settings, plan, sb.String())
			}
			var r result
			if err := c.QueryRow(ctx, q, pgx.QueryExecModeSimpleProtocol).Scan(&r.n, &r.sumA, &r.sumB); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			return r
		}
		seqA := query("enable_indexscan = off", "select count(*), sum(a), 0::bigint from vm_t", "Seq Scan")
		seqB := query("enable_indexscan = off", "select count(*), sum(b), 0::bigint from vm_t where b >= -1000", "Seq Scan")
		if seqA.n != want {
			t.Fatalf("round %d: %d rows after the crash, want %d", round, seqA.n, want)
		}
		for _, tc := range []struct {
			settings, q, plan string
			want              result
		}{
			{"enable_seqscan = off", "select count(*), sum(a), 0::bigint from vm_t", "Index Only Scan using vm_t_pkey", seqA},
			{"enable_seqscan = off;enable_indexonlyscan = off", "select count(*), sum(a), 0::bigint from vm_t where a > 0", "Index Scan using vm_t_pkey", seqA},
			{"enable_seqscan = off", "select count(*), sum(b), 0::bigint from vm_t where b >= -1000", "Index Only Scan using vm_t_b", seqB},
			{"enable_seqscan = off;enable_indexonlyscan = off;enable_bitmapscan = off", "select count(*), sum(b), 0::bigint from vm_t where b >= -1000", "Index Scan using vm_t_b", seqB},
		} {
			if got := query(tc.settings, tc.q, tc.plan); got != tc.want {
				t.Fatalf("round %d: %s (%s) found %+v, a sequential scan %+v", round, tc.q, tc.plan, got, tc.want)
			}
		}
		// The map came back as it was: the same pages need heap fetches
		// (those the open transaction and the last insert changed: up to
		// half of them, as the open transaction's new rows go to the room
		// VACUUM left on many pages), the others are all-visible.
		fetches := heapFetches(t, c, round)
		if fetches != before || fetches*5 > want*4 {
			t.Fatalf("round %d: %d heap fetches after the crash, %d before it (%d rows)", round, fetches, before, want)
		}
		if _, err := ck.indexAgrees("vm_t", "a", "int4"); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		line := fmt.Sprintf("visibility map round %d: %s; %d rows, index-only scans agree with a sequential scan, %d heap fetches before and after", round, how, want, fetches)
		t.Log(line)
		if *crashLogFile != "" {
			if f, err := os.OpenFile(*crashLogFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				fmt.Fprintln(f, line)
				f.Close()
			}
		}
		c.Close(ctx)
	}
}

// heapFetches runs an index-only scan of vm_t's primary key and returns
// its heap fetches.
func heapFetches(t *testing.T, c *pgx.Conn, round int) int64 {
	t.Helper()
	exec1(t, c, "set enable_seqscan = off")
	defer exec1(t, c, "reset enable_seqscan")
	var plan strings.Builder
	rs, err := c.Query(context.Background(), "explain (analyze, costs off, timing off, summary off) select count(*) from vm_t where a > 0", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var line string
		rs.Scan(&line)
		plan.WriteString(line + "\n")
	}
	m := regexp.MustCompile(`Heap Fetches: (\d+)`).FindStringSubmatch(plan.String())
	if m == nil || !strings.Contains(plan.String(), "Index Only Scan using vm_t_pkey") {
		t.Fatalf("round %d: no index-only scan with heap fetches in\n%s", round, plan.String())
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

package exec_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// Bitmap heap scans read under the statement's snapshot while other
// sessions move money between rows and move rows between the arms of the
// scan's OR (updating the indexed column): every scan sees all rows once
// and the total unchanged, whether its pages are exact or — with work_mem
// at its minimum, 2,500 pages over the bitmap's 1,024 entries — lossy and
// rechecked.
func TestBitmapScanConcurrentUpdates(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	const rows = 20000
	lockdtest.MustExec(t, c, "create table bmc (a int primary key, b int, v int, filler text)")
	lockdtest.MustExec(t, c, "insert into bmc select g, g % 1000, 0, repeat('x', 900) from generate_series(1, 20000) g")
	lockdtest.MustExec(t, c, "create index bmc_b on bmc (b)")
	lockdtest.MustExec(t, c, "vacuum analyze bmc")

	ctx := context.Background()
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			conn, err := pgx.Connect(ctx, inst.ConnString())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close(ctx)
			for i := 0; !stop.Load(); i++ {
				x, y := 1+(i*7919+w*13)%rows, 1+(i*104729+w*17)%rows
				tx, err := conn.Begin(ctx)
				if err != nil {
					errs <- err
					return
				}
				_, err = tx.Exec(ctx, "update bmc set v = v - 1, b = (b + 500) % 1000 where a = $1", x)
				if err == nil {
					_, err = tx.Exec(ctx, "update bmc set v = v + 1 where a = $1", y)
				}
				if err != nil {
					tx.Rollback(ctx)
					if strings.Contains(err.Error(), "40P01") {
						continue // two transfers deadlocked: one gives way
					}
					errs <- err
					return
				}
				if err := tx.Commit(ctx); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	for _, mem := range []string{"4MB", "64kB"} {
		lockdtest.MustExec(t, c, "set work_mem = '"+mem+"'")
		lockdtest.MustExec(t, c, "set enable_seqscan = off")
		lockdtest.MustExec(t, c, "set enable_indexscan = off")
		plan := lockdtest.QueryText(t, c, "explain (analyze, costs off, timing off, summary off) select count(*) from bmc where b < 500 or b >= 500")
		if !strings.Contains(plan, "BitmapOr") || (mem == "64kB") != strings.Contains(plan, "lossy=") {
			t.Fatalf("work_mem %s:\n%s", mem, plan)
		}
		for i := 0; i < 15; i++ {
			got := lockdtest.QueryText(t, c, "select count(*), sum(v), count(distinct a) from bmc where b < 500 or b >= 500")
			if got != "20000,0,20000" {
				t.Fatalf("work_mem %s, scan %d: count, sum, distinct = %s, want 20000,0,20000", mem, i, got)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// On lossy pages the heap scan rechecks the index conditions: EXPLAIN
// ANALYZE counts the rows they remove apart from the filter's, and the
// answer is the exact one.
func TestBitmapScanLossyRecheck(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	lockdtest.MustExec(t, c, "create table bml (a int, b int, filler text)")
	lockdtest.MustExec(t, c, "insert into bml select g, g % 1000, repeat('x', 900) from generate_series(1, 20000) g")
	lockdtest.MustExec(t, c, "create index bml_b on bml (b)")
	lockdtest.MustExec(t, c, "vacuum analyze bml")
	lockdtest.MustExec(t, c, "set work_mem = '64kB'")
	lockdtest.MustExec(t, c, "set enable_seqscan = off")
	plan := lockdtest.QueryText(t, c, "explain (analyze, costs off, timing off, summary off) select * from bml where b < 700 and a % 2 = 0")
	for _, want := range []string{"Bitmap Heap Scan on bml", "Recheck Cond: (b < 700)", "Rows Removed by Index Recheck:", "Filter: ((a % 2) = 0)", "Rows Removed by Filter: 7000", "lossy=", "Bitmap Index Scan on bml_b (actual rows=14000 loops=1)"} {
		if !strings.Contains(plan, want) {
			t.Errorf("no %q in\n%s", want, plan)
		}
	}
	if got := lockdtest.QueryText(t, c, "select count(*), sum(a) from bml where b < 700 and a % 2 = 0"); got != "7000,68963000" {
		t.Errorf("count, sum = %s", got)
	}
}

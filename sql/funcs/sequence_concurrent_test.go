package funcs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// nextvals calls nextval(seq) n times on each of workers connections at
// once and returns every value handed out.
func nextvals(t *testing.T, inst *lockdtest.Instance, seq string, workers, n int) []int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conns := make([]*pgx.Conn, workers)
	for i := range conns {
		conns[i] = inst.Connect(t)
	}
	vals := make([][]int64, workers)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				var v int64
				if err := conns[w].QueryRow(ctx, "select nextval($1)", seq).Scan(&v); err != nil {
					errs <- err
					return
				}
				vals[w] = append(vals[w], v)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var all []int64
	for _, v := range vals {
		all = append(all, v...)
	}
	return all
}

func distinct(t *testing.T, vals []int64) map[int64]bool {
	t.Helper()
	seen := map[int64]bool{}
	for _, v := range vals {
		if seen[v] {
			t.Fatalf("value %d handed out twice", v)
		}
		seen[v] = true
	}
	return seen
}

// Eight sessions calling nextval at once get distinct values: with no
// cache exactly 1..8000, with a cache of 10 no more than 10 per session
// left unused.
func TestSequenceConcurrentNextval(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	lockdtest.MustExec(t, c, "create sequence s")
	lockdtest.MustExec(t, c, "create sequence c cache 10")
	const workers, n = 8, 1000

	seen := distinct(t, nextvals(t, inst, "s", workers, n))
	if len(seen) != workers*n {
		t.Fatalf("%d values, want %d", len(seen), workers*n)
	}
	for v := int64(1); v <= workers*n; v++ {
		if !seen[v] {
			t.Fatalf("value %d never handed out (no cache: the values are 1..%d)", v, workers*n)
		}
	}
	if got := lockdtest.QueryText(t, c, "select last_value, is_called from s"); got != fmt.Sprintf("%d,t", workers*n) {
		t.Fatalf("s after the run: %s", got)
	}

	// with a cache every session takes 10 values at a time: distinct, and
	// at most 10 per session left unused
	seen = distinct(t, nextvals(t, inst, "c", workers, n))
	if len(seen) != workers*n {
		t.Fatalf("cached: %d values, want %d", len(seen), workers*n)
	}
	var last int64
	if err := c.QueryRow(context.Background(), "select last_value from c").Scan(&last); err != nil {
		t.Fatal(err)
	}
	for v := range seen {
		if v < 1 || v > last {
			t.Fatalf("cached: value %d outside 1..%d", v, last)
		}
	}
	if last > workers*n+workers*10 {
		t.Fatalf("cached: last_value %d, more than %d", last, workers*n+workers*10)
	}
}

// Four sessions inserting into a serial column at once get the ids
// 1..1000, each once.
func TestSerialConcurrentInserts(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	lockdtest.MustExec(t, c, "create table t (id serial primary key, w int)")
	const workers, n = 4, 250
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		cw := inst.Connect(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n {
				if _, err := cw.Exec(context.Background(), "insert into t (w) values ($1)", w); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := lockdtest.QueryText(t, c, "select count(*), count(distinct id), min(id), max(id) from t"); got != "1000,1000,1,1000" {
		t.Fatalf("serial ids: %s", got)
	}
}

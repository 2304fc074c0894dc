package sql

import (
	"context"
	"fmt"
	"testing"

	"lockd/sql/plan"
	"lockd/sql/types"
)

// The relation locks of prepared statements' executions follow
// PostgreSQL 15's plan cache: custom plans for the first five executions
// with parameters, a generic plan weighed at the sixth, cached generic
// plans that lock the range table and only the indexes they scan.
// PostgreSQL showed the same counts for pgbench_accounts with 100
// partitions: 3 locks per custom plan, 201 at the sixth execution, 3
// after; with force_generic_plan 201 and then 102.

// planCacheTables makes pt, range partitioned on a into pt1..pt4 of ten
// values each, every partition with its primary key, and t, a plain table
// with two indexes.
func planCacheTables(t *testing.T, s *Session) {
	t.Helper()
	mustRun(t, s, "create table pt (a int primary key, b int) partition by range (a)")
	for i := 1; i <= 4; i++ {
		mustRun(t, s, fmt.Sprintf("create table pt%d partition of pt for values from (%d) to (%d)", i, (i-1)*10, i*10))
	}
	mustRun(t, s, "insert into pt select g, g from generate_series(0, 39) g",
		"create table t (id int primary key, v int)", "create index t_v on t (v)",
		"insert into t select g, g from generate_series(1, 10) g")
}

// execLocks executes st with params in its own transaction and returns
// the relation locks it held.
func execLocks(t *testing.T, s *Session, st *plan.Stmt, params ...types.Datum) string {
	t.Helper()
	mustRun(t, s, "begin")
	defer mustRun(t, s, "commit")
	rows := 0
	if _, err := s.Execute(context.Background(), st, params, func([]types.Datum) error { rows++; return nil }); err != nil {
		t.Fatalf("%s: %v", st.Text, err)
	}
	if rows == 0 {
		t.Errorf("%s: no rows", st.Text)
	}
	return heldRelationLocks(s, false)
}

const (
	ptCustom  = "pt:AccessShare pt1:AccessShare pt1_pkey:AccessShare"
	ptPlanned = "pt:AccessShare pt1:AccessShare pt1_pkey:AccessShare pt2:AccessShare pt2_pkey:AccessShare pt3:AccessShare pt3_pkey:AccessShare pt4:AccessShare pt4_pkey:AccessShare"
	ptReused  = "pt:AccessShare pt1:AccessShare pt1_pkey:AccessShare pt2:AccessShare pt3:AccessShare pt4:AccessShare"
)

func TestPlanCacheLocks(t *testing.T) {
	_, s := testEngine(t, -1)
	planCacheTables(t, s)
	five := func(t *testing.T, st *plan.Stmt, want string, params ...types.Datum) {
		t.Helper()
		for i := 1; i <= 5; i++ {
			if got := execLocks(t, s, st, params...); got != sortedWords(want) {
				t.Fatalf("execution %d:\n got %s\nwant %s", i, got, sortedWords(want))
			}
		}
	}
	step := func(t *testing.T, st *plan.Stmt, n int, want string, params ...types.Datum) {
		t.Helper()
		if got := execLocks(t, s, st, params...); got != sortedWords(want) {
			t.Errorf("execution %d:\n got %s\nwant %s", n, got, sortedWords(want))
		}
	}
	n := 0
	prepare := func(t *testing.T, named bool, q string) *plan.Stmt {
		t.Helper()
		var st *plan.Stmt
		var err error
		if named {
			n++
			st, err = s.PrepareNamed(fmt.Sprint("p", n), q, nil)
		} else {
			st, err = s.Prepare(q, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	key := types.IntDatum(5)

	t.Run("auto: pruning on a parameter keeps custom plans", func(t *testing.T) {
		st := prepare(t, true, "select b from pt where a = $1")
		five(t, st, ptCustom, key)
		step(t, st, 6, ptPlanned, key) // the generic plan is planned and rejected
		step(t, st, 7, ptCustom, key)
		step(t, st, 8, ptCustom, key)
	})
	t.Run("auto: a plain table goes generic at the sixth execution", func(t *testing.T) {
		st := prepare(t, true, "select v from t where id = $1")
		five(t, st, "t:AccessShare t_pkey:AccessShare t_v:AccessShare", key)
		step(t, st, 6, "t:AccessShare t_pkey:AccessShare t_v:AccessShare", key)
		step(t, st, 7, "t:AccessShare t_pkey:AccessShare", key) // the generic plan scans t_pkey only
		step(t, st, 8, "t:AccessShare t_pkey:AccessShare", key)
	})
	t.Run("no parameters: generic from the first execution", func(t *testing.T) {
		st := prepare(t, true, "select count(*) from pt")
		step(t, st, 1, ptPlanned)
		step(t, st, 2, "pt:AccessShare pt1:AccessShare pt2:AccessShare pt3:AccessShare pt4:AccessShare")
	})
	t.Run("constants prune a generic plan when it is planned", func(t *testing.T) {
		st := prepare(t, true, "select b from pt where a = 5")
		step(t, st, 1, ptCustom)
		step(t, st, 2, ptCustom)
	})
	t.Run("force_generic_plan", func(t *testing.T) {
		mustRun(t, s, "set plan_cache_mode = force_generic_plan")
		defer mustRun(t, s, "reset plan_cache_mode")
		st := prepare(t, true, "select b from pt where a = $1")
		step(t, st, 1, ptPlanned, key)
		step(t, st, 2, ptReused, key)
		step(t, st, 3, ptReused, key)
		unnamed := prepare(t, false, "select b from pt where a = $1")
		step(t, unnamed, 1, ptPlanned, key)
		step(t, unnamed, 2, ptPlanned, key) // never cached
	})
	t.Run("force_custom_plan", func(t *testing.T) {
		mustRun(t, s, "set plan_cache_mode = force_custom_plan")
		defer mustRun(t, s, "reset plan_cache_mode")
		st := prepare(t, true, "select v from t where id = $1")
		for i := 1; i <= 7; i++ {
			step(t, st, i, "t:AccessShare t_pkey:AccessShare t_v:AccessShare", key)
		}
	})
	t.Run("invalidation plans the generic plan again", func(t *testing.T) {
		st := prepare(t, true, "select count(*) from t")
		step(t, st, 1, "t:AccessShare t_pkey:AccessShare t_v:AccessShare")
		step(t, st, 2, "t:AccessShare")
		mustRun(t, s, "create index t_v2 on t (v, id)")
		step(t, st, 3, "t:AccessShare t_pkey:AccessShare t_v:AccessShare t_v2:AccessShare")
		step(t, st, 4, "t:AccessShare")
	})
}

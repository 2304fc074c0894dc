package exec_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// upsertWorkers runs fn in n goroutines, each with its own connection
// (every other one on the simple protocol), and fails on any error.
func upsertWorkers(t *testing.T, inst *lockdtest.Instance, n int, fn func(w int, c *pgx.Conn) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := 0; w < n; w++ {
		cfg, err := pgx.ParseConfig(inst.ConnString())
		if err != nil {
			t.Fatal(err)
		}
		if w%2 == 1 {
			cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		}
		c, err := pgx.ConnectConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close(context.Background())
			if err := fn(w, c); err != nil {
				errs <- fmt.Errorf("worker %d: %w", w, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Eight sessions racing ON CONFLICT DO UPDATE increments on a few keys
// lose no update and never see 23505; racing DO NOTHING inserts leave one
// row per key, each inserted by exactly one statement.
func TestUpsertRaces(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	lockdtest.MustExec(t, c, "create table ctr (k int primary key, n int not null)")
	const workers, each, keys = 8, 60, 4
	upsertWorkers(t, inst, workers, func(w int, c *pgx.Conn) error {
		for i := 0; i < each; i++ {
			k := (w + i) % keys
			if _, err := c.Exec(context.Background(), "insert into ctr values ($1, 1) on conflict (k) do update set n = ctr.n + 1", k); err != nil {
				return err
			}
		}
		return nil
	})
	want := make([]string, keys)
	for k := range want {
		want[k] = fmt.Sprintf("%d,%d", k, workers*each/keys)
	}
	if got := lockdtest.QueryText(t, c, "select k, n from ctr order by k"); got != strings.Join(want, "|") {
		t.Errorf("counts: %s, want %s", got, strings.Join(want, "|"))
	}

	lockdtest.MustExec(t, c, "create table once (k int primary key, w int)")
	const nkeys = 150
	var mu sync.Mutex
	inserted := 0
	upsertWorkers(t, inst, workers, func(w int, c *pgx.Conn) error {
		for k := 0; k < nkeys; k++ {
			tag, err := c.Exec(context.Background(), "insert into once values ($1, $2) on conflict do nothing", k, w)
			if err != nil {
				return err
			}
			mu.Lock()
			inserted += int(tag.RowsAffected())
			mu.Unlock()
		}
		return nil
	})
	if got := lockdtest.QueryText(t, c, "select count(*), count(distinct k) from once"); got != fmt.Sprintf("%d,%d", nkeys, nkeys) {
		t.Errorf("rows, keys: %s, want %d of each", got, nkeys)
	}
	if inserted != nkeys {
		t.Errorf("statements that inserted: %d, want %d", inserted, nkeys)
	}
}

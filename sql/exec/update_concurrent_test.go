package exec_test

import (
	"context"
	"strconv"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"lockd/internal/lockdtest"
)

// Six sessions incrementing one row at once lose no update: each waits
// for the row's updater and re-reads the committed row (READ COMMITTED).
func TestConcurrentIncrements(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	lockdtest.MustExec(t, c, "create table ctr (id int primary key, n int)")
	lockdtest.MustExec(t, c, "insert into ctr values (1, 0)")
	const workers, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := pgx.Connect(context.Background(), inst.ConnString())
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close(context.Background())
			for i := 0; i < each; i++ {
				if _, err := conn.Exec(context.Background(), "update ctr set n = n + 1 where id = 1"); err != nil {
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
	if got := lockdtest.QueryText(t, c, "select n from ctr"); got != strconv.Itoa(workers*each) {
		t.Fatalf("n = %s, want %d", got, workers*each)
	}
}

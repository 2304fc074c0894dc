package server_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

// A client whose socket goes away without a Terminate message loses its
// session, and the session's locks are released with it.
func TestKilledClientReleasesLocks(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	observer := inst.Connect(t)
	// a raw pgconn whose socket we close without Terminate
	var raw net.Conn
	cfg, _ := pgconn.ParseConfig(inst.ConnString())
	dial := cfg.DialFunc
	cfg.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		raw = c
		return c, err
	}
	pc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, "begin; select pg_advisory_lock(77); select pg_advisory_xact_lock(78)").ReadAll(); err != nil {
		t.Fatal(err)
	}
	raw.Close()
	start := time.Now()
	waitFor(t, "locks freed", func() bool {
		var n int
		err := observer.QueryRow(ctx, "select count(*) from pg_locks where locktype = 'advisory'").Scan(&n)
		return err == nil && n == 0
	})
	if d := time.Since(start); d > time.Second {
		t.Errorf("locks freed after %v, want within a second", d)
	}
	var got bool
	if err := observer.QueryRow(ctx, "select pg_try_advisory_lock(77)").Scan(&got); err != nil || !got {
		t.Fatalf("lock 77 not free: %v %v", got, err)
	}
}

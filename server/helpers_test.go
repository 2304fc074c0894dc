package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Helpers of the server's tests. The SQL-semantics tests moved to sql/
// (scripts in sql/*/testdata/scripts, run by each package's script_test.go); what
// stays here tests the wire protocol and the server's lifecycle.

func mustExec(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// queryText runs sql on the simple protocol and returns the last result's
// rows as "a,b|c,d" (NULL for a null).
func queryText(t *testing.T, c *pgx.Conn, sql string) string {
	t.Helper()
	rs, err := c.PgConn().Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out []string
	for _, r := range rs[len(rs)-1].Rows {
		var f []string
		for _, v := range r {
			if v == nil {
				f = append(f, "NULL")
			} else {
				f = append(f, string(v))
			}
		}
		out = append(out, strings.Join(f, ","))
	}
	return strings.Join(out, "|")
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

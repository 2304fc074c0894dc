package sql_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The Go tests in this package talk to a real lockd over TCP, as the SQL
// scripts do; they are the tests a script cannot say: many sessions at
// once, counted afterwards.

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

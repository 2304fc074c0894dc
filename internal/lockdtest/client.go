package lockdtest

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// MustExec runs sql (with args) and fails the test on an error.
func MustExec(t testing.TB, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	if _, err := c.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// QueryText runs sql on the simple protocol and returns the last result's
// rows as "a,b|c,d" (NULL for a null).
func QueryText(t testing.TB, c *pgx.Conn, sql string) string {
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

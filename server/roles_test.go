package server_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

// Roles as a client sees them at connection time and when it is not a
// superuser (the superuser's side is in sql/commands/testdata/scripts/roles.txt).

// connectAs opens a connection as user with password (may be empty)
// and returns it, or the server's error.
func connectAs(t *testing.T, inst *lockdtest.Instance, user, password string) (*pgx.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=%s dbname=postgres sslmode=disable", inst.Port, user)
	if password != "" {
		dsn += " password=" + password
	}
	c, err := pgx.Connect(ctx, dsn)
	if err == nil {
		t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, err
}

// wantPgError checks that err is a server error with that SQLSTATE and
// message (and severity FATAL when fatal).
func wantPgError(t *testing.T, what string, err error, code, msg string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("%s: got %v, want %s %s", what, err, code, msg)
	}
	if pe.Code != code || pe.Message != msg {
		t.Fatalf("%s: got %s %s %q, want %s %q", what, pe.Severity, pe.Code, pe.Message, code, msg)
	}
}

func TestConnectRoles(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	admin := inst.Connect(t)
	_, err := connectAs(t, inst, "nobody", "")
	wantPgError(t, "unknown role", err, "28000", `role "nobody" does not exist`)

	mustExec(t, admin, "create role nologin_role")
	_, err = connectAs(t, inst, "nologin_role", "")
	wantPgError(t, "NOLOGIN role", err, "28000", `role "nologin_role" is not permitted to log in`)

	mustExec(t, admin, "create role limited login connection limit 1")
	c1, err := connectAs(t, inst, "limited", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = connectAs(t, inst, "limited", "")
	wantPgError(t, "connection limit", err, "53300", `too many connections for role "limited"`)
	c1.Close(context.Background())
	waitFor(t, "limited's session to end", func() bool {
		return queryText(t, admin, "select count(*) from pg_stat_activity where usename = 'limited'") == "0"
	})
	// A backend leaves pg_stat_activity a moment before it stops counting
	// against the limit (in PostgreSQL too: its activity entry is cleared
	// before its proc leaves the proc array), so a new session may be
	// refused for that moment, and must be admitted after it.
	waitFor(t, "a new session of limited to be admitted", func() bool {
		_, err = connectAs(t, inst, "limited", "")
		var pe *pgconn.PgError
		if err != nil && (!errors.As(err, &pe) || pe.Code != "53300") {
			t.Fatalf("after the first session ended: %v", err)
		}
		return err == nil
	})
}

func TestRolePrivileges(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	admin := inst.Connect(t)
	mustExec(t, admin, "create role alice login")
	mustExec(t, admin, "create role manager login createrole")
	alice, err := connectAs(t, inst, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct{ sql, code, msg string }{
		{"select * from pg_authid", "42501", "permission denied for table pg_authid"},
		{"create role x", "42501", "permission denied to create role"},
		{"create role x superuser", "42501", "must be superuser to create superusers"},
		{"alter role postgres nologin", "42501", "must be superuser to alter superuser roles or change superuser attribute"},
		{"alter role manager nologin", "42501", "permission denied"},
		{"alter role alice createdb", "42501", "permission denied"},
		{"drop role manager", "42501", "permission denied to drop role"},
	} {
		_, err := alice.Exec(ctx, c.sql)
		wantPgError(t, c.sql, err, c.code, c.msg)
	}
	if got := alice.PgConn().ParameterStatus("is_superuser"); got != "off" {
		t.Fatalf("is_superuser reported %q to a role that is not a superuser", got)
	}
	// Superuser-only operations, with PostgreSQL 15's messages.
	var adminPID int
	if err := admin.QueryRow(ctx, "select pg_backend_pid()").Scan(&adminPID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ sql, code, msg string }{
		{"alter system set work_mem = '1MB'", "42501", "must be superuser to execute ALTER SYSTEM command"},
		{"select pg_reload_conf()", "42501", "permission denied for function pg_reload_conf"},
		{"checkpoint", "42501", "must be superuser or have privileges of pg_checkpoint to do CHECKPOINT"},
		{"set commit_delay = 10", "42501", `permission denied to set parameter "commit_delay"`},
		{"select set_config('commit_delay', '10', false)", "42501", `permission denied to set parameter "commit_delay"`},
		{fmt.Sprintf("select pg_terminate_backend(%d)", adminPID), "42501", "must be a superuser to terminate superuser process"},
		{fmt.Sprintf("select pg_cancel_backend(%d)", adminPID), "42501", "must be a superuser to cancel superuser query"},
	} {
		_, err := alice.Exec(ctx, c.sql)
		wantPgError(t, c.sql, err, c.code, c.msg)
	}
	mustExec(t, alice, "set work_mem = '8MB'") // a user setting
	_, err = alice.Exec(ctx, "set session authorization postgres")
	wantPgError(t, "SET SESSION AUTHORIZATION", err, "42501", "permission denied to set session authorization")
	mustExec(t, alice, "set session authorization alice")
	mustExec(t, alice, "reset session authorization")
	mustExec(t, alice, "set role alice")
	mustExec(t, alice, "set role none")
	mustExec(t, alice, "reset role")
	_, err = alice.Exec(ctx, "set role postgres")
	wantPgError(t, "SET ROLE", err, "42501", `permission denied to set role "postgres"`)
	_, err = admin.Exec(ctx, "set role alice")
	wantPgError(t, "SET ROLE by a superuser", err, "0A000", "SET ROLE to another role is not supported by lockd")
	_, err = admin.Exec(ctx, "set session authorization alice")
	wantPgError(t, "SET SESSION AUTHORIZATION by a superuser", err, "0A000", "SET SESSION AUTHORIZATION to another role is not supported by lockd")
	ctx5, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = pgx.Connect(ctx5, fmt.Sprintf("host=127.0.0.1 port=%d user=alice dbname=postgres sslmode=disable options='-c commit_delay=10'", inst.Port))
	wantPgError(t, "PGOPTIONS with a superuser setting", err, "42501", `permission denied to set parameter "commit_delay"`)
	// A role signals its own backends only.
	mustExec(t, admin, "create role carol login")
	carol, err := connectAs(t, inst, "carol", "")
	if err != nil {
		t.Fatal(err)
	}
	var carolPID int
	if err := carol.QueryRow(ctx, "select pg_backend_pid()").Scan(&carolPID); err != nil {
		t.Fatal(err)
	}
	_, err = alice.Exec(ctx, fmt.Sprintf("select pg_cancel_backend(%d)", carolPID))
	wantPgError(t, "cancel another role's query", err, "42501", "must be a member of the role whose query is being canceled or member of pg_signal_backend")
	_, err = alice.Exec(ctx, fmt.Sprintf("select pg_terminate_backend(%d)", carolPID))
	wantPgError(t, "terminate another role's backend", err, "42501", "must be a member of the role whose process is being terminated or member of pg_signal_backend")
	alice2, err := connectAs(t, inst, "alice", "")
	if err != nil {
		t.Fatal(err)
	}
	var alice2PID int
	if err := alice2.QueryRow(ctx, "select pg_backend_pid()").Scan(&alice2PID); err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, alice, fmt.Sprintf("select pg_cancel_backend(%d)", alice2PID)); got != "t" {
		t.Fatalf("cancel one's own backend: %s", got)
	}

	// A role may change its own password.
	mustExec(t, alice, "alter role alice password 'new'")
	mustExec(t, alice, "alter role current_user password 'newer'")
	if got := queryText(t, alice, "select count(*) from pg_roles where rolname = 'alice'"); got != "1" {
		t.Fatalf("pg_roles is readable by everyone: got %s", got)
	}

	manager, err := connectAs(t, inst, "manager", "")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, manager, "create role bob login createdb")
	mustExec(t, manager, "alter role bob nologin")
	_, err = manager.Exec(ctx, "create role boss superuser")
	wantPgError(t, "CREATEROLE making a superuser", err, "42501", "must be superuser to create superusers")
	_, err = manager.Exec(ctx, "drop role postgres")
	wantPgError(t, "drop a superuser", err, "42501", "must be superuser to drop superusers")
	_, err = manager.Exec(ctx, "drop role manager")
	wantPgError(t, "drop oneself", err, "55006", "current user cannot be dropped")
	mustExec(t, manager, "drop role bob")

	// Another superuser cannot drop the bootstrap superuser either: it
	// owns every object.
	mustExec(t, admin, "create role boss login superuser")
	boss, err := connectAs(t, inst, "boss", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = boss.Exec(ctx, "drop role postgres")
	wantPgError(t, "drop the bootstrap superuser", err, "2BP01", "cannot drop role postgres because it is required by the database system")
}

// lockd -U: the bootstrap superuser of a new data directory gets that
// name, and keeps it across restarts.
func TestBootstrapUser(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{BootstrapUser: "admin"})
	_, err := connectAs(t, inst, "postgres", "")
	wantPgError(t, "postgres on a directory made with -U admin", err, "28000", `role "postgres" does not exist`)
	c, err := connectAs(t, inst, "admin", "")
	if err != nil {
		t.Fatal(err)
	}
	if got := queryText(t, c, "select rolname, rolsuper from pg_roles where oid = 10"); got != "admin,t" {
		t.Fatalf("bootstrap role: %s", got)
	}
	mustExec(t, c, "create table owned (id int)")
	if got := queryText(t, c, "select tableowner from pg_tables where tablename = 'owned'"); got != "admin" {
		t.Fatalf("table owner: %s", got)
	}
	c.Close(context.Background())
	inst.Restart(t)
	if _, err := connectAs(t, inst, "admin", ""); err != nil {
		t.Fatalf("after a restart: %v", err)
	}
}

package server_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"lockd/internal/lockdtest"
)

func pgErr(t *testing.T, err error) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("want a PostgreSQL error, got %v", err)
	}
	return pe
}

func TestSelectWithoutFrom(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	cases := []struct {
		sql  string
		want string
	}{
		{"select 1", "1"},
		{"select 1 + 2 * 3", "7"},
		{"select 7 / 2", "3"},
		{"select 7 % 3", "1"},
		{"select 1.5 + 1", "2.5"},
		{"select 1::numeric / 3", "0.33333333333333333333"},
		{"select 10::numeric / 3", "3.3333333333333333"},
		{"select 2.5::float8 * 2", "5"},
		{"select 'a' || 'b' || 1", "ab1"},
		{"select 3000000000", "3000000000"},
		{"select -2147483648::int8", "-2147483648"},
		{"select 1 < 2 and not false", "t"},
		{"select (null is null)::text", "true"},
		{"select case when 1 = 2 then 'x' else 'y' end", "y"},
		{"select coalesce(null, 'z')", "z"},
		{"select greatest(1, 5, 3)", "5"},
		{"select least(4, 2.5)", "2.5"},
		{"select '42'::int + 1", "43"},
		{"select cast('t' as boolean)", "t"},
		{"select 5 in (1, 5, 9)", "t"},
		{"select 5 between 1 and 4", "f"},
		{"select length('héllo')", "5"},
		{"select upper('abc')", "ABC"},
		{"select substr('abcdef', 2, 3)", "bcd"},
		{"select lpad('7', 3, '0')", "007"},
		{"select repeat('ab', 3)", "ababab"},
		{"select md5('a')", "0cc175b9c0f1b6a831c399e269772661"},
		{"select abs(-4)", "4"},
		{"select 'abc' like 'a%'", "t"},
		{"select 'ABC' ilike 'a_c'", "t"},
		{"select current_setting('deadlock_timeout')", "1s"},
		{"select current_setting('no_such_thing', true) is null", "t"},
		{"select count(*) from generate_series(1, 10)", "10"},
		{"select sum(g) from generate_series(1, 10) g", "55"},
		{"select avg(g) from generate_series(1, 4) g", "2.5000000000000000"},
		{"select max(g) from generate_series(1, 4) g where g < 3", "2"},
		{"select count(*) filter (where g % 2 = 0) from generate_series(1, 9) g", "4"},
	}
	for _, tc := range cases {
		rs, err := c.PgConn().Exec(ctx, tc.sql).ReadAll()
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got := string(rs[0].Rows[0][0]); got != tc.want {
			got := string(rs[0].Rows[0][0])
			t.Errorf("%s = %q, want %q", tc.sql, got, tc.want)
		}
	}
}

func TestResultTypes(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	rows, err := c.Query(context.Background(), "select 1, 3000000000, 1.5, 'x', true, 1.5::float8, now(), version(), pg_backend_pid(), count(*) from generate_series(1,3)", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := []uint32{23, 20, 1700, 25, 16, 701, 1184, 25, 23, 20}
	fds := rows.FieldDescriptions()
	if len(fds) != len(want) {
		t.Fatalf("got %d columns", len(fds))
	}
	for i, fd := range fds {
		if fd.DataTypeOID != want[i] {
			t.Errorf("column %d (%s): type %d, want %d", i, fd.Name, fd.DataTypeOID, want[i])
		}
	}
	for rows.Next() {
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
}

func TestBinaryResults(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	// pgx asks for binary results for these types in the extended protocol.
	var (
		i4  int32
		i8  int64
		f8  float64
		b   bool
		s   string
		ts  time.Time
		num float64
	)
	err := c.QueryRow(context.Background(), "select $1::int + 1, 3000000000, 0.25::float8, $2::bool, 'x' || $3, now(), 12.75::numeric",
		41, true, "y").Scan(&i4, &i8, &f8, &b, &s, &ts, &num)
	if err != nil {
		t.Fatal(err)
	}
	if i4 != 42 || i8 != 3000000000 || f8 != 0.25 || !b || s != "xy" || time.Since(ts) > time.Minute || num != 12.75 {
		t.Fatalf("got %v %v %v %v %q %v %v", i4, i8, f8, b, s, ts, num)
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	_, err := c.Exec(context.Background(), "select 1 +", pgx.QueryExecModeSimpleProtocol)
	pe := pgErr(t, err)
	if pe.Code != "42601" || pe.Message != "syntax error at end of input" || pe.Position != 11 {
		t.Fatalf("got %s %q position %d", pe.Code, pe.Message, pe.Position)
	}
	_, err = c.Exec(context.Background(), "selec 1")
	pe = pgErr(t, err)
	if pe.Code != "42601" || pe.Message != `syntax error at or near "selec"` || pe.Position != 1 {
		t.Fatalf("got %s %q position %d", pe.Code, pe.Message, pe.Position)
	}
}

func TestErrors(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	cases := []struct{ sql, code, msg string }{
		{"select 1/0", "22012", "division by zero"},
		{"select x", "42703", `column "x" does not exist`},
		{"select * from no_such_table", "42P01", `relation "no_such_table" does not exist`},
		{"select no_such_func(1)", "42883", "function no_such_func(integer) does not exist"},
		{"select 2147483647 + 1", "22003", "integer out of range"},
		{"select 'abc'::int", "22P02", `invalid input syntax for type integer: "abc"`},
		{"create view v as select 1", "0A000", "CREATE VIEW is not supported by lockd yet"},
		{"show no_such_setting", "42704", `unrecognized configuration parameter "no_such_setting"`},
		{"set port = 1", "55P02", `parameter "port" cannot be changed without restarting the server`},
		{"set deadlock_timeout = -5", "22023", `-5 ms is outside the valid range for parameter "deadlock_timeout" (1 ms .. 2147483647 ms)`},
		{"set log_lock_waits = maybe", "22023", `parameter "log_lock_waits" requires a Boolean value`},
		{"savepoint a", "25P01", "SAVEPOINT can only be used in transaction blocks"},
	}
	for _, tc := range cases {
		_, err := c.Exec(context.Background(), tc.sql, pgx.QueryExecModeSimpleProtocol)
		if err == nil {
			t.Errorf("%s: no error", tc.sql)
			continue
		}
		pe := pgErr(t, err)
		if pe.Code != tc.code || pe.Message != tc.msg {
			t.Errorf("%s: got %s %q, want %s %q", tc.sql, pe.Code, pe.Message, tc.code, tc.msg)
		}
	}
	// the session is still usable
	var one int
	if err := c.QueryRow(context.Background(), "select 1").Scan(&one); err != nil || one != 1 {
		t.Fatal(err)
	}
}

func TestTransactionStates(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	status := func() byte { return pc.TxStatus() }
	exec := func(sql string) error {
		return pc.Exec(ctx, sql).Close()
	}
	if err := exec("begin"); err != nil || status() != 'T' {
		t.Fatalf("after BEGIN: %v %c", err, status())
	}
	if err := exec("select 1/0"); err == nil || status() != 'E' {
		t.Fatalf("after error: %v %c", err, status())
	}
	err := exec("select 1")
	if pe := pgErr(t, err); pe.Code != "25P02" || pe.Message != "current transaction is aborted, commands ignored until end of transaction block" {
		t.Fatalf("in failed block: %v", err)
	}
	res := pc.Exec(ctx, "commit")
	rs, err := res.ReadAll()
	if err != nil || string(rs[0].CommandTag.String()) != "ROLLBACK" || status() != 'I' {
		t.Fatalf("COMMIT of failed block: %v %v %c", err, rs, status())
	}
	// notices
	var notices []string
	cfg, _ := pgconn.ParseConfig(inst.ConnString())
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		notices = append(notices, n.Severity+" "+n.Code+" "+n.Message)
	}
	nc, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close(ctx)
	for _, q := range []string{"commit", "rollback", "begin", "begin", "end", "set local lock_timeout = 5"} {
		if _, err := nc.Exec(ctx, q).ReadAll(); err != nil {
			t.Fatal(q, err)
		}
	}
	want := []string{
		"WARNING 25P01 there is no transaction in progress",
		"WARNING 25P01 there is no transaction in progress",
		"WARNING 25001 there is already a transaction in progress",
		"WARNING 25P01 SET LOCAL can only be used in transaction blocks",
	}
	if strings.Join(notices, "\n") != strings.Join(want, "\n") {
		t.Fatalf("notices:\n%s\nwant:\n%s", strings.Join(notices, "\n"), strings.Join(want, "\n"))
	}
	// START TRANSACTION / ABORT tags
	rs, err = nc.Exec(ctx, "start transaction; abort").ReadAll()
	if err != nil || rs[0].CommandTag.String() != "START TRANSACTION" || rs[1].CommandTag.String() != "ROLLBACK" {
		t.Fatalf("%v %v", rs, err)
	}
}

func TestMultiStatementImplicitTransaction(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	// A SET followed by an error in the same query string is rolled back
	// with the implicit transaction.
	_, err := c.PgConn().Exec(ctx, "set lock_timeout = '3s'; select 1/0").ReadAll()
	if err == nil {
		t.Fatal("want error")
	}
	var v string
	if err := c.QueryRow(ctx, "show lock_timeout").Scan(&v); err != nil || v != "0" {
		t.Fatalf("lock_timeout = %q (%v), want 0 after the implicit transaction aborted", v, err)
	}
	rs, err := c.PgConn().Exec(ctx, "select 1; select 2, 3").ReadAll()
	if err != nil || len(rs) != 2 || string(rs[1].Rows[0][1]) != "3" {
		t.Fatalf("%v %v", rs, err)
	}
	// BEGIN inside a query string leaves the block open.
	if _, err := c.PgConn().Exec(ctx, "begin; select 1").ReadAll(); err != nil || c.PgConn().TxStatus() != 'T' {
		t.Fatalf("%v %c", err, c.PgConn().TxStatus())
	}
}

func TestSetShowReset(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	show := func(name string) string {
		var v string
		if err := c.QueryRow(ctx, "show "+name, pgx.QueryExecModeSimpleProtocol).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	mustExec := func(sql string) {
		if _, err := c.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	mustExec("set statement_timeout = '1min'")
	if got := show("statement_timeout"); got != "1min" {
		t.Fatalf("statement_timeout = %q", got)
	}
	mustExec("set statement_timeout to 1500")
	if got := show("statement_timeout"); got != "1500ms" {
		t.Fatalf("statement_timeout = %q", got)
	}
	mustExec("reset statement_timeout")
	if got := show("statement_timeout"); got != "0" {
		t.Fatalf("statement_timeout = %q", got)
	}
	mustExec("begin")
	mustExec("set local lock_timeout = 100")
	if got := show("lock_timeout"); got != "100ms" {
		t.Fatalf("in block lock_timeout = %q", got)
	}
	mustExec("commit")
	if got := show("lock_timeout"); got != "0" {
		t.Fatalf("after commit lock_timeout = %q", got)
	}
	mustExec("begin")
	mustExec("set lock_timeout = 200")
	mustExec("rollback")
	if got := show("lock_timeout"); got != "0" {
		t.Fatalf("after rollback lock_timeout = %q", got)
	}
	mustExec("set application_name = 'abc'")
	mustExec("set lock_timeout = 5")
	mustExec("reset all")
	if got := show("lock_timeout"); got != "0" {
		t.Fatalf("after reset all = %q", got)
	}
	var v string
	if err := c.QueryRow(ctx, "select set_config('lock_timeout', '7s', false)").Scan(&v); err != nil || v != "7s" {
		t.Fatalf("set_config = %q %v", v, err)
	}
	if got := show("lock_timeout"); got != "7s" {
		t.Fatalf("after set_config = %q", got)
	}
	// SET of a reported parameter sends ParameterStatus
	mustExec("set application_name = 'reported'")
	if got := c.PgConn().ParameterStatus("application_name"); got != "reported" {
		t.Fatalf("ParameterStatus application_name = %q", got)
	}
	if got := c.PgConn().ParameterStatus("server_version"); !strings.HasPrefix(got, "15.") {
		t.Fatalf("server_version = %q", got)
	}
}

func TestShowAllAndPgSettings(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	rows, err := c.Query(ctx, "show all", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		n++
	}
	if rows.Err() != nil || n < 40 || len(rows.FieldDescriptions()) != 3 {
		t.Fatalf("show all: %d rows, %v", n, rows.Err())
	}
	rows, err = c.Query(ctx, "select name, setting, unit, context, vartype, boot_val, enumvals from pg_settings where name like 'lock%' or name = 'relation_extension_mode' order by name")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var name, setting, context, vartype, boot string
		var unit *string
		var enum []string
		if err := rows.Scan(&name, &setting, &unit, &context, &vartype, &boot, &enum); err != nil {
			t.Fatal(err)
		}
		u := "NULL"
		if unit != nil {
			u = *unit
		}
		got = append(got, strings.Join([]string{name, setting, u, context, vartype, boot, strings.Join(enum, "|")}, " "))
	}
	want := []string{
		"lock_partitions 16 NULL postmaster integer 16 ",
		"lock_timeout 0 ms user integer 0 ",
		"relation_extension_mode group NULL sighup enum group single|fixed|group",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var count int64
	if err := c.QueryRow(ctx, "select count(*) from pg_settings where context = 'postmaster'").Scan(&count); err != nil || count < 5 {
		t.Fatalf("count %d %v", count, err)
	}
}

func TestCancelRequest(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.Exec(ctx, "select pg_sleep(30)")
	if err == nil {
		t.Fatal("pg_sleep was not cancelled")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatal("cancel took too long")
	}
	// pgx closes the connection on context cancellation after sending a
	// CancelRequest; check the server side through a raw pgconn instead.
	pc, err := pgconn.Connect(context.Background(), inst.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(context.Background())
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = pc.CancelRequest(context.Background())
	}()
	_, err = pc.Exec(context.Background(), "select pg_sleep(30)").ReadAll()
	pe := pgErr(t, err)
	if pe.Code != "57014" || pe.Message != "canceling statement due to user request" {
		t.Fatalf("got %s %q", pe.Code, pe.Message)
	}
	if _, err := pc.Exec(context.Background(), "select 1").ReadAll(); err != nil {
		t.Fatal("session unusable after cancel:", err)
	}
}

func TestStatementTimeout(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	if _, err := c.Exec(ctx, "set statement_timeout = 100"); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(ctx, "select pg_sleep(5)")
	pe := pgErr(t, err)
	if pe.Code != "57014" || pe.Message != "canceling statement due to statement timeout" {
		t.Fatalf("got %s %q", pe.Code, pe.Message)
	}
}

func TestTerminateBackend(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	victim := inst.Connect(t)
	killer := inst.Connect(t)
	ctx := context.Background()
	var pid int32
	if err := victim.QueryRow(ctx, "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if _, err := victim.Exec(ctx, "begin"); err != nil {
		t.Fatal(err)
	}
	var ok bool
	if err := killer.QueryRow(ctx, "select pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("terminate: %v %v", ok, err)
	}
	_, err := victim.Exec(ctx, "select 1")
	if err == nil {
		t.Fatal("terminated session still works")
	}
	if pe := new(pgconn.PgError); errors.As(err, &pe) && pe.Code != "57P01" {
		t.Fatalf("got %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for inst.Server.ActiveSessions() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions remain", inst.Server.ActiveSessions())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := killer.QueryRow(ctx, "select pg_cancel_backend(1)").Scan(&ok); err != nil || ok {
		t.Fatalf("cancel of unknown pid: %v %v", ok, err)
	}
}

func TestTooManyConnections(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{Settings: []string{"max_connections=2"}})
	inst.Connect(t)
	inst.Connect(t)
	_, err := pgx.Connect(context.Background(), inst.ConnString())
	pe := pgErr(t, err)
	if pe.Code != "53300" || pe.Message != "sorry, too many clients already" || pe.Severity != "FATAL" {
		t.Fatalf("got %s %s %q", pe.Severity, pe.Code, pe.Message)
	}
}

func TestExtendedProtocol(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	ctx := context.Background()
	pc := c.PgConn()
	sd, err := pc.Prepare(ctx, "named", "select $1::int * 2, $2 || 'x'", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sd.ParamOIDs) != 2 || sd.ParamOIDs[0] != 23 || sd.ParamOIDs[1] != 25 || len(sd.Fields) != 2 {
		t.Fatalf("describe: %+v", sd)
	}
	res := pc.ExecPrepared(ctx, "named", [][]byte{[]byte("21"), []byte("a")}, nil, nil).Read()
	if res.Err != nil || string(res.Rows[0][0]) != "42" || string(res.Rows[0][1]) != "ax" {
		t.Fatalf("%+v", res)
	}
	// duplicate name
	_, err = pc.Prepare(ctx, "named", "select 1", nil)
	if pe := pgErr(t, err); pe.Code != "42P05" {
		t.Fatal(err)
	}
	// a bad parameter value is an error, then the session recovers at Sync
	res = pc.ExecPrepared(ctx, "named", [][]byte{[]byte("zz"), []byte("a")}, nil, nil).Read()
	if pe := pgErr(t, res.Err); pe.Code != "22P02" {
		t.Fatal(res.Err)
	}
	if err := pc.Deallocate(ctx, "named"); err != nil {
		t.Fatal(err)
	}
	res = pc.ExecPrepared(ctx, "named", nil, nil, nil).Read()
	if pe := pgErr(t, res.Err); pe.Code != "26000" || pe.Message != `prepared statement "named" does not exist` {
		t.Fatal(res.Err)
	}
	// SELECT $1 + $2 is ambiguous, as in PostgreSQL
	_, err = pc.Prepare(ctx, "", "select $1 + $2", nil)
	if pe := pgErr(t, err); pe.Code != "42725" || pe.Message != "operator is not unique: unknown + unknown" {
		t.Fatal(err)
	}
	// empty statement
	res = pc.ExecParams(ctx, "", nil, nil, nil, nil).Read()
	if res.Err != nil {
		t.Fatal(res.Err)
	}
}

func TestIdleInTransactionTimeout(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	ctx := context.Background()
	c := inst.Connect(t)
	if _, err := c.Exec(ctx, "set idle_in_transaction_session_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "begin"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "select pg_advisory_xact_lock(1)"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the idle session to be ended", func() bool { return inst.Server.ActiveSessions() == 0 })
	_, err := c.Exec(ctx, "select 1")
	if err == nil {
		t.Fatal("session survived its idle-in-transaction timeout")
	}
	if pe, ok := err.(*pgconn.PgError); ok && pe.Code != "25P03" {
		t.Fatalf("got %v", err)
	}
	// its lock went with it
	other := inst.Connect(t)
	var got bool
	if err := other.QueryRow(ctx, "select pg_try_advisory_xact_lock(1)").Scan(&got); err != nil || !got {
		t.Fatalf("lock still held: %v %v", got, err)
	}
}

func TestCachedPlansDoNotFreezeTime(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	// Folded at analysis time, these depend on the clock or the session's
	// TimeZone: a cached plan must not replay an old value.
	q := "select 'now'::timestamptz::text, '2024-06-01 12:00:00+00'::timestamptz::text"
	first := queryText(t, c, q)
	time.Sleep(20 * time.Millisecond)
	mustExec(t, c, "set timezone = 'Asia/Tokyo'")
	second := queryText(t, c, q)
	if first == second {
		t.Fatalf("same answer twice: %s", first)
	}
	if !strings.HasSuffix(second, "2024-06-01 21:00:00+09") {
		t.Fatalf("time zone not applied: %s", second)
	}
}

func TestMultiStatementSeesEarlierDDL(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	got := queryText(t, c, "create table ms (id int); insert into ms select g from generate_series(1, 3) g; select count(*) from ms")
	if got != "3" {
		t.Fatalf("got %q", got)
	}
	// in a failed block, only syntax errors come before 25P02
	mustExec(t, c, "begin")
	if _, err := c.Exec(context.Background(), "select 1/0"); err == nil {
		t.Fatal("no error")
	}
	_, err := c.Exec(context.Background(), "select * from no_such_table", pgx.QueryExecModeSimpleProtocol)
	if pe := pgErr(t, err); pe.Code != "25P02" {
		t.Fatalf("got %v", err)
	}
	_, err = c.Exec(context.Background(), "selec 1", pgx.QueryExecModeSimpleProtocol)
	if pe := pgErr(t, err); pe.Code != "42601" {
		t.Fatalf("got %v", err)
	}
	mustExec(t, c, "rollback")
}

// TestStatementContextAcrossStatements: a statement's context serves the
// next statement unless it was cancelled, so a cancel, a timeout or a
// CancelRequest while idle must not reach a later statement.
func TestStatementContextAcrossStatements(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	pc, err := pgconn.Connect(context.Background(), inst.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(context.Background())
	run := func(sql string) error {
		_, err := pc.Exec(context.Background(), sql).ReadAll()
		return err
	}
	for range 3 {
		if err := run("select 1"); err != nil {
			t.Fatal(err)
		}
	}
	// a CancelRequest while the session is idle is ignored
	if err := pc.CancelRequest(context.Background()); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := run("select pg_sleep(0.1)"); err != nil {
		t.Fatal("statement after an idle cancel:", err)
	}
	// a cancelled statement's context is not the next one's
	go func() {
		time.Sleep(200 * time.Millisecond)
		_ = pc.CancelRequest(context.Background())
	}()
	if pe := pgErr(t, run("select pg_sleep(30)")); pe.Code != "57014" {
		t.Fatalf("got %s %q", pe.Code, pe.Message)
	}
	if err := run("select pg_sleep(0.1)"); err != nil {
		t.Fatal("statement after a cancel:", err)
	}
	// statement_timeout is each statement's own
	if err := run("set statement_timeout = 500"); err != nil {
		t.Fatal(err)
	}
	if pe := pgErr(t, run("select pg_sleep(5)")); pe.Message != "canceling statement due to statement timeout" {
		t.Fatalf("got %s %q", pe.Code, pe.Message)
	}
	for range 2 {
		// each starts its own 500ms: two of 300ms in a row both finish
		if err := run("select pg_sleep(0.3)"); err != nil {
			t.Fatal("statement under statement_timeout:", err)
		}
	}
	if err := run("set statement_timeout = 0"); err != nil {
		t.Fatal(err)
	}
	if err := run("select pg_sleep(0.6)"); err != nil {
		t.Fatal("statement after statement_timeout was reset:", err)
	}
}

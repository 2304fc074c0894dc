package guc

import (
	"errors"
	"reflect"
	"testing"
)

func wantErr(t testing.TB, err error, code, msg string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want %s %q", err, code, msg)
	}
	if e.Code != code || e.Message != msg {
		t.Fatalf("error = %s %q, want %s %q", e.Code, e.Message, code, msg)
	}
}

func show(t testing.TB, s *Session, name string) string {
	t.Helper()
	v, _, err := s.Show(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func newSession(t testing.TB, r *Registry, client map[string]string) *Session {
	t.Helper()
	s, errs := r.NewSession(client)
	if len(errs) > 0 {
		t.Fatalf("NewSession: %v", errs)
	}
	return s
}

func TestSetContexts(t *testing.T) {
	s := newSession(t, NewRegistry(nil), nil)
	tests := []struct {
		name, value string
		code, msg   string
	}{
		{"lock_timeout", "2s", "", ""},
		{"deadlock_timeout", "5s", "", ""}, // superuser: every lockd user is one
		{"max_connections", "10", "55P02", `parameter "max_connections" cannot be changed without restarting the server`},
		{"wake_up_all_waiters", "on", "55P02", `parameter "wake_up_all_waiters" cannot be changed now`},
		{"log_connections", "on", "55P02", `parameter "log_connections" cannot be set after connection start`},
		{"server_version", "16", "55P02", `parameter "server_version" cannot be changed`},
		{"no_such_thing", "1", "42704", `unrecognized configuration parameter "no_such_thing"`},
		{"lock_timeout", "soon", "22023", `invalid value for parameter "lock_timeout": "soon"`},
	}
	for _, tt := range tests {
		d, err := s.Set(tt.name, tt.value, false)
		if tt.code == "" {
			if err != nil || d == nil {
				t.Errorf("SET %s = %s: %v", tt.name, tt.value, err)
			}
			continue
		}
		wantErr(t, err, tt.code, tt.msg)
		if tt.code != "22023" {
			_, err = s.SetDefault(tt.name, false)
			wantErr(t, err, tt.code, tt.msg)
		}
	}
	if got := show(t, s, "LOCK_TIMEOUT"); got != "2s" {
		t.Errorf("SHOW lock_timeout = %q", got)
	}
	if got := s.Int("deadlock_timeout"); got != 5000 {
		t.Errorf("deadlock_timeout = %d", got)
	}
	if s.Source("lock_timeout") != SourceSession {
		t.Errorf("source = %v", s.Source("lock_timeout"))
	}
}

func TestShow(t *testing.T) {
	s := newSession(t, NewRegistry(nil), nil)
	for name, want := range map[string]string{
		"deadlock_timeout":        "1s",
		"shared_buffers":          "128MB",
		"lock_timeout":            "0",
		"max_message_size":        "64MB",
		"checkpoint_timeout":      "5min",
		"authentication_timeout":  "1min",
		"log_lock_waits":          "off",
		"track_lock_timing":       "on",
		"relation_extension_mode": "group",
		"datestyle":               "ISO, MDY",
		"search_path":             `"$user", public`,
		"fastpath_lock_slots":     "-1",
		"server_version_num":      "150000",
		"is_superuser":            "on",
	} {
		if got := show(t, s, name); got != want {
			t.Errorf("SHOW %s = %q, want %q", name, got, want)
		}
	}
	_, _, err := s.Show("nope")
	wantErr(t, err, "42704", `unrecognized configuration parameter "nope"`)
	if s.String("relation_extension_mode") != "group" || s.Int("relation_extension_mode") != 2 {
		t.Error("enum accessors")
	}
	if !s.Bool("track_lock_timing") || s.String("deadlock_timeout") != "1s" {
		t.Error("typed accessors")
	}
}

// TestTransactions walks through PostgreSQL's documented behaviour of SET,
// SET LOCAL and RESET inside transactions.
func TestTransactions(t *testing.T) {
	type step struct {
		op    string // set, local, reset, resetlocal, resetall, begin, commit, abort
		value string
		want  string // SHOW lock_timeout after the step
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"set outside txn", []step{{"set", "1s", "1s"}}},
		{"set local outside txn is a no-op", []step{{"local", "1s", "0"}}},
		{"set committed", []step{{"begin", "", "0"}, {"set", "1s", "1s"}, {"commit", "", "1s"}}},
		{"set aborted", []step{{"set", "5s", "5s"}, {"begin", "", "5s"}, {"set", "1s", "1s"}, {"set", "2s", "2s"}, {"abort", "", "5s"}}},
		{"set local committed", []step{{"begin", "", "0"}, {"local", "1s", "1s"}, {"commit", "", "0"}}},
		{"set local aborted", []step{{"begin", "", "0"}, {"local", "1s", "1s"}, {"abort", "", "0"}}},
		{"set then set local", []step{{"begin", "", "0"}, {"set", "1s", "1s"}, {"local", "2s", "2s"}, {"commit", "", "1s"}}},
		{"set local then set", []step{{"begin", "", "0"}, {"local", "2s", "2s"}, {"set", "1s", "1s"}, {"commit", "", "1s"}}},
		{"set then set local aborted", []step{{"begin", "", "0"}, {"set", "1s", "1s"}, {"local", "2s", "2s"}, {"abort", "", "0"}}},
		{"reset in txn aborted", []step{{"set", "3s", "3s"}, {"begin", "", "3s"}, {"reset", "", "0"}, {"abort", "", "3s"}}},
		{"reset in txn committed", []step{{"set", "3s", "3s"}, {"begin", "", "3s"}, {"reset", "", "0"}, {"commit", "", "0"}}},
		{"set local to default", []step{{"set", "3s", "3s"}, {"begin", "", "3s"}, {"resetlocal", "", "0"}, {"commit", "", "3s"}}},
		{"reset all", []step{{"set", "3s", "3s"}, {"resetall", "", "0"}}},
		{"reset all aborted", []step{{"set", "3s", "3s"}, {"begin", "", "3s"}, {"resetall", "", "0"}, {"abort", "", "3s"}}},
		{"second transaction independent", []step{{"begin", "", "0"}, {"set", "1s", "1s"}, {"commit", "", "1s"}, {"begin", "", "1s"}, {"set", "2s", "2s"}, {"abort", "", "1s"}}},
		// Savepoints; every expectation checked against PostgreSQL 15.
		{"set in savepoint rolled back", []step{{"begin", "", "0"}, {"savepoint", "", "0"}, {"set", "2s", "2s"}, {"rollbackto", "", "0"}, {"commit", "", "0"}}},
		{"set local, set in released savepoint", []step{{"begin", "", "0"}, {"local", "1s", "1s"}, {"savepoint", "", "1s"}, {"set", "2s", "2s"}, {"release", "", "2s"}, {"commit", "", "2s"}}},
		{"set, set local in released savepoint", []step{{"begin", "", "0"}, {"set", "1s", "1s"}, {"savepoint", "", "1s"}, {"local", "2s", "2s"}, {"release", "", "2s"}, {"commit", "", "1s"}}},
		{"set local in released savepoint lasts to commit", []step{{"begin", "", "0"}, {"savepoint", "", "0"}, {"local", "2s", "2s"}, {"release", "", "2s"}, {"commit", "", "0"}}},
		{"set local in savepoint rolled back", []step{{"begin", "", "0"}, {"set", "1s", "1s"}, {"savepoint", "", "1s"}, {"local", "2s", "2s"}, {"rollbackto", "", "1s"}, {"commit", "", "1s"}}},
		{"set after set local rolled back", []step{{"begin", "", "0"}, {"local", "1s", "1s"}, {"savepoint", "", "1s"}, {"set", "2s", "2s"}, {"rollbackto", "", "1s"}, {"commit", "", "0"}}},
		{"released inner, outer rolled back", []step{{"begin", "", "0"}, {"savepoint", "", "0"}, {"set", "1s", "1s"}, {"savepoint", "", "1s"}, {"set", "2s", "2s"}, {"release", "", "2s"}, {"rollbackto", "", "0"}, {"commit", "", "0"}}},
		{"inner rolled back, outer released", []step{{"begin", "", "0"}, {"savepoint", "", "0"}, {"set", "1s", "1s"}, {"savepoint", "", "1s"}, {"set", "2s", "2s"}, {"rollbackto", "", "1s"}, {"release", "", "1s"}, {"commit", "", "1s"}}},
		{"released savepoint, top aborted", []step{{"begin", "", "0"}, {"set", "1s", "1s"}, {"savepoint", "", "1s"}, {"set", "2s", "2s"}, {"release", "", "2s"}, {"abort", "", "0"}}},
		{"savepoint still open at commit", []step{{"begin", "", "0"}, {"savepoint", "", "0"}, {"set", "2s", "2s"}, {"commit", "", "2s"}}},
		{"savepoint still open at abort", []step{{"begin", "", "0"}, {"set", "1s", "1s"}, {"savepoint", "", "1s"}, {"set", "2s", "2s"}, {"abort", "", "0"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, NewRegistry(nil), nil)
			for k, st := range tt.steps {
				var err error
				switch st.op {
				case "set":
					_, err = s.Set("lock_timeout", st.value, false)
				case "local":
					_, err = s.Set("lock_timeout", st.value, true)
				case "reset":
					_, err = s.SetDefault("lock_timeout", false)
				case "resetlocal":
					_, err = s.SetDefault("lock_timeout", true)
				case "resetall":
					s.ResetAll()
				case "begin":
					s.BeginTxn()
				case "commit":
					s.CommitTxn()
				case "abort":
					s.AbortTxn()
				case "savepoint":
					s.BeginSub()
				case "release":
					s.CommitSub()
				case "rollbackto": // ROLLBACK TO keeps the savepoint: abort, begin again
					s.AbortSub()
					s.BeginSub()
				}
				if err != nil {
					t.Fatalf("step %d %s: %v", k, st.op, err)
				}
				if got := show(t, s, "lock_timeout"); got != st.want {
					t.Fatalf("step %d %s %s: lock_timeout = %q, want %q", k, st.op, st.value, got, st.want)
				}
			}
			if s.InTxn() {
				s.CommitTxn()
			}
		})
	}
}

func TestResetAllSkipsOthers(t *testing.T) {
	r := NewRegistry(nil)
	s := newSession(t, r, nil)
	if _, err := s.Set("transaction_isolation", "serializable", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Set("application_name", "x", false); err != nil {
		t.Fatal(err)
	}
	s.ResetAll()
	if got := show(t, s, "transaction_isolation"); got != "serializable" {
		t.Errorf("RESET ALL touched transaction_isolation: %q", got)
	}
	if got := show(t, s, "application_name"); got != "" {
		t.Errorf("RESET ALL left application_name = %q", got)
	}
}

func TestClientSettings(t *testing.T) {
	r := NewRegistry(nil)
	if err := r.SetCommandLine("lock_timeout", "7s"); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, r, map[string]string{
		"application_name":   "psql",
		"DateStyle":          "ISO",
		"extra_float_digits": "3",
		"client_encoding":    "UTF8",
		"options":            `-c statement_timeout=5s --log-connections=on -capplication_name=my\ app --search_path=a,b`,
	})
	for name, want := range map[string]string{
		"application_name":   "psql", // explicit parameters win over options
		"statement_timeout":  "5s",
		"log_connections":    "on",
		"search_path":        "a,b",
		"extra_float_digits": "3",
		"lock_timeout":       "7s",
	} {
		if got := show(t, s, name); got != want {
			t.Errorf("SHOW %s = %q, want %q", name, got, want)
		}
	}
	if s.Source("statement_timeout") != SourceClient || s.Source("lock_timeout") != SourceCommandLine {
		t.Errorf("sources: %v, %v", s.Source("statement_timeout"), s.Source("lock_timeout"))
	}
	// RESET returns to the client value, not the server's.
	if _, err := s.Set("statement_timeout", "1s", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetDefault("statement_timeout", false); err != nil {
		t.Fatal(err)
	}
	if got := show(t, s, "statement_timeout"); got != "5s" || s.Source("statement_timeout") != SourceClient {
		t.Errorf("after RESET statement_timeout = %q (%v), want 5s from client", got, s.Source("statement_timeout"))
	}

	_, errs := r.NewSession(map[string]string{
		"bogus":               "1",
		"max_connections":     "5",
		"wake_up_all_waiters": "on",
		"lock_timeout":        "x",
	})
	var got []string
	for _, e := range errs {
		got = append(got, e.Code+" "+e.Message)
	}
	want := []string{
		`42704 unrecognized configuration parameter "bogus"`,
		`22023 invalid value for parameter "lock_timeout": "x"`,
		`55P02 parameter "max_connections" cannot be changed without restarting the server`,
		`55P02 parameter "wake_up_all_waiters" cannot be changed now`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("NewSession errors:\n got %q\nwant %q", got, want)
	}
}

func TestParseOptions(t *testing.T) {
	tests := []struct {
		in   string
		want [][2]string
		err  string
	}{
		{"", nil, ""},
		{"-c a=1", [][2]string{{"a", "1"}}, ""},
		{"  -ca=1   --b-c=2 ", [][2]string{{"a", "1"}, {"b_c", "2"}}, ""},
		{`-c a=x\ y\\z`, [][2]string{{"a", `x y\z`}}, ""},
		{"-c a", nil, "-c a requires a value"},
		{"--a", nil, "--a requires a value"},
		{"-c", nil, "option requires an argument -- 'c'"},
		{"-B 10", nil, "invalid command-line argument for server process: -B"},
	}
	for _, tt := range tests {
		got, err := parseOptions(tt.in)
		if tt.err != "" {
			if err == nil || err.Message != tt.err || err.Code != "42601" {
				t.Errorf("parseOptions(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseOptions(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestPendingReports(t *testing.T) {
	r := NewRegistry(nil)
	s := newSession(t, r, map[string]string{"application_name": "pgbench"})
	if err := s.SetInternal("session_authorization", "alice"); err != nil {
		t.Fatal(err)
	}
	first := s.PendingReports()
	got := map[string]string{}
	for _, p := range first {
		got[p.Name] = p.Value
	}
	want := map[string]string{
		"default_transaction_read_only": "off", "client_encoding": "UTF8", "DateStyle": "ISO, MDY",
		"IntervalStyle": "postgres", "TimeZone": "UTC", "standard_conforming_strings": "on",
		"application_name": "pgbench", "server_version": "15.0 (lockd)", "server_encoding": "UTF8",
		"integer_datetimes": "on", "in_hot_standby": "off", "is_superuser": "on", "session_authorization": "alice",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("first PendingReports = %v\nwant %v", got, want)
	}
	if p := s.PendingReports(); p != nil {
		t.Errorf("second PendingReports = %v, want nothing", p)
	}
	// A change that leaves the display value alone is not reported.
	s.Set("TimeZone", "utc", false)
	if p := s.PendingReports(); p != nil {
		t.Errorf("after SET TimeZone=utc: %v", p)
	}
	s.Set("DateStyle", "German", false)
	s.Set("lock_timeout", "1s", false) // not reported
	if p := s.PendingReports(); !reflect.DeepEqual(p, []ReportedParam{{"DateStyle", "German, DMY"}}) {
		t.Errorf("after SET DateStyle: %v", p)
	}
	s.BeginTxn()
	s.Set("application_name", "x", true)
	if p := s.PendingReports(); !reflect.DeepEqual(p, []ReportedParam{{"application_name", "x"}}) {
		t.Errorf("after SET LOCAL application_name: %v", p)
	}
	s.AbortTxn()
	if p := s.PendingReports(); !reflect.DeepEqual(p, []ReportedParam{{"application_name", "pgbench"}}) {
		t.Errorf("after abort: %v", p)
	}
}

func TestAccessorsDoNotAllocate(t *testing.T) {
	s := newSession(t, NewRegistry(nil), nil)
	n := testing.AllocsPerRun(100, func() {
		_ = s.Int("deadlock_timeout")
		_ = s.Bool("wake_up_all_waiters")
		_ = s.String("relation_extension_mode")
		_ = s.Int("DateStyle") // canonical mixed-case name
	})
	if n != 0 {
		t.Errorf("typed accessors allocate %v times per run", n)
	}
	s.PendingReports()
	n = testing.AllocsPerRun(100, func() { s.Refresh(); _ = s.PendingReports() })
	if n != 0 {
		t.Errorf("idle Refresh+PendingReports allocate %v times per run", n)
	}
}

func TestUnknownAccessorPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for an unknown setting")
		}
	}()
	s := newSession(t, NewRegistry(nil), nil)
	s.Int("no_such_setting")
}

func TestRows(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "lockd.conf", "# comment\n\nlog_lock_waits = true\nwork_mem = \"8MB\"\n")
	r := NewRegistry(nil)
	if err := r.LoadFiles(conf, dir); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, r, nil)
	s.Set("lock_timeout", "2s", false)
	rows := map[string]SettingRow{}
	var names []string
	for _, row := range s.Rows() {
		rows[row.Name] = row
		names = append(names, row.Name)
	}
	for i := 1; i < len(names); i++ {
		if lowerASCII(names[i-1]) > lowerASCII(names[i]) {
			t.Errorf("rows not sorted: %s before %s", names[i-1], names[i])
		}
	}
	if _, ok := rows["is_superuser"]; ok {
		t.Error("is_superuser is hidden from pg_settings in PostgreSQL")
	}
	p := func(s string) *string { return &s }
	ms, blocks, kb := "ms", "8kB", "kB"
	checks := []SettingRow{
		{Name: "deadlock_timeout", Setting: "1000", Unit: &ms, Category: "Lock Management",
			ShortDesc: "Sets the time to wait on a lock before checking for deadlock.", Context: "superuser", VarType: "integer",
			Source: "default", MinVal: p("1"), MaxVal: p("2147483647"), BootVal: "1000", ResetVal: "1000"},
		{Name: "shared_buffers", Setting: "16384", Unit: &blocks, Category: "Resource Usage / Memory",
			ShortDesc: "Sets the number of shared memory buffers used by the server.", Context: "postmaster", VarType: "integer",
			Source: "default", MinVal: p("16"), MaxVal: p("1073741823"), BootVal: "16384", ResetVal: "16384"},
		{Name: "lock_timeout", Setting: "2000", Unit: &ms, Category: "Client Connection Defaults / Statement Behavior",
			ShortDesc: "Sets the maximum allowed duration of any wait for a lock.", ExtraDesc: p("A value of 0 turns off the timeout."),
			Context: "user", VarType: "integer", Source: "session", MinVal: p("0"), MaxVal: p("2147483647"), BootVal: "0", ResetVal: "0"},
		{Name: "log_lock_waits", Setting: "on", Category: "Reporting and Logging / What to Log", ShortDesc: "Logs long lock waits.",
			Context: "superuser", VarType: "bool", Source: "configuration file", BootVal: "off", ResetVal: "on",
			SourceFile: p(conf), SourceLine: p("3")},
		{Name: "work_mem", Setting: "8192", Unit: &kb, Category: "Resource Usage / Memory", ShortDesc: Table[mustIndex("work_mem")].Short,
			ExtraDesc: p(Table[mustIndex("work_mem")].Extra), Context: "user", VarType: "integer", Source: "configuration file",
			MinVal: p("64"), MaxVal: p("2147483647"), BootVal: "4096", ResetVal: "8192", SourceFile: p(conf), SourceLine: p("4")},
		{Name: "default_transaction_isolation", Setting: "read committed", Category: "Client Connection Defaults / Statement Behavior",
			ShortDesc: "Sets the transaction isolation level of each new transaction.", Context: "user", VarType: "enum", Source: "default",
			EnumVals: p(`{serializable,"repeatable read","read committed","read uncommitted"}`), BootVal: "read committed", ResetVal: "read committed"},
	}
	for _, want := range checks {
		got, ok := rows[want.Name]
		if !ok {
			t.Errorf("no row for %s", want.Name)
			continue
		}
		if !reflect.DeepEqual(rowStrings(got), rowStrings(want)) {
			t.Errorf("%s:\n got %q\nwant %q", want.Name, rowStrings(got), rowStrings(want))
		}
	}
	showAll := s.ShowAll()
	if len(showAll) != len(rows) {
		t.Errorf("SHOW ALL has %d rows, pg_settings %d", len(showAll), len(rows))
	}
	for _, sr := range showAll {
		if sr.Name == "deadlock_timeout" && (sr.Setting != "1s" || sr.Description != "Sets the time to wait on a lock before checking for deadlock.") {
			t.Errorf("SHOW ALL deadlock_timeout = %+v", sr)
		}
	}
}

func rowStrings(r SettingRow) []string {
	var out []string
	for _, v := range r.Values() {
		if v == nil {
			out = append(out, "NULL")
		} else {
			out = append(out, *v)
		}
	}
	return out
}

// Changes moves with every change of a setting in effect: SET, SET
// LOCAL's end, ROLLBACK, a reload.
func TestSessionChanges(t *testing.T) {
	s := newSession(t, NewRegistry(nil), nil)
	set := func(name, value string, local bool) {
		t.Helper()
		if _, err := s.Set(name, value, local); err != nil {
			t.Fatal(err)
		}
	}
	c := s.Changes()
	step := func(what string, f func()) {
		t.Helper()
		f()
		if s.Changes() == c {
			t.Fatalf("%s: Changes did not move", what)
		}
		c = s.Changes()
	}
	step("SET", func() { set("enable_seqscan", "off", false) })
	s.BeginTxn()
	step("SET LOCAL", func() { set("random_page_cost", "1.1", true) })
	step("COMMIT", s.CommitTxn)
	s.BeginTxn()
	step("SET in a transaction", func() { set("enable_seqscan", "on", false) })
	step("ROLLBACK", s.AbortTxn)
	if s.Changes() != c {
		t.Fatal("Changes moved with nothing changed")
	}
}

// A Key reads what the name reads, after a SET as before it.
func TestKeys(t *testing.T) {
	s := newSession(t, NewRegistry(nil), nil)
	tz, timeout, ro := MustKey("timezone"), MustKey("statement_timeout"), MustKey("transaction_read_only")
	for _, set := range [][2]string{{"", ""}, {"TimeZone", "Europe/Paris"}, {"statement_timeout", "2s"}} {
		if set[0] != "" {
			if _, err := s.Set(set[0], set[1], false); err != nil {
				t.Fatal(err)
			}
		}
		if got, want := s.StringAt(tz), s.String("TimeZone"); got != want {
			t.Errorf("after %v: StringAt(TimeZone) = %q, String = %q", set, got, want)
		}
		if got, want := s.IntAt(timeout), s.Int("statement_timeout"); got != want {
			t.Errorf("after %v: IntAt(statement_timeout) = %d, Int = %d", set, got, want)
		}
		if got, want := s.BoolAt(ro), s.Bool("transaction_read_only"); got != want {
			t.Errorf("after %v: BoolAt(transaction_read_only) = %v, Bool = %v", set, got, want)
		}
	}
	if s.StringAt(tz) != "Europe/Paris" || s.IntAt(timeout) != 2000 {
		t.Errorf("StringAt/IntAt = %q, %d; want Europe/Paris, 2000", s.StringAt(tz), s.IntAt(timeout))
	}
	defer func() {
		if recover() == nil {
			t.Error("MustKey of an unknown name did not panic")
		}
	}()
	MustKey("no_such_setting")
}

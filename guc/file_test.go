package guc

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
)

func writeFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// logBuffer is a concurrency-safe log sink for tests.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func testLogger() (*slog.Logger, *logBuffer) {
	b := &logBuffer{}
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// TestLoadFilesErrors runs every testdata/config/*.toml and *.conf
// (PostgreSQL syntax) file through LoadFiles
// and compares the error with the file's "# want:" line ($FILE stands for the
// file's path). A file without one must load.
func TestLoadFilesErrors(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "config", "*.toml"))
	confs, _ := filepath.Glob(filepath.Join("testdata", "config", "*.conf"))
	files = append(files, confs...)
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata: %v", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			abs, _ := filepath.Abs(f)
			var want []string
			for _, line := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(line, "# want: "); ok {
					want = append(want, strings.NewReplacer("$FILE", abs, "$DIR", filepath.Dir(abs)).Replace(w))
				}
			}
			r := NewRegistry(nil)
			err = r.LoadFiles(f, "")
			if len(want) == 0 {
				if err != nil {
					t.Fatalf("LoadFiles: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("LoadFiles succeeded, want %q", want)
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
				t.Fatalf("LoadFiles error:\n got %q\nwant %q", got, want)
			}
			if r.Value("lock_timeout") != mustDef(t, "lock_timeout").boot {
				t.Error("a failed LoadFiles applied settings")
			}
		})
	}
}

func TestLoadFilesErrorTypes(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "lockd.conf", "port = \"abc\"\n")
	err := NewRegistry(nil).LoadFiles(conf, "")
	var fe *FileError
	var e *Error
	if !errors.As(err, &fe) || fe.File != conf || fe.Line != 1 || !errors.As(err, &e) || e.Code != "22023" {
		t.Fatalf("error %v (%T) does not carry file, line and SQLSTATE", err, err)
	}
	if want := conf + `:1: invalid value for parameter "port": "abc"`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	err = NewRegistry(nil).LoadFiles(filepath.Join(dir, "missing.conf"), "")
	if err == nil || !strings.Contains(err.Error(), "could not open configuration file") {
		t.Errorf("missing file: %v", err)
	}
}

func TestSourcePriority(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "lockd.conf", `
lock_timeout = "1s"
statement_timeout = 1000
deadlock_timeout = "3s"
idle_in_transaction_session_timeout = "1min"
wake_up_all_waiters = "on"
`)
	writeFile(t, dir, AutoConfName, autoConfHeader+"lock_timeout = \"2s\"\n")
	r := NewRegistry(nil)
	// -c before the files are loaded must still win over them.
	if err := r.SetCommandLine("statement-timeout", "4s"); err != nil {
		t.Fatal(err)
	}
	if err := r.LoadFiles(conf, dir); err != nil {
		t.Fatal(err)
	}
	if err := r.SetCommandLine("deadlock_timeout", "5s"); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, r, map[string]string{"idle_in_transaction_session_timeout": "6s"})
	for _, c := range []struct{ name, want, source string }{
		{"lock_timeout", "2s", "configuration file"}, // auto.conf beats lockd.conf
		{"statement_timeout", "4s", "command line"},
		{"deadlock_timeout", "5s", "command line"},
		{"idle_in_transaction_session_timeout", "6s", "client"},
		{"wake_up_all_waiters", "on", "configuration file"},
		{"log_lock_waits", "off", "default"},
		{"data_directory", dir, "override"},
		{"config_file", conf, "override"},
	} {
		if got := show(t, s, c.name); got != c.want || s.Source(c.name).String() != c.source {
			t.Errorf("%s = %q from %v, want %q from %s", c.name, got, s.Source(c.name), c.want, c.source)
		}
	}
	s.Set("idle_in_transaction_session_timeout", "7s", false)
	if s.Source("idle_in_transaction_session_timeout") != SourceSession {
		t.Error("SET does not give source session")
	}
	for _, row := range s.Rows() {
		if row.Name == "lock_timeout" && (row.SourceFile == nil || *row.SourceFile != filepath.Join(dir, AutoConfName) || *row.SourceLine != "2") {
			t.Errorf("lock_timeout sourcefile/line = %v/%v", row.SourceFile, row.SourceLine)
		}
	}

	wantErr(t, r.SetCommandLine("nope", "1"), "42704", `unrecognized configuration parameter "nope"`)
	wantErr(t, r.SetCommandLine("port", "x"), "22023", `invalid value for parameter "port": "x"`)
	wantErr(t, r.SetCommandLine("block_size", "1"), "55P02", `parameter "block_size" cannot be changed`)
	if err := r.SetCommandLine("port", "6000"); err != nil || r.Value("port").Int != 6000 {
		t.Errorf("-c port=6000: %v", err)
	}
}

func TestReload(t *testing.T) {
	dir := t.TempDir()
	logger, logs := testLogger()
	conf := writeFile(t, dir, "lockd.conf", `
lock_timeout = "1s"
deadlock_timeout = "2s"
max_connections = 50
wake_up_all_waiters = true
statement_timeout = "9s"
`)
	r := NewRegistry(logger)
	if err := r.SetCommandLine("statement_timeout", "3s"); err != nil {
		t.Fatal(err)
	}
	if err := r.LoadFiles(conf, dir); err != nil {
		t.Fatal(err)
	}
	var hookVals []string
	r.OnChange("deadlock_timeout", func(v Value) { hookVals = append(hookVals, FormatValue(mustDef(t, "deadlock_timeout"), v)) })
	var wake []bool
	r.OnChange("wake_up_all_waiters", func(v Value) { wake = append(wake, v.Bool) })

	s := newSession(t, r, map[string]string{"lock_timeout": "8s"})
	s2 := newSession(t, r, nil)
	gen := r.Generation()

	// One bad value, a postmaster change, a removed entry, a changed
	// sighup setting and a change under a command-line setting.
	writeFile(t, dir, "lockd.conf", `
lock_timeout = "abc"
deadlock_timeout = "4s"
max_connections = 60
statement_timeout = "10s"
`)
	errs := r.Reload()
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Error())
	}
	sort.Strings(msgs)
	want := []string{
		conf + `:2: invalid value for parameter "lock_timeout": "abc"`,
		conf + `:4: parameter "max_connections" cannot be changed without restarting the server`,
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("Reload errors:\n got %q\nwant %q", msgs, want)
	}
	if r.Generation() == gen {
		t.Error("generation did not change")
	}
	for _, c := range []struct{ name, want string }{
		{"lock_timeout", "1s"},         // bad value: old one kept
		{"deadlock_timeout", "4s"},     // applied
		{"max_connections", "50"},      // postmaster: not applied
		{"wake_up_all_waiters", "off"}, // removed: back to boot
		{"statement_timeout", "3s"},    // command line wins
	} {
		if got := FormatValue(mustDef(t, c.name), r.Value(c.name)); got != c.want {
			t.Errorf("server-wide %s = %q, want %q", c.name, got, c.want)
		}
	}
	if !r.PendingRestart("max_connections") || r.PendingRestart("deadlock_timeout") {
		t.Error("pending_restart")
	}
	if !reflect.DeepEqual(hookVals, []string{"2s", "4s"}) || !reflect.DeepEqual(wake, []bool{true, false}) {
		t.Errorf("hooks saw deadlock_timeout %v, wake_up_all_waiters %v", hookVals, wake)
	}
	for _, l := range []string{
		`parameter \"deadlock_timeout\" changed to \"4s\"`,
		`parameter \"max_connections\" cannot be changed without restarting the server`,
		`parameter \"wake_up_all_waiters\" removed from configuration file, reset to default`,
		`configuration file \"` + conf + `\" contains errors; unaffected changes were applied`,
	} {
		if !strings.Contains(logs.String(), l) {
			t.Errorf("log lacks %s:\n%s", l, logs)
		}
	}

	// Sessions see the new values after Refresh, except their own.
	if show(t, s2, "deadlock_timeout") != "2s" {
		t.Error("session changed before Refresh")
	}
	s.Refresh()
	s2.Refresh()
	s2.Set("wake_up_all_waiters", "on", false) // 55P02, no effect
	if got := show(t, s2, "deadlock_timeout"); got != "4s" {
		t.Errorf("after Refresh deadlock_timeout = %q", got)
	}
	if got := show(t, s2, "wake_up_all_waiters"); got != "off" {
		t.Errorf("after Refresh wake_up_all_waiters = %q", got)
	}
	if got := show(t, s, "lock_timeout"); got != "8s" {
		t.Errorf("client value lost on Refresh: %q", got)
	}
	for _, row := range s.Rows() {
		if row.Name == "max_connections" && (!row.PendingRestart || row.Setting != "50") {
			t.Errorf("max_connections row %+v", row)
		}
	}

	// Fixing the file clears pending_restart; a syntax error applies nothing.
	writeFile(t, dir, "lockd.conf", "deadlock_timeout = \"4s\"\nmax_connections = 50\n")
	if errs := r.Reload(); len(errs) != 0 {
		t.Errorf("Reload: %v", errs)
	}
	if r.PendingRestart("max_connections") {
		t.Error("pending_restart not cleared")
	}
	writeFile(t, dir, "lockd.conf", "deadlock_timeout = \"5s\"\nmax_connections = = 50\n")
	errs = r.Reload()
	if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), `syntax error in file "`+conf+`" line 2`) {
		t.Errorf("Reload with syntax error: %v", errs)
	}
	if got := FormatValue(mustDef(t, "deadlock_timeout"), r.Value("deadlock_timeout")); got != "4s" {
		t.Errorf("syntax error applied deadlock_timeout = %s", got)
	}
	if !strings.Contains(logs.String(), `contains errors; no changes were applied`) {
		t.Error("no 'no changes were applied' log")
	}
	writeFile(t, dir, "lockd.conf", "deadlock_timeout = \"5s\"\nfoo = 1\n")
	errs = r.Reload()
	if len(errs) != 1 || errs[0].Error() != `unrecognized configuration parameter "foo" in file "`+conf+`" line 2` {
		t.Errorf("Reload with unknown name: %v", errs)
	}
}

func TestBackendSettingsFixedForSession(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "lockd.conf", "log_connections = false\n")
	r := NewRegistry(nil)
	if err := r.LoadFiles(conf, ""); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, r, nil)
	writeFile(t, dir, "lockd.conf", "log_connections = true\n")
	if errs := r.Reload(); len(errs) > 0 {
		t.Fatal(errs)
	}
	s.Refresh()
	if s.Bool("log_connections") {
		t.Error("existing session picked up a backend setting")
	}
	if s2 := newSession(t, r, nil); !s2.Bool("log_connections") {
		t.Error("new session did not get the new backend setting")
	}
}

func TestRefreshInTransaction(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "lockd.conf", "lock_timeout = \"1s\"\n")
	r := NewRegistry(nil)
	if err := r.LoadFiles(conf, ""); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, r, nil)
	s.BeginTxn()
	s.Set("lock_timeout", "5s", false)
	writeFile(t, dir, "lockd.conf", "lock_timeout = \"2s\"\n")
	r.Reload()
	s.Refresh()
	if show(t, s, "lock_timeout") != "5s" {
		t.Error("reload overrode a SET")
	}
	s.AbortTxn()
	if got := show(t, s, "lock_timeout"); got != "2s" {
		t.Errorf("after abort lock_timeout = %q, want the reloaded 2s", got)
	}
	s.SetDefault("lock_timeout", false)
	if got := show(t, s, "lock_timeout"); got != "2s" {
		t.Errorf("after RESET lock_timeout = %q", got)
	}
}

func TestAlterSystem(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "lockd.conf", "lock_timeout = \"1s\"\n")
	r := NewRegistry(nil)
	if err := r.LoadFiles(conf, dir); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][2]string{
		{"lock_timeout", "3s"}, {"max_connections", "20"}, {"DATESTYLE", "german"}, {"application_name", `a "quoted" \ name`},
		{"wake_up_all_waiters", "yes"}, {"shared_buffers", "256MB"}, {"lock_timeout", "4s"},
	} {
		if err := r.AlterSystem(c[0], c[1]); err != nil {
			t.Fatalf("ALTER SYSTEM SET %s = %s: %v", c[0], c[1], err)
		}
	}
	wantErr(t, r.AlterSystem("server_version", "1"), "55P02", `parameter "server_version" cannot be changed`)
	wantErr(t, r.AlterSystem("data_directory", "/x"), "55P02", `parameter "data_directory" cannot be changed`)
	wantErr(t, r.AlterSystem("nope", "1"), "42704", `unrecognized configuration parameter "nope"`)
	wantErr(t, r.AlterSystem("port", "0"), "22023", `0 is outside the valid range for parameter "port" (1 .. 65535)`)
	wantErr(t, r.AlterSystemReset("nope"), "42704", `unrecognized configuration parameter "nope"`)
	if err := r.AlterSystemReset("application_name"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, AutoConfName))
	if err != nil {
		t.Fatal(err)
	}
	want := autoConfHeader + `max_connections = 20
DateStyle = "German, DMY"
wake_up_all_waiters = true
shared_buffers = "256MB"
lock_timeout = "4s"
`
	if string(data) != want {
		t.Errorf("lockd.auto.conf:\n%s\nwant:\n%s", data, want)
	}
	if v := r.Value("lock_timeout").Int; v != 1000 {
		t.Errorf("ALTER SYSTEM applied before reload: %d", v)
	}
	if errs := r.Reload(); len(errs) != 2 { // max_connections and shared_buffers need a restart
		t.Errorf("Reload: %v", errs)
	}
	if v := r.Value("lock_timeout").Int; v != 4000 {
		t.Errorf("after reload lock_timeout = %d", v)
	}
	// A restart reads it all back.
	r2 := NewRegistry(nil)
	if err := r2.LoadFiles(conf, dir); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, r2, nil)
	for name, want := range map[string]string{"max_connections": "20", "DateStyle": "German, DMY", "shared_buffers": "256MB", "lock_timeout": "4s", "wake_up_all_waiters": "on"} {
		if got := show(t, s, name); got != want {
			t.Errorf("after restart %s = %q, want %q", name, got, want)
		}
	}
	if err := r2.AlterSystemReset("all"); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, AutoConfName)); string(data) != autoConfHeader {
		t.Errorf("after RESET ALL: %q", data)
	}
	r2.Reload()
	if v := r2.Value("lock_timeout").Int; v != 1000 {
		t.Errorf("after RESET ALL and reload lock_timeout = %d, want lockd.conf's 1000", v)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("data directory holds %d files (temporary files left?)", len(entries))
	}
	if err := NewRegistry(nil).AlterSystem("lock_timeout", "1s"); err == nil {
		t.Error("ALTER SYSTEM without a data directory succeeded")
	}
}

func TestOnChangeConcurrent(t *testing.T) {
	dir := t.TempDir()
	conf := writeFile(t, dir, "lockd.conf", "lwlock_wakeup_limit = 1\n")
	r := NewRegistry(nil)
	if err := r.LoadFiles(conf, dir); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []int64
	r.OnChange("lwlock_wakeup_limit", func(v Value) {
		_ = r.Value("lwlock_wakeup_limit") // hooks may read the registry
		mu.Lock()
		seen = append(seen, v.Int)
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 20; k++ {
				s, _ := r.NewSession(nil)
				s.Refresh()
				_ = s.Int("lwlock_wakeup_limit")
				_ = s.Rows()
			}
		}()
	}
	for k := 2; k <= 5; k++ {
		writeFile(t, dir, "lockd.conf", "lwlock_wakeup_limit = "+string(rune('0'+k))+"\n")
		r.Reload()
	}
	wg.Wait()
	if !reflect.DeepEqual(seen, []int64{1, 2, 3, 4, 5}) {
		t.Errorf("hook saw %v", seen)
	}
}

// FuzzParseConfig checks that no configuration file makes the file reader
// panic, and that every problem it reports names the file.
func FuzzParseConfig(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "config", "*.toml"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err == nil {
			f.Add(string(data))
		}
	}
	f.Add("a.b.c = 1\n[x]\n'y' = \"\"\"\nz = 2\n\"\"\"\n")
	f.Fuzz(func(t *testing.T, data string) {
		entries, fatal := parseConfig("/f.conf", data)
		for _, e := range fatal {
			if !strings.Contains(e.Error(), "/f.conf") {
				t.Fatalf("error %q does not name the file", e)
			}
		}
		for _, e := range entries {
			if e.err != nil && !strings.Contains(e.err.Error(), "/f.conf") {
				t.Fatalf("error %q does not name the file", e.err)
			}
		}
	})
}

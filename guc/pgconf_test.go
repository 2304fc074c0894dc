package guc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func loadPG(t *testing.T, path string) (*Registry, *Session) {
	t.Helper()
	r := NewRegistry(nil)
	if err := r.LoadFiles(path, ""); err != nil {
		t.Fatalf("LoadFiles: %v", err)
	}
	return r, newSession(t, r, nil)
}

func TestPGConfValues(t *testing.T) {
	_, s := loadPG(t, filepath.Join("testdata", "config", "pg_ok.conf"))
	for name, want := range map[string]string{
		"max_connections":              "100",
		"shared_buffers":               "256MB", // the later line wins
		"log_lock_waits":               "on",
		"deadlock_timeout":             "2s",
		"search_path":                  `"$user", public`,
		"application_name":             "it's x",
		"jit":                          "off",
		"wal_level":                    "replica",
		"huge_pages":                   "on",
		"log_timezone":                 "Etc/UTC",
		"checkpoint_completion_target": "0.9",
	} {
		if got := show(t, s, name); got != want {
			t.Errorf("SHOW %s = %q, want %q", name, got, want)
		}
	}
	if src := s.Source("shared_buffers"); src != SourceFile {
		t.Errorf("source of shared_buffers = %v", src)
	}
}

func TestPGConfIncludes(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "conf.d"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "conf.d/10-a.conf", "work_mem = '8MB'\nlock_timeout = 1s\n")
	writeFile(t, dir, "conf.d/20-b.conf", "lock_timeout = 2s\n")
	writeFile(t, dir, "conf.d/.hidden.conf", "lock_timeout = 9s\n")
	writeFile(t, dir, "conf.d/ignored.txt", "lock_timeout = 9s\n")
	writeFile(t, dir, "extra.conf", "statement_timeout = 5s\ninclude 'extra2.conf'\n")
	writeFile(t, dir, "extra2.conf", "idle_in_transaction_session_timeout = 7s\n")
	main := writeFile(t, dir, "postgresql.conf", "work_mem = 1MB\ninclude_dir 'conf.d'\ninclude = 'extra.conf'\ninclude_if_exists 'missing.conf'\n")
	_, s := loadPG(t, main)
	for name, want := range map[string]string{
		"work_mem": "8MB", "lock_timeout": "2s", "statement_timeout": "5s", "idle_in_transaction_session_timeout": "7s",
	} {
		if got := show(t, s, name); got != want {
			t.Errorf("SHOW %s = %q, want %q", name, got, want)
		}
	}

	// A file that includes itself stops at PostgreSQL's nesting depth.
	loop := writeFile(t, dir, "loop.conf", "include 'loop.conf'\n")
	err := NewRegistry(nil).LoadFiles(loop, "")
	if err == nil || !strings.Contains(err.Error(), "maximum nesting depth exceeded") {
		t.Fatalf("LoadFiles(loop) = %v", err)
	}
}

// TestInitdbPostgresqlConf loads what PostgreSQL 15's initdb writes: its
// postgresql.conf.sample (from the PostgreSQL installation) with the
// settings initdb fills in.
func TestInitdbPostgresqlConf(t *testing.T) {
	sample, err := os.ReadFile("/usr/share/postgresql/15/postgresql.conf.sample")
	if err != nil {
		t.Skipf("PostgreSQL 15's postgresql.conf.sample is not installed (apt-get install postgresql-15): %v", err)
	}
	set, err := os.ReadFile(filepath.Join("testdata", "initdb-settings.conf"))
	if err != nil {
		t.Fatal(err)
	}
	// initdb uncomments the sample's lines for the settings it chose.
	lines := strings.Split(string(sample), "\n")
	for _, l := range strings.Split(strings.TrimSpace(string(set)), "\n") {
		name, _, _ := strings.Cut(l, " ")
		done := false
		for i, sl := range lines {
			if strings.HasPrefix(sl, "#"+name+" = ") {
				lines[i] = l + "\t\t# set by initdb"
				done = true
				break
			}
		}
		if !done {
			t.Fatalf("the sample has no line for %s", name)
		}
	}
	path := writeFile(t, t.TempDir(), "postgresql.conf", strings.Join(lines, "\n"))
	_, s := loadPG(t, path)
	if got := show(t, s, "default_text_search_config"); got != "pg_catalog.english" {
		t.Errorf("default_text_search_config = %q", got)
	}
	if got := show(t, s, "TimeZone"); got != "Etc/UTC" {
		t.Errorf("TimeZone = %q", got)
	}

	// The sample, every line uncommented, is PostgreSQL's defaults: all of
	// them must be accepted too, except data_directory, which lockd takes
	// from -D only (docs/ecosystem.md).
	var all []string
	for _, sl := range strings.Split(string(sample), "\n") {
		if strings.HasPrefix(sl, "#") && len(sl) > 1 && sl[1] >= 'a' && sl[1] <= 'z' && strings.Contains(sl, " = ") && !strings.HasPrefix(sl, "#include") && !strings.HasPrefix(sl, "#data_directory") {
			all = append(all, sl[1:])
		}
	}
	if len(all) < 250 {
		t.Fatalf("only %d settings found in the sample", len(all))
	}
	r := NewRegistry(nil)
	if err := r.LoadFiles(writeFile(t, t.TempDir(), "all.conf", strings.Join(all, "\n")), ""); err != nil {
		t.Fatalf("the sample's defaults: %v", err)
	}
}

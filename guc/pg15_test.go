package guc

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// lockdDiffers lists where lockd's own definition of a PostgreSQL setting
// differs from PostgreSQL 15's, and why; every other fact must match.
var lockdDiffers = map[string]string{
	"client_encoding":    "boot value UTF8: lockd supports no other encoding",
	"server_encoding":    "boot value UTF8",
	"TimeZone":           "boot value UTC",
	"lc_messages":        "boot value C (PostgreSQL's comes from initdb's environment)",
	"port":               "boot value 5433, so lockd and PostgreSQL can run side by side",
	"server_version":     "lockd's version string",
	"server_version_num": "15.0",
	"wal_recycle":        "sighup: lockd's WAL segments are recycled server-wide",
}

// TestPG15Settings checks that every setting PostgreSQL 15 lists in
// pg_settings (testdata/pg15_settings.tsv) is known with PostgreSQL's type,
// unit, range, enum values, context and category.
func TestPG15Settings(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "pg15_settings.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		n++
		d, ok := Lookup(col[0])
		if !ok {
			t.Errorf("%s: unknown", col[0])
			continue
		}
		if d.Name != col[0] || d.Type.String() != col[1] || d.Unit != col[2] ||
			d.Category != col[7] || strings.Join(d.EnumValues, ",") != col[8] {
			t.Errorf("%s: lockd has %s %s %q %q %v, PostgreSQL %v", col[0], d.Name, d.Type, d.Unit, d.Category, d.EnumValues, col[1:9])
		}
		if _, ok := lockdDiffers[d.Name]; ok {
			continue
		}
		if d.Context.String() != col[6] {
			t.Errorf("%s: context %s, PostgreSQL %s", d.Name, d.Context, col[6])
		}
		if boot := strings.ReplaceAll(col[5], `\N`, ""); d.Boot != boot {
			t.Errorf("%s: boot value %q, PostgreSQL %q", d.Name, d.Boot, boot)
		}
		if col[3] != "" && (rangeText(d, d.Min) != col[3] || rangeText(d, d.Max) != col[4]) {
			t.Errorf("%s: range %v..%v, PostgreSQL %s..%s", d.Name, d.Min, d.Max, col[3], col[4])
		}
	}
	if n != len(pg15Settings) || n < 350 {
		t.Errorf("%d settings in the TSV, %d generated: run go generate ./guc", n, len(pg15Settings))
	}
	for i := range Table {
		d := &Table[i]
		if d.Extra == NoEffect && d.flags&flagNotInSample == 0 {
			t.Errorf("%s has no effect but is in lockd.conf.example", d.Name)
		}
	}
}

// TestPG15SettingContexts: the settings lockd does not implement are
// accepted exactly where PostgreSQL accepts them.
func TestPG15SettingContexts(t *testing.T) {
	s := newSession(t, NewRegistry(nil), nil)
	for _, tt := range []struct{ name, value, code, msg string }{
		{"jit", "off", "", ""},
		{"enable_memoize", "off", "", ""},
		{"work_mem", "64MB", "", ""},
		{"vacuum_cost_delay", "2ms", "", ""},
		{"huge_pages", "on", "55P02", `parameter "huge_pages" cannot be changed without restarting the server`},
		{"autovacuum_vacuum_scale_factor", "0.1", "55P02", `parameter "autovacuum_vacuum_scale_factor" cannot be changed now`},
		{"log_min_duration_statement", "1s", "", ""},
		{"post_auth_delay", "1s", "55P02", `parameter "post_auth_delay" cannot be set after connection start`},
		{"segment_size", "1", "55P02", `parameter "segment_size" cannot be changed`},
		{"jit", "maybe", "22023", `parameter "jit" requires a Boolean value`},
		{"constraint_exclusion", "sideways", "22023", `invalid value for parameter "constraint_exclusion": "sideways"`},
		{"geqo_threshold", "1", "22023", `1 is outside the valid range for parameter "geqo_threshold" (2 .. 2147483647)`},
	} {
		_, err := s.Set(tt.name, tt.value, false)
		if tt.code == "" {
			if err != nil {
				t.Errorf("SET %s = %s: %v", tt.name, tt.value, err)
			}
			continue
		}
		wantErr(t, err, tt.code, tt.msg)
	}
	for name, want := range map[string]string{"jit": "off", "work_mem": "64MB", "vacuum_cost_delay": "2ms", "log_min_duration_statement": "1s"} {
		if got := show(t, s, name); got != want {
			t.Errorf("SHOW %s = %q, want %q", name, got, want)
		}
	}
	if _, err := s.Set("constraint_exclusion", "yes", false); err != nil || show(t, s, "constraint_exclusion") != "on" {
		t.Errorf("constraint_exclusion = yes: %v, %s", err, show(t, s, "constraint_exclusion"))
	}

	// Startup packet (PGOPTIONS): user, superuser, backend and
	// superuser-backend settings are accepted, the others refused.
	r := NewRegistry(nil)
	s2, errs := r.NewSession(map[string]string{"options": "-c jit=off -c max_parallel_workers_per_gather=0 -c post_auth_delay=0 -c ignore_system_indexes=on"})
	if len(errs) != 0 {
		t.Fatalf("options: %v", errs)
	}
	if got := show(t, s2, "ignore_system_indexes"); got != "on" {
		t.Errorf("ignore_system_indexes = %q", got)
	}
	_, errs = r.NewSession(map[string]string{"options": "-c shared_preload_libraries=x -c autovacuum_work_mem=1MB"})
	if len(errs) != 2 || errs[0].Code != "55P02" || errs[1].Code != "55P02" {
		t.Errorf("options errors = %v", errs)
	}

	// Command line: every non-internal setting.
	if err := r.SetCommandLine("archive-mode", "on"); err != nil {
		t.Errorf("-c archive_mode=on: %v", err)
	}
}

// rangeText is a bound as pg_settings.min_val and max_val show it.
func rangeText(d *Def, f float64) string {
	if d.Type == Int {
		return strconv.FormatInt(int64(f), 10)
	}
	return formatG(f)
}

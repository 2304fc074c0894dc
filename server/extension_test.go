package server_test

import (
	"fmt"
	"strings"
	"testing"

	"lockd/internal/lockdtest"
)

func TestRelationExtensionModes(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	c := inst.Connect(t)
	for _, mode := range []string{"single", "fixed", "group"} {
		mustExec(t, c, "alter system set relation_extension_mode = '"+mode+"'")
		mustExec(t, c, "select pg_reload_conf()")
		table := "ext_" + mode
		mustExec(t, c, fmt.Sprintf("create table %s (id int, pad text)", table))
		mustExec(t, c, fmt.Sprintf("insert into %s select g, repeat('x', 1000) from generate_series(1, 200) g", table))
		if got := queryText(t, c, "select count(*), sum(length(pad)) from "+table); got != "200,200000" {
			t.Fatalf("%s: rows %s", mode, got)
		}
		got := queryText(t, c, "select extensions, pages_added, waits from pg_stat_lockd_extension where relname = '"+table+"'")
		f := strings.Split(got, ",")
		if len(f) != 3 {
			t.Fatalf("%s: pg_stat_lockd_extension %q", mode, got)
		}
		var ext, pages int
		fmt.Sscan(f[0], &ext)
		fmt.Sscan(f[1], &pages)
		// 200 rows of ~1 kB take about 29 pages
		switch mode {
		case "single", "group": // a lone inserter never waits: one page at a time
			if ext < 25 || pages != ext {
				t.Errorf("%s: %d extensions added %d pages", mode, ext, pages)
			}
		case "fixed":
			if ext < 1 || pages != 20*ext {
				t.Errorf("fixed: %d extensions added %d pages, want 20 each", ext, pages)
			}
		}
		size := queryText(t, c, "select pg_relation_size('"+table+"')")
		if want := fmt.Sprint(pages * 8192); size != want {
			t.Errorf("%s: pg_relation_size %s, want %s (every added page is in the file)", mode, size, want)
		}
	}
}

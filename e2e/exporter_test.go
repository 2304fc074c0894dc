package e2e

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"lockd/internal/lockdtest"
)

// exporterBinary finds postgres_exporter (Debian's package names it
// prometheus-postgres-exporter) or skips the test.
func exporterBinary(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"prometheus-postgres-exporter", "postgres_exporter"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("postgres_exporter not found on PATH (apt-get install prometheus-postgres-exporter)")
	return ""
}

// scrape fetches the exporter's metrics as name{labels} → value.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}

// metric returns the value of the series whose name is name and whose
// labels include every label of want (e.g. `datname="postgres"`).
func metric(m map[string]float64, name string, want ...string) (float64, bool) {
	for k, v := range m {
		n, labels, _ := strings.Cut(k, "{")
		if n != name {
			continue
		}
		ok := true
		for _, w := range want {
			if !strings.Contains(labels, w) {
				ok = false
			}
		}
		if ok {
			return v, true
		}
	}
	return 0, false
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestPostgresExporter points postgres_exporter, with its default
// collectors, at lockd under pgbench: every scrape must succeed (pg_up 1,
// pg_exporter_last_scrape_error 0, no query errors in its log), and the
// values must move: xact_commit grows by at least pgbench's transactions,
// and the lock counts by mode are there. scripts/check-postgres-exporter.sh
// runs the same check for longer.
func TestPostgresExporter(t *testing.T) {
	exporter := exporterBinary(t)
	pgbench := need(t, "pgbench")
	inst := lockdtest.Start(t, lockdtest.Options{})
	conn := []string{"-h", "127.0.0.1", "-p", strconv.Itoa(inst.Port), "-U", "postgres"}
	if o := run(t, 60*time.Second, pgbench, append(append([]string{"-i", "-s", "1", "-q"}, conn...), "postgres")...); o.code != 0 {
		t.Fatalf("pgbench -i: exit %d\n%s", o.code, o.stderr)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, exporter, "--web.listen-address="+addr)
	cmd.Env = append(clientEnv(), "DATA_SOURCE_NAME=postgresql://postgres@127.0.0.1:"+strconv.Itoa(inst.Port)+"/postgres?sslmode=disable")
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cancel()
		_ = cmd.Wait()
	}()
	url := "http://" + addr + "/metrics"
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the exporter does not answer on %s: %v\n%s", addr, err, log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	check := func(m map[string]float64) {
		t.Helper()
		if v, ok := metric(m, "pg_up"); !ok || v != 1 {
			t.Fatalf("pg_up = %v (present %v)\n%s", v, ok, log.String())
		}
		if v, ok := metric(m, "pg_exporter_last_scrape_error"); !ok || v != 0 {
			t.Fatalf("pg_exporter_last_scrape_error = %v (present %v)\n%s", v, ok, log.String())
		}
	}
	before := scrape(t, url)
	check(before)
	commits0, ok := metric(before, "pg_stat_database_xact_commit", `datname="postgres"`)
	if !ok {
		t.Fatalf("no pg_stat_database_xact_commit for postgres")
	}

	// Scrape while pgbench runs.
	done := make(chan output, 1)
	go func() {
		done <- run(t, 60*time.Second, pgbench, append(append([]string{"-c", "4", "-T", "3"}, conn...), "postgres")...)
	}()
	var during []map[string]float64
	var o output
loop:
	for {
		select {
		case o = <-done:
			break loop
		case <-time.After(500 * time.Millisecond):
			during = append(during, scrape(t, url))
		}
	}
	if o.code != 0 {
		t.Fatalf("pgbench: exit %d\n%s", o.code, o.stderr)
	}
	for _, m := range during {
		check(m)
	}
	processed := regexp.MustCompile(`number of transactions actually processed: (\d+)`).FindStringSubmatch(o.stdout)
	if processed == nil {
		t.Fatalf("pgbench output: %s", o.stdout)
	}
	n, _ := strconv.Atoi(processed[1])

	after := scrape(t, url)
	check(after)
	commits1, _ := metric(after, "pg_stat_database_xact_commit", `datname="postgres"`)
	if commits1-commits0 < float64(n) {
		t.Errorf("xact_commit grew by %v, pgbench committed %d", commits1-commits0, n)
	}
	for _, mode := range []string{"accesssharelock", "rowexclusivelock", "exclusivelock", "accessexclusivelock"} {
		if _, ok := metric(after, "pg_locks_count", `datname="postgres"`, `mode="`+mode+`"`); !ok {
			t.Errorf("no pg_locks_count for mode %s", mode)
		}
	}
	if v, ok := metric(after, "pg_database_size_bytes", `datname="postgres"`); !ok || v < 10<<20 {
		t.Errorf("pg_database_size_bytes = %v (present %v), want the pgbench tables' size", v, ok)
	}
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "level=error") || strings.Contains(line, "Error running query") {
			t.Errorf("exporter log: %s", line)
		}
	}
}

package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// TestProgressTerminal: on a terminal a bar with an ETA is redrawn (also by
// its own ticker) and each finished run gets a line; elsewhere plain lines.
func TestProgressTerminal(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, true)
	p.start(2, 10*time.Second)
	r := &Run{Workload: "w", Variant: "a", Clients: 4, Repetition: 1, Status: StatusOK, TPS: 1234, LatP99Ms: 2.5}
	p.runStart(r)
	time.Sleep(1100 * time.Millisecond) // one tick
	p.warn("something")
	p.runEnd(r)
	r2 := &Run{Workload: "w", Variant: "b", Clients: 4, Repetition: 1, Status: StatusFailed, Error: "pgbench: exit status 2\nmore", Log: "logs/x.log"}
	p.runStart(r2)
	p.runEnd(r2)
	p.finish()
	out := buf.String()
	for _, want := range []string{"0/2  ETA 24s  w a clients=4 rep 1", "warning: something\n", "[1/2] w a clients=4 rep 1: 1234 tps, p99 2.50 ms\n",
		"[2/2] w b clients=4 rep 1: failed: pgbench: exit status 2 (log: logs/x.log)\n", "\r\033[K"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress lacks %q:\n%q", want, out)
		}
	}

	buf.Reset()
	p = newProgress(&buf, false)
	p.start(1, 10*time.Second)
	p.runStart(r)
	p.runEnd(r)
	p.finish()
	if got := buf.String(); got != "1 runs planned, about 12s\n[1/1] w a clients=4 rep 1: 1234 tps, p99 2.50 ms\n" {
		t.Errorf("plain progress:\n%q", got)
	}
}

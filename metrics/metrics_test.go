package metrics

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"lockd/guc"
	"lockd/internal/lockdtest"
	"lockd/locks"
)

func newManager(t *testing.T) *locks.Manager {
	t.Helper()
	m, err := locks.NewManager(locks.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newProc(t *testing.T, m *locks.Manager, pid int32) *locks.Proc {
	t.Helper()
	p, err := m.NewProc(pid)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestLocksGolden drives a fresh lock manager through known activity —
// two fast-path relation locks, an advisory lock that a second backend
// waits for — and compares the counters that activity defines exactly.
func TestLocksGolden(t *testing.T) {
	m := newManager(t)
	ctx := context.Background()
	p1 := newProc(t, m, 1001)
	defer p1.Close()

	rel := locks.RelationTag(1, 16384)
	for range 2 {
		if err := m.Lock(ctx, p1, rel, locks.AccessShareLock, locks.LockOptions{}); err != nil {
			t.Fatal(err)
		}
		m.Unlock(p1, rel, locks.AccessShareLock, false)
	}
	adv := locks.AdvisoryTag64(1, 42)
	if err := m.Lock(ctx, p1, adv, locks.ExclusiveLock, locks.LockOptions{Session: true}); err != nil {
		t.Fatal(err)
	}
	waiting := make(chan *locks.Proc)
	done := make(chan error)
	go func() {
		p2, err := m.NewProc(1002)
		if err != nil {
			done <- err
			return
		}
		waiting <- p2
		if err := m.Lock(ctx, p2, adv, locks.ExclusiveLock, locks.LockOptions{Session: true}); err != nil {
			p2.Close()
			done <- err
			return
		}
		m.Unlock(p2, adv, locks.ExclusiveLock, true)
		<-done     // hold p2 open until the scrape below
		p2.Close() // closed before main goes on, so lockd_procs counts p1 only
		done <- nil
	}()
	p2 := <-waiting
	eventually(t, "p2 to wait on the advisory lock", func() bool {
		typ, name := p2.WaitEvent()
		return typ == "Lock" && name == "advisory"
	})
	reg := prometheus.NewPedanticRegistry()
	if _, err := New(reg, Sources{Locks: m}); err != nil {
		t.Fatal(err)
	}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP lockd_procs_waiting Live procs currently waiting, by pg_stat_activity wait_event_type (sampled at scrape).
# TYPE lockd_procs_waiting gauge
lockd_procs_waiting{wait_event_type="Activity"} 0
lockd_procs_waiting{wait_event_type="BufferPin"} 0
lockd_procs_waiting{wait_event_type="Client"} 0
lockd_procs_waiting{wait_event_type="Extension"} 0
lockd_procs_waiting{wait_event_type="IO"} 0
lockd_procs_waiting{wait_event_type="IPC"} 0
lockd_procs_waiting{wait_event_type="LWLock"} 0
lockd_procs_waiting{wait_event_type="Lock"} 1
lockd_procs_waiting{wait_event_type="Timeout"} 0
`), "lockd_procs_waiting"); err != nil {
		t.Error(err)
	}
	m.Unlock(p1, adv, locks.ExclusiveLock, true)
	done <- nil
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	const want = `
# HELP lockd_fastpath_fallbacks_total Fast-path eligible relation locks sent to the shared lock table, by reason (slots_full: the relation's slot group was full; strong_lock: a strong lock on the relation was held or pending).
# TYPE lockd_fastpath_fallbacks_total counter
lockd_fastpath_fallbacks_total{reason="slots_full"} 0
lockd_fastpath_fallbacks_total{reason="strong_lock"} 0
# HELP lockd_fastpath_hits_total Weak relation locks granted in a backend's fast-path slots.
# TYPE lockd_fastpath_hits_total counter
lockd_fastpath_hits_total 2
# HELP lockd_fastpath_slots Fast-path lock slots a new backend gets (fastpath_lock_slots as resolved).
# TYPE lockd_fastpath_slots gauge
lockd_fastpath_slots 64
# HELP lockd_lock_acquisitions_total Heavyweight lock grants by lock type, mode and path (fastpath: the backend's own slots; shared: the shared lock table).
# TYPE lockd_lock_acquisitions_total counter
lockd_lock_acquisitions_total{locktype="advisory",mode="ExclusiveLock",path="fastpath"} 0
lockd_lock_acquisitions_total{locktype="advisory",mode="ExclusiveLock",path="shared"} 2
lockd_lock_acquisitions_total{locktype="relation",mode="AccessShareLock",path="fastpath"} 2
lockd_lock_acquisitions_total{locktype="relation",mode="AccessShareLock",path="shared"} 0
# HELP lockd_lock_deadlocks_total Heavyweight lock requests aborted because of a deadlock (SQLSTATE 40P01).
# TYPE lockd_lock_deadlocks_total counter
lockd_lock_deadlocks_total{locktype="advisory",mode="ExclusiveLock"} 0
lockd_lock_deadlocks_total{locktype="relation",mode="AccessShareLock"} 0
# HELP lockd_lock_waits_total Heavyweight lock requests that had to sleep.
# TYPE lockd_lock_waits_total counter
lockd_lock_waits_total{locktype="advisory",mode="ExclusiveLock"} 1
lockd_lock_waits_total{locktype="relation",mode="AccessShareLock"} 0
# HELP lockd_procs Live lock-manager procs: client backends plus auxiliary processes such as the checkpointer.
# TYPE lockd_procs gauge
lockd_procs 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"lockd_fastpath_fallbacks_total", "lockd_fastpath_hits_total", "lockd_fastpath_slots",
		"lockd_lock_acquisitions_total", "lockd_lock_deadlocks_total", "lockd_lock_waits_total", "lockd_procs"); err != nil {
		t.Error(err)
	}
	// The advisory wait is one observation of the wait-time histogram;
	// the relation lock never waited, so it has no histogram.
	if n := testutil.CollectAndCount(reg, "lockd_lock_wait_seconds"); n != 1 {
		t.Errorf("lockd_lock_wait_seconds has %d series, want 1 (advisory ExclusiveLock)", n)
	}
	h := histogram(t, reg, "lockd_lock_wait_seconds", map[string]string{"locktype": "advisory", "mode": "ExclusiveLock"})
	if h == nil || h.GetSampleCount() != 1 || h.GetSampleSum() <= 0 {
		t.Fatalf("advisory wait histogram: %v", h)
	}
	bs := h.GetBucket()
	if len(bs) != 22 || bs[0].GetUpperBound() != 1e-6 || bs[len(bs)-1].GetUpperBound() != 10 {
		t.Errorf("buckets: %v", bs)
	}
	for i, b := range bs {
		// Cumulative: the one wait counts from the first bound not below it.
		var want uint64
		if b.GetUpperBound() >= h.GetSampleSum() {
			want = 1
		}
		if b.GetCumulativeCount() != want {
			t.Errorf("bucket %d (le %g): %d, want %d (wait %gs)", i, b.GetUpperBound(), b.GetCumulativeCount(), want, h.GetSampleSum())
		}
	}
	if n := testutil.CollectAndCount(reg, "lockd_lwlock_acquisitions_total"); n == 0 {
		t.Error("no lockd_lwlock_acquisitions_total series after lock activity")
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// TestLWLockWaitUntilFreeGolden drives the wait-until-free operations on
// a WALWrite and a WALInsert lock — one AcquireOrWait that takes the lock
// and one that waits for it, one WaitForVar that sleeps until the holder
// advances the variable and one that finds the lock free — and compares
// the series that activity defines exactly.
func TestLWLockWaitUntilFreeGolden(t *testing.T) {
	m := newManager(t)
	p1, p2 := newProc(t, m, 1001), newProc(t, m, 1002)
	defer p1.Close()
	defer p2.Close()
	sleeping := func(p *locks.Proc) func() bool {
		return func() bool { typ, _ := p.WaitEvent(); return typ == "LWLock" }
	}

	walWrite := locks.NewLWLock(locks.TrancheWALWrite)
	if !walWrite.AcquireOrWait(p1, locks.LWExclusive) {
		t.Fatal("free WALWrite not acquired")
	}
	done := make(chan bool)
	go func() { done <- walWrite.AcquireOrWait(p2, locks.LWExclusive) }()
	eventually(t, "p2 to sleep on WALWrite", sleeping(p2))
	walWrite.Release(p1)
	if <-done {
		t.Fatal("AcquireOrWait on a held lock took it")
	}

	var insertingAt locks.LWLockVar
	walInsert := locks.NewLWLock(locks.TrancheWALInsert)
	walInsert.Acquire(p1, locks.LWExclusive)
	go func() {
		free, _ := walInsert.WaitForVar(p2, &insertingAt, 0)
		done <- free
	}()
	eventually(t, "p2 to sleep on WALInsert", sleeping(p2))
	walInsert.UpdateVar(p1, &insertingAt, 100)
	if <-done {
		t.Fatal("WaitForVar reported a held lock free")
	}
	walInsert.ReleaseClearVar(p1, &insertingAt, 0)
	if free, _ := walInsert.WaitForVar(p2, &insertingAt, 0); !free {
		t.Fatal("WaitForVar reported a free lock held")
	}

	reg := prometheus.NewPedanticRegistry()
	if _, err := New(reg, Sources{Locks: m}); err != nil {
		t.Fatal(err)
	}
	const want = `
# HELP lockd_lwlock_acquire_or_wait_total LWLock AcquireOrWait calls (PostgreSQL's LWLockAcquireOrWait, group commit), by tranche and outcome (acquired: took the lock; freed: waited until it was released and returned without it).
# TYPE lockd_lwlock_acquire_or_wait_total counter
lockd_lwlock_acquire_or_wait_total{outcome="acquired",tranche="WALWrite"} 1
lockd_lwlock_acquire_or_wait_total{outcome="freed",tranche="WALWrite"} 1
# HELP lockd_lwlock_acquisitions_total LWLock acquisitions (conditional ones included), by tranche and mode.
# TYPE lockd_lwlock_acquisitions_total counter
lockd_lwlock_acquisitions_total{mode="exclusive",tranche="WALInsert"} 1
lockd_lwlock_acquisitions_total{mode="exclusive",tranche="WALWrite"} 1
# HELP lockd_lwlock_wait_for_var_total LWLock WaitForVar calls (PostgreSQL's LWLockWaitForVar, WAL insertion waits), by tranche and outcome (freed: the lock was or became free; updated: its holder advanced the variable).
# TYPE lockd_lwlock_wait_for_var_total counter
lockd_lwlock_wait_for_var_total{outcome="freed",tranche="WALInsert"} 1
lockd_lwlock_wait_for_var_total{outcome="updated",tranche="WALInsert"} 1
# HELP lockd_lwlock_wakeups_total Wake-ups received by LWLock waiters.
# TYPE lockd_lwlock_wakeups_total counter
lockd_lwlock_wakeups_total{mode="exclusive",tranche="WALInsert"} 0
lockd_lwlock_wakeups_total{mode="exclusive",tranche="WALWrite"} 0
lockd_lwlock_wakeups_total{mode="wait_until_free",tranche="WALInsert"} 1
lockd_lwlock_wakeups_total{mode="wait_until_free",tranche="WALWrite"} 1
# HELP lockd_lwlock_waits_total LWLock acquisitions that had to sleep at least once.
# TYPE lockd_lwlock_waits_total counter
lockd_lwlock_waits_total{mode="exclusive",tranche="WALInsert"} 0
lockd_lwlock_waits_total{mode="exclusive",tranche="WALWrite"} 0
lockd_lwlock_waits_total{mode="wait_until_free",tranche="WALInsert"} 1
lockd_lwlock_waits_total{mode="wait_until_free",tranche="WALWrite"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"lockd_lwlock_acquire_or_wait_total", "lockd_lwlock_wait_for_var_total", "lockd_lwlock_acquisitions_total",
		"lockd_lwlock_waits_total", "lockd_lwlock_wakeups_total"); err != nil {
		t.Error(err)
	}
	// Both sleeps are observed by the wait-time histogram, of mode
	// wait_until_free; the exclusive holders never waited.
	if n := testutil.CollectAndCount(reg, "lockd_lwlock_wait_seconds"); n != 2 {
		t.Errorf("lockd_lwlock_wait_seconds has %d series, want 2", n)
	}
	if h := histogram(t, reg, "lockd_lwlock_wait_seconds", map[string]string{"tranche": "WALInsert", "mode": "wait_until_free"}); h == nil || h.GetSampleCount() != 1 {
		t.Errorf("WALInsert wait_until_free histogram: %v", h)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// onlySettings passes on the lockd_setting series of the named settings
// (the full list follows guc.Table, which other changes extend).
type onlySettings struct {
	prometheus.Collector
	names map[string]bool
}

func (o onlySettings) Collect(ch chan<- prometheus.Metric) {
	all := make(chan prometheus.Metric)
	go func() { o.Collector.Collect(all); close(all) }()
	for m := range all {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			panic(err)
		}
		keep := true
		for _, l := range pb.GetLabel() {
			if l.GetName() == "name" && !o.names[l.GetValue()] {
				keep = false
			}
		}
		if keep {
			ch <- m
		}
	}
}

func TestSettingsGolden(t *testing.T) {
	settings := guc.NewRegistry(slog.New(slog.DiscardHandler))
	for _, kv := range [][2]string{{"deadlock_timeout", "250ms"}, {"wake_up_all_waiters", "on"}, {"fastpath_lock_slots", "32"}, {"relation_extension_mode", "single"}} {
		if err := settings.SetCommandLine(kv[0], kv[1]); err != nil {
			t.Fatal(err)
		}
	}
	c := onlySettings{newSettingsCollector(settings, "v1.2.3"),
		map[string]bool{"deadlock_timeout": true, "wake_up_all_waiters": true, "fastpath_lock_slots": true, "track_lock_timing": true, "relation_extension_mode": true}}
	const want = `
# HELP lockd_build_info Always 1; the version label is lockd's version.
# TYPE lockd_build_info gauge
lockd_build_info{version="v1.2.3"} 1
# HELP lockd_setting Server-wide value of each bool, integer and real setting, as pg_settings.setting shows it (in the setting's own unit, given by the unit label; booleans are 0 or 1).
# TYPE lockd_setting gauge
lockd_setting{name="deadlock_timeout",unit="ms"} 250
lockd_setting{name="fastpath_lock_slots",unit=""} 32
lockd_setting{name="track_lock_timing",unit=""} 1
lockd_setting{name="wake_up_all_waiters",unit=""} 1
# HELP lockd_setting_enum Always 1; the value label is the server-wide value of an enum setting (relation_extension_mode, default_transaction_isolation, ...).
# TYPE lockd_setting_enum gauge
lockd_setting_enum{name="relation_extension_mode",value="single"} 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
	// Every bool, integer and real setting is there, strings and enums not.
	var want2 int
	for _, d := range guc.Table {
		if d.Type == guc.Bool || d.Type == guc.Int || d.Type == guc.Real {
			want2++
		}
	}
	if n := testutil.CollectAndCount(newSettingsCollector(settings, ""), "lockd_setting"); n != want2 {
		t.Errorf("lockd_setting has %d series, want %d", n, want2)
	}
}

// TestServer runs statements through a real lockd and checks that the
// series a dashboard needs move, and that the whole registry lints clean.
func TestServer(t *testing.T) {
	inst := lockdtest.Start(t, lockdtest.Options{})
	reg := NewRegistry()
	if _, err := New(reg, ServerSources(inst.Server, "test")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	a, b := inst.Connect(t), inst.Connect(t)
	for _, q := range []string{
		"create table t(id int primary key, v text)",
		"insert into t select g, 'x' from generate_series(1, 500) g",
		"select count(*) from t",
		"select v from t where id = 7",
		"update t set v = 'y' where id = 7",
		"begin", "delete from t where id = 8", "rollback",
	} {
		if _, err := a.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Advisory lock contention: b waits for a.
	if _, err := a.Exec(ctx, "select pg_advisory_lock(42)"); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() {
		_, err := b.Exec(ctx, "select pg_advisory_lock(42)")
		waited <- err
	}()
	eventually(t, "a session waiting on an advisory lock", func() bool {
		return gaugeValue(t, reg, "lockd_procs_waiting", "Lock") == 1
	})
	if got := gaugeValue(t, reg, "lockd_sessions", "active"); got != 1 {
		t.Errorf("lockd_sessions{state=\"active\"} = %v during the wait, want 1", got)
	}
	if _, err := a.Exec(ctx, "select pg_advisory_unlock(42)"); err != nil {
		t.Fatal(err)
	}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}

	for _, c := range []struct {
		metric string
		labels map[string]string
	}{
		{"lockd_lock_waits_total", map[string]string{"locktype": "advisory", "mode": "ExclusiveLock"}},
		{"lockd_lock_wait_seconds", map[string]string{"locktype": "advisory", "mode": "ExclusiveLock"}},
		{"lockd_lock_acquisitions_total", map[string]string{"locktype": "relation", "path": "fastpath"}},
		{"lockd_fastpath_hits_total", nil},
		{"lockd_lwlock_acquisitions_total", map[string]string{"tranche": "LockManager"}},
		{"lockd_lwlock_acquisitions_total", map[string]string{"tranche": "LockFastPath"}},
		{"lockd_lwlock_acquisitions_total", map[string]string{"tranche": "BufferMapping"}},
		{"lockd_lwlock_acquisitions_total", map[string]string{"tranche": "ProcArray"}},
		{"lockd_transactions_committed_total", nil},
		{"lockd_transactions_rolled_back_total", nil},
		{"lockd_transactions_xids_assigned_total", nil},
		{"lockd_buffer_hits_total", nil},
		{"lockd_relation_extension_extensions_total", nil},
		{"lockd_relation_extension_pages_total", nil},
		{"lockd_statement_duration_seconds", map[string]string{"kind": "select"}},
		{"lockd_statement_duration_seconds", map[string]string{"kind": "insert"}},
		{"lockd_statement_duration_seconds", map[string]string{"kind": "update"}},
		{"lockd_statement_duration_seconds", map[string]string{"kind": "transaction"}},
		{"lockd_sessions", map[string]string{"state": "idle"}},
		{"lockd_setting", map[string]string{"name": "max_connections"}},
		{"lockd_build_info", nil},
		{"go_goroutines", nil},
	} {
		if v := sum(t, reg, c.metric, c.labels); v <= 0 {
			t.Errorf("%s%v = %v, want > 0", c.metric, c.labels, v)
		}
	}

	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}

	// The endpoint serves the same registry.
	ep, err := Serve("127.0.0.1:0", reg, nil, false, "")
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close(context.Background())
	get := func(ep *Endpoint, path string) (int, string) {
		resp, err := http.Get("http://" + ep.Addr().String() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(body)
	}
	if code, body := get(ep, "/metrics"); code != http.StatusOK || !strings.Contains(body, `lockd_fastpath_hits_total `) {
		t.Fatalf("GET /metrics: %d\n%.500s", code, body)
	}
	// runtime profiles only when asked for (debug_profiles)
	if code, _ := get(ep, "/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/ without profiles: %d, want 404", code)
	}
	prof, err := Serve("127.0.0.1:0", reg, nil, true, "")
	if err != nil {
		t.Fatal(err)
	}
	defer prof.Close(context.Background())
	if code, body := get(prof, "/debug/pprof/heap?debug=1"); code != http.StatusOK || !strings.Contains(body, "heap profile") {
		t.Errorf("GET /debug/pprof/heap: %d\n%.300s", code, body)
	}
}

// series returns the series of metric whose labels include labels.
func series(t *testing.T, g prometheus.Gatherer, metric string, labels map[string]string) []*dto.Metric {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []*dto.Metric
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for k, v := range labels {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == k && l.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			out = append(out, m)
		}
	}
	return out
}

// sum adds the values of the series of metric whose labels include
// labels: counter and gauge values, histogram sample counts.
func sum(t *testing.T, g prometheus.Gatherer, metric string, labels map[string]string) float64 {
	t.Helper()
	var total float64
	for _, m := range series(t, g, metric, labels) {
		switch {
		case m.Counter != nil:
			total += m.Counter.GetValue()
		case m.Gauge != nil:
			total += m.Gauge.GetValue()
		case m.Histogram != nil:
			total += float64(m.Histogram.GetSampleCount())
		}
	}
	return total
}

// histogram returns the histogram of the first series of metric whose
// labels include labels, or nil.
func histogram(t *testing.T, g prometheus.Gatherer, metric string, labels map[string]string) *dto.Histogram {
	t.Helper()
	if ms := series(t, g, metric, labels); len(ms) > 0 {
		return ms[0].GetHistogram()
	}
	return nil
}

func gaugeValue(t *testing.T, g prometheus.Gatherer, metric, labelValue string) float64 {
	t.Helper()
	key := map[string]string{"lockd_procs_waiting": "wait_event_type", "lockd_sessions": "state"}[metric]
	return sum(t, g, metric, map[string]string{key: labelValue})
}

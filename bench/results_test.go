package bench

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const metricsBefore = `# HELP lockd_lwlock_waits_total x
# TYPE lockd_lwlock_waits_total counter
lockd_lwlock_waits_total{mode="exclusive",tranche="LockManager"} 10
lockd_lwlock_waits_total{mode="shared",tranche="LockManager"} 5
lockd_lwlock_wakeups_total{mode="exclusive",tranche="LockManager"} 12
lockd_lwlock_wait_seconds_sum{mode="exclusive",tranche="LockManager"} 1
lockd_lwlock_wait_seconds_bucket{mode="exclusive",tranche="LockManager",le="1e-06"} 3
lockd_fastpath_hits_total 100
lockd_fastpath_fallbacks_total{reason="slots_full"} 50
lockd_fastpath_fallbacks_total{reason="strong_lock"} 0
lockd_relation_extension_extensions_total 4
lockd_relation_extension_pages_total 4
lockd_procarray_group_size_sum 0
lockd_procarray_group_size_count 0
lockd_fastpath_slots 16
go_goroutines 7
`

const metricsAfter = `lockd_lwlock_waits_total{mode="exclusive",tranche="LockManager"} 30
lockd_lwlock_waits_total{mode="shared",tranche="LockManager"} 15
lockd_lwlock_wakeups_total{mode="exclusive",tranche="LockManager"} 57
lockd_lwlock_wait_seconds_sum{mode="exclusive",tranche="LockManager"} 3
lockd_lwlock_waits_total{mode="exclusive",tranche="ProcArray"} 2
lockd_fastpath_hits_total 116
lockd_fastpath_fallbacks_total{reason="slots_full"} 234
lockd_fastpath_fallbacks_total{reason="strong_lock"} 0
lockd_relation_extension_extensions_total 6
lockd_relation_extension_pages_total 44
lockd_procarray_group_size_sum 30
lockd_procarray_group_size_count 10
lockd_fastpath_slots 16
`

func TestMetricsDeltaAndDerived(t *testing.T) {
	before, err := parseMetrics(strings.NewReader(metricsBefore))
	if err != nil {
		t.Fatal(err)
	}
	after, err := parseMetrics(strings.NewReader(metricsAfter))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := after["lockd_fastpath_slots"]; ok {
		t.Error("a gauge was kept as a counter")
	}
	if _, ok := before[`lockd_lwlock_wait_seconds_bucket{mode="exclusive",tranche="LockManager",le="1e-06"}`]; ok {
		t.Error("histogram buckets were kept")
	}
	d := after.delta(before)
	got := derive(d, 4, 2) // 4 clients, 2 s: 8 backend-seconds
	want := map[string]float64{
		"lwlock_waits:LockManager":           30,
		"lwlock_waits:ProcArray":             2,
		"lwlock_wakeups:LockManager":         45,
		"wakeups_per_wait:LockManager":       1.5,
		"lwlock_wait_s:LockManager":          2,
		"wait_time_share:LWLock:LockManager": 0.25,
		"fastpath_hits":                      16,
		"fastpath_fallbacks":                 184,
		"fastpath_hit_ratio":                 0.08,
		"ext_pages_per_extension":            20,
		"group_clear_batch_mean":             3,
	}
	for k, w := range want {
		if math.Abs(got[k]-w) > 1e-9 {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
}

func TestParseSeries(t *testing.T) {
	s := parseSeries(`lockd_lock_waits_total{locktype="relation",mode="AccessShareLock"}`)
	if s.Name != "lockd_lock_waits_total" || s.Labels["locktype"] != "relation" || s.Labels["mode"] != "AccessShareLock" {
		t.Errorf("%+v", s)
	}
}

const pgbenchOutput = `pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: prepared
number of clients: 4
number of threads: 2
maximum number of tries: 1
duration: 3 s
number of transactions actually processed: 4506
number of failed transactions: 3 (0.067%)
latency average = 2.661 ms
initial connection time = 6.040 ms
tps = 1503.092917 (without initial connection time)
`

func TestParsePgbench(t *testing.T) {
	r, err := parsePgbench(pgbenchOutput)
	if err != nil {
		t.Fatal(err)
	}
	if r.TPS != 1503.092917 || r.Transactions != 4506 || r.Failed != 3 || r.Retried != 0 || r.LatencyAvgMs != 2.661 {
		t.Errorf("%+v", r)
	}
	if _, err := parsePgbench("pgbench: error: connection to server failed\n"); err == nil {
		t.Error("output without a tps line was accepted")
	}
}

func TestTxLogs(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "tx")
	// client_id transaction_no time script_no time_epoch time_us
	var a, b strings.Builder
	for i := 1; i <= 100; i++ {
		a.WriteString("0 1 " + itoa(200000+i*1000) + " 0 1700000000 1\n")
	}
	b.WriteString("1 1 failed 0 1700000000 1\n")
	if err := os.WriteFile(prefix+".123", []byte(a.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prefix+".123.1", []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := readTxLogs(prefix, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.ms) != 100 || l.failed != 1 {
		t.Fatalf("%d latencies, %d failed", len(l.ms), l.failed)
	}
	// think time subtracted: 1 ms .. 100 ms
	if q := quantile(l.ms, 0.5); q != 50 {
		t.Errorf("p50 %v, want 50", q)
	}
	if q := quantile(l.ms, 0.99); q != 99 {
		t.Errorf("p99 %v, want 99", q)
	}
	if files, _ := filepath.Glob(prefix + ".*"); len(files) != 0 {
		t.Errorf("logs left behind: %v", files)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func testRunner(t *testing.T, order string) *runner {
	s, err := ParseSpec("x.toml", minimal)
	if err != nil {
		t.Fatal(err)
	}
	s.Order, s.Repetitions, s.RandomSeed = order, 2, 7
	arms, _ := buildArms(s, Config{Postgres: "/usr/lib/postgresql/15/bin"})
	return &runner{spec: s, arms: arms}
}

// TestPlanABBA: each block holds every arm once; even repetitions run
// the arms in reverse.
func TestPlanABBA(t *testing.T) {
	plan := testRunner(t, "abba").plan()
	if len(plan) != 1*2*2*3 { // workloads × repetitions × clients × arms
		t.Fatalf("%d runs", len(plan))
	}
	var got []string
	for _, r := range plan {
		got = append(got, r.Variant)
	}
	want := "a b postgres a b postgres postgres b a postgres b a"
	if strings.Join(got, " ") != want {
		t.Errorf("order %s, want %s", strings.Join(got, " "), want)
	}
	for i, r := range plan {
		if r.Index != i+1 || r.Block != i/3+1 || r.Position != i%3+1 {
			t.Errorf("run %d: index %d block %d position %d", i, r.Index, r.Block, r.Position)
		}
	}
}

func TestPlanRandomIsSeededBlocks(t *testing.T) {
	p1, p2 := testRunner(t, "random").plan(), testRunner(t, "random").plan()
	for i := range p1 {
		if p1[i].Variant != p2[i].Variant {
			t.Fatal("the same seed gave different orders")
		}
	}
	for b := 0; b < len(p1)/3; b++ {
		seen := map[string]bool{}
		for _, r := range p1[3*b : 3*b+3] {
			seen[r.Variant] = true
		}
		if len(seen) != 3 {
			t.Errorf("block %d does not hold every arm once", b+1)
		}
	}
}

// fakeResults are two repetitions of a two-arm sweep at two client counts.
func fakeResults(t *testing.T) *Results {
	s, err := ParseSpec("x.toml", minimal+"\n[[plot]]\nname = \"fp\"\ntitle = \"Fast path\"\nx = \"variant\"\ny = [\"fastpath_hit_ratio\", \"lwlock_waits:LockManager/txn\"]\n\n[[plot]]\nname = \"w\"\nkind = \"wait_shares\"\n")
	if err != nil {
		t.Fatal(err)
	}
	res := &Results{Spec: s, Arms: []string{"a", "b"}, armTitles: map[string]string{"a": "A", "b": "B"},
		Machine: map[string]string{"cpus": "2"}, Versions: map[string]string{"lockd": "lockd test"}, Settings: map[string]map[string]string{}}
	tps := map[string][]float64{"a1": {100, 110}, "b1": {105, 108}, "a2": {200, 210}, "b2": {300, 320}}
	i := 0
	for _, c := range []int{1, 2} {
		for rep := 0; rep < 2; rep++ {
			for _, a := range []string{"a", "b"} {
				i++
				v := tps[a+itoa(c)][rep]
				res.Runs = append(res.Runs, &Run{Index: i, Workload: "sel", Target: "lockd", Variant: a, Clients: c, Repetition: rep + 1,
					Status: StatusOK, TPS: v, Transactions: int64(v * 2), LatP99Ms: 1000 / v, ServerCPU: nan, Samples: 8,
					WaitShares: map[string]float64{"CPU": 0.75, "LWLock:LockManager": 0.25},
					Counters:   map[string]float64{`lockd_lwlock_waits_total{mode="exclusive",tranche="LockManager"}`: v},
					Derived:    map[string]float64{"fastpath_hit_ratio": 0.5, "lwlock_waits:LockManager": v, "wait_time_share:LWLock:LockManager": 0.2}})
			}
		}
	}
	res.Runs = append(res.Runs, &Run{Index: i + 1, Workload: "sel", Target: "lockd", Variant: "b", Clients: 2, Repetition: 3,
		Status: StatusFailed, Error: "pgbench: exit status 2", Log: "logs/x.log", TPS: 0, LatP99Ms: nan})
	return res
}

func TestTableLayout(t *testing.T) {
	tab := fakeResults(t).Table()
	for _, want := range []string{
		"      1  105 (100–110)  106 (105–108) ×1.01 within noise\n",
		"      2  205 (200–210)               310 (300–320) ×1.51\n",
		"1 run(s) failed or were interrupted",
	} {
		if !strings.Contains(tab, want) {
			t.Errorf("table lacks %q:\n%s", want, tab)
		}
	}
}

func TestWriteOutputs(t *testing.T) {
	dir := t.TempDir()
	res := fakeResults(t)
	if err := writeOutputs(dir, res); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(res.Runs) {
		t.Errorf("%d CSV rows, want a header and %d runs", len(rows), len(res.Runs))
	}
	header := strings.Join(rows[0], ",")
	for _, col := range []string{"tps", "latency_p99_ms", "lwlock_waits:LockManager", "wait_share:LWLock:LockManager", `lockd_lwlock_waits_total{mode="exclusive",tranche="LockManager"}`} {
		if !strings.Contains(header, col) {
			t.Errorf("CSV header lacks %s", col)
		}
	}
	for i, h := range rows[0] {
		if h == "wait_time_share:LWLock:LockManager" && rows[1][i] != "0.2" {
			t.Errorf("column %s = %q, want 0.2", h, rows[1][i])
		}
	}
	if rows[len(rows)-1][9] != "failed" || rows[len(rows)-1][11] != "logs/x.log" {
		t.Errorf("failed run row: %v", rows[len(rows)-1][:12])
	}
	var js map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "results.json"))
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	runs := js["runs"].([]any)
	if runs[0].(map[string]any)["server_cpu_s"] != nil {
		t.Error("an unmeasured figure was not null in the JSON")
	}
	checkPlots(t, dir, []string{"throughput", "latency_p99", "fp", "w"}, []string{"a", "b"})
}

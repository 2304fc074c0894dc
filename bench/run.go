package bench

import (
	"maps"
	"math"
	"time"
)

// Run statuses.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"      // pgbench failed or the server died; Error and Log say why
	StatusInterrupted = "interrupted" // stopped by Ctrl-C; nothing measured
)

// A Run is one measured pgbench run of one cell (workload, target,
// variant, clients) in one repetition.
type Run struct {
	Index      int       `json:"index"` // order of execution, from 1
	Workload   string    `json:"workload"`
	Target     string    `json:"target"` // "lockd" or "postgres"
	Variant    string    `json:"variant"`
	Clients    int       `json:"clients"`
	Repetition int       `json:"repetition"`
	Block      int       `json:"block"`    // the interleaved block (workload, repetition, clients)
	Position   int       `json:"position"` // place in its block, from 1
	Started    time.Time `json:"started"`
	Status     string    `json:"status"`
	Error      string    `json:"error,omitempty"`
	Log        string    `json:"log,omitempty"` // pgbench's output, relative to the output directory
	Restarted  bool      `json:"restarted,omitempty"`

	ElapsedS      float64 `json:"elapsed_s"`
	TPS           float64 `json:"tps"`
	Transactions  int64   `json:"transactions"`
	Failed        int64   `json:"failed"`
	Retried       int64   `json:"retried"`
	LatMeanMs     float64 `json:"latency_mean_ms"`
	LatP50Ms      float64 `json:"latency_p50_ms"`
	LatP90Ms      float64 `json:"latency_p90_ms"`
	LatP99Ms      float64 `json:"latency_p99_ms"`
	ServerCPU     float64 `json:"server_cpu_s"`
	PgbenchCPU    float64 `json:"pgbench_cpu_s"`
	OtherCPU      float64 `json:"other_cpu_s"`
	OtherCPUShare float64 `json:"other_cpu_share"` // of the machine's CPU over the run
	Load1         float64 `json:"loadavg_1m"`
	Warning       string  `json:"warning,omitempty"`

	Samples    int                `json:"wait_samples"`
	WaitShares map[string]float64 `json:"wait_shares,omitempty"`
	Counters   map[string]float64 `json:"counters,omitempty"` // lockd's /metrics deltas
	Derived    map[string]float64 `json:"derived,omitempty"`  // computed from Counters
}

// fields are a run's derived metrics by name (docs/experiments/README.md).
func (r *Run) fields() map[string]float64 {
	m := map[string]float64{
		"tps": r.TPS, "transactions": float64(r.Transactions), "failed": float64(r.Failed), "retried": float64(r.Retried),
		"latency_mean_ms": r.LatMeanMs, "latency_p50_ms": r.LatP50Ms, "latency_p90_ms": r.LatP90Ms, "latency_p99_ms": r.LatP99Ms,
		"server_cpu_s": r.ServerCPU, "pgbench_cpu_s": r.PgbenchCPU, "other_cpu_s": r.OtherCPU,
	}
	maps.Copy(m, r.Derived)
	for k, v := range r.WaitShares {
		m["wait_share:"+k] = v
	}
	return m
}

// nan marks a field that was not measured.
var nan = math.NaN()

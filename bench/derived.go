package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Derived metrics are the named quantities tables and plots use. A name is
// a family, optionally ":" and a parameter (a tranche, a lock type, a wait
// event), optionally followed by "/txn" (divided by the run's
// transactions). docs/experiments/README.md lists them.
//
// Families computed for every run:
var runFamilies = []string{
	"tps", "transactions", "failed", "retried",
	"latency_mean_ms", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms",
	"server_cpu_s", "pgbench_cpu_s", "other_cpu_s",
}

// lockd-only families from /metrics deltas:
var lockdFamilies = []string{
	"fastpath_hits", "fastpath_fallbacks", "fastpath_hit_ratio",
	"ext_extensions", "ext_pages", "ext_pages_per_extension", "ext_lock_waits", "ext_lock_wait_s",
	"group_clear_leaders", "group_clear_followers", "group_clear_batch_mean",
	"procarray_clears_direct", "procarray_clears_locked",
	"commits",
}

// families that take a parameter (family:param):
var paramFamilies = []string{
	"lwlock_acquisitions", "lwlock_waits", "lwlock_wait_s", "lwlock_wakeups", "lwlock_futile_wakeups", "wakeups_per_wait",
	"lock_waits", "lock_wait_s",
	"wait_share",      // sampled from pg_stat_activity, both targets: share of backend samples
	"wait_time_share", // lockd's exact counters: wait time / (clients × elapsed), LWLock:<tranche> or Lock:<locktype>
}

func checkMetricName(name string) error {
	base := strings.TrimSuffix(name, "/txn")
	fam, param, hasParam := strings.Cut(base, ":")
	switch {
	case hasParam && slices.Contains(paramFamilies, fam):
		if param == "" {
			return fmt.Errorf("metric %q: name the %s after the colon", name, paramWhat(fam))
		}
		return nil
	case !hasParam && (slices.Contains(runFamilies, fam) || slices.Contains(lockdFamilies, fam)):
		return nil
	case !hasParam && slices.Contains(paramFamilies, fam):
		return fmt.Errorf("metric %q: give the %s, as %s:NAME", name, paramWhat(fam), fam)
	}
	return fmt.Errorf("unknown metric %q (see docs/experiments/README.md for the names)", name)
}

func paramWhat(fam string) string {
	switch {
	case strings.HasPrefix(fam, "lock_"):
		return "lock type"
	case strings.Contains(fam, "wait_share"):
		return "wait event"
	}
	return "tranche"
}

// derive computes the lockd families from a /metrics delta over a run of
// clients backends and elapsed seconds.
func derive(d scrape, clients int, elapsed float64) map[string]float64 {
	out := map[string]float64{}
	one := func(name string, want map[string]string) float64 { return d.sum(name, want, "")[""] }

	hits := one("lockd_fastpath_hits_total", nil)
	falls := one("lockd_fastpath_fallbacks_total", nil)
	out["fastpath_hits"] = hits
	out["fastpath_fallbacks"] = falls
	out["fastpath_hit_ratio"] = ratio(hits, hits+falls)

	ext := one("lockd_relation_extension_extensions_total", nil)
	pages := one("lockd_relation_extension_pages_total", nil)
	out["ext_extensions"] = ext
	out["ext_pages"] = pages
	out["ext_pages_per_extension"] = ratio(pages, ext)
	out["ext_lock_waits"] = one("lockd_relation_extension_lock_waits_total", nil)
	out["ext_lock_wait_s"] = one("lockd_relation_extension_lock_wait_seconds_total", nil)

	clears := d.sum("lockd_procarray_xid_clears_total", nil, "path")
	out["group_clear_leaders"] = clears["group_leader"]
	out["group_clear_followers"] = clears["group_follower"]
	out["procarray_clears_direct"] = clears["direct"]
	out["procarray_clears_locked"] = clears["locked"]
	out["group_clear_batch_mean"] = ratio(one("lockd_procarray_group_size_sum", nil), one("lockd_procarray_group_size_count", nil))
	out["commits"] = one("lockd_transactions_committed_total", nil)

	for fam, metric := range map[string]string{
		"lwlock_acquisitions":   "lockd_lwlock_acquisitions_total",
		"lwlock_waits":          "lockd_lwlock_waits_total",
		"lwlock_wait_s":         "lockd_lwlock_wait_seconds_sum",
		"lwlock_wakeups":        "lockd_lwlock_wakeups_total",
		"lwlock_futile_wakeups": "lockd_lwlock_futile_wakeups_total",
	} {
		for tr, v := range d.sum(metric, nil, "tranche") {
			out[fam+":"+tr] = v
			out[fam+":all"] += v
		}
	}
	for tr, w := range d.sum("lockd_lwlock_waits_total", nil, "tranche") {
		if w > 0 {
			out["wakeups_per_wait:"+tr] = out["lwlock_wakeups:"+tr] / w
		}
	}
	if w := out["lwlock_waits:all"]; w > 0 {
		out["wakeups_per_wait:all"] = out["lwlock_wakeups:all"] / w
	}
	for lt, v := range d.sum("lockd_lock_waits_total", nil, "locktype") {
		out["lock_waits:"+lt] = v
	}
	for lt, v := range d.sum("lockd_lock_wait_seconds_sum", nil, "locktype") {
		out["lock_wait_s:"+lt] = v
	}
	if backendTime := float64(clients) * elapsed; backendTime > 0 {
		for tr, v := range d.sum("lockd_lwlock_wait_seconds_sum", nil, "tranche") {
			if v > 0 {
				out["wait_time_share:LWLock:"+tr] = v / backendTime
			}
		}
		for lt, v := range d.sum("lockd_lock_wait_seconds_sum", nil, "locktype") {
			if v > 0 {
				out["wait_time_share:Lock:"+lt] = v / backendTime
			}
		}
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

// metricValue reads a derived metric of a run (NaN when the run has none).
func (r *Run) metricValue(name string) float64 {
	base, perTxn := strings.CutSuffix(name, "/txn")
	v, ok := r.fields()[base]
	if !ok {
		if strings.HasPrefix(base, "wait_share:") && r.Samples > 0 {
			v = 0 // sampled, never seen
		} else if r.Target == "lockd" && r.Status == StatusOK && r.Derived != nil && hasParamFamily(base) {
			v = 0 // lockd counts every tranche; a missing series had no events
		} else {
			return math.NaN()
		}
	}
	if perTxn {
		if r.Transactions == 0 {
			return math.NaN()
		}
		v /= float64(r.Transactions)
	}
	return v
}

func hasParamFamily(name string) bool {
	fam, _, ok := strings.Cut(name, ":")
	return ok && slices.Contains(paramFamilies, fam) && fam != "wait_share"
}

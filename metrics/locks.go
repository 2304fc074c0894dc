package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"lockd/locks"
)

// locksCollector exports the lock manager's counters: LWLocks per tranche
// and mode, how LWLock wait-until-free calls ended per tranche,
// heavyweight locks per lock type and mode, the fast path, and the live
// procs with what they wait for.
//
// A (tranche, mode) or (locktype, mode) series appears once any of its
// counters is non-zero and stays from then on (the Manager's sums never go
// backwards), so an idle server does not export hundreds of zeros for
// combinations PostgreSQL never uses (advisory AccessShareLock, say). The
// LWLock mode wait_until_free (AcquireOrWait and WaitForVar sleeping) has
// no acquisitions or spin delays, so it has no such series; a tranche's
// outcome series appear once it has had such a call.
type locksCollector struct {
	m *locks.Manager

	lwAcquisitions, lwWaits, lwWaitSeconds, lwWakeups, lwFutileWakeups, lwSpinDelays *prometheus.Desc
	lwAcquireOrWait, lwWaitForVar                                                    *prometheus.Desc

	lockAcquisitions, lockWaits, lockWaitSeconds, lockDeadlocks, lockTimeouts *prometheus.Desc

	fpHits, fpFallbacks, fpTransfers, fpSlots *prometheus.Desc

	procs, procsWaiting *prometheus.Desc
}

func newLocksCollector(m *locks.Manager) *locksCollector {
	lw := []string{"tranche", "mode"}
	hw := []string{"locktype", "mode"}
	return &locksCollector{
		m: m,

		lwAcquisitions: newDesc("lwlock", "acquisitions_total",
			"LWLock acquisitions (conditional ones included), by tranche and mode.", lw...),
		lwWaits: newDesc("lwlock", "waits_total",
			"LWLock acquisitions that had to sleep at least once.", lw...),
		lwWaitSeconds: newDesc("lwlock", "wait_seconds",
			"Time LWLock acquisitions slept, by tranche and mode; only waits that began while track_lock_timing was on are observed. Present once the tranche and mode have had a wait.", lw...),
		lwWakeups: newDesc("lwlock", "wakeups_total",
			"Wake-ups received by LWLock waiters.", lw...),
		lwFutileWakeups: newDesc("lwlock", "futile_wakeups_total",
			"Wake-ups after which the LWLock was found taken again, so the waiter slept again.", lw...),
		lwSpinDelays: newDesc("lwlock", "spin_delays_total",
			"Yields while spinning on an LWLock's wait-list lock bit.", lw...),
		lwAcquireOrWait: newDesc("lwlock", "acquire_or_wait_total",
			"LWLock AcquireOrWait calls (PostgreSQL's LWLockAcquireOrWait, group commit), by tranche and outcome (acquired: took the lock; freed: waited until it was released and returned without it).",
			"tranche", "outcome"),
		lwWaitForVar: newDesc("lwlock", "wait_for_var_total",
			"LWLock WaitForVar calls (PostgreSQL's LWLockWaitForVar, WAL insertion waits), by tranche and outcome (freed: the lock was or became free; updated: its holder advanced the variable).",
			"tranche", "outcome"),

		lockAcquisitions: newDesc("lock", "acquisitions_total",
			"Heavyweight lock grants by lock type, mode and path (fastpath: the backend's own slots; shared: the shared lock table).",
			"locktype", "mode", "path"),
		lockWaits: newDesc("lock", "waits_total",
			"Heavyweight lock requests that had to sleep.", hw...),
		lockWaitSeconds: newDesc("lock", "wait_seconds",
			"Time heavyweight lock requests slept, by lock type and mode; only waits that began while track_lock_timing was on are observed. Present once the lock type and mode have had a wait.", hw...),
		lockDeadlocks: newDesc("lock", "deadlocks_total",
			"Heavyweight lock requests aborted because of a deadlock (SQLSTATE 40P01).", hw...),
		lockTimeouts: newDesc("lock", "timeouts_total",
			"Heavyweight lock requests aborted by lock_timeout (SQLSTATE 55P03).", hw...),

		fpHits: newDesc("fastpath", "hits_total",
			"Weak relation locks granted in a backend's fast-path slots."),
		fpFallbacks: newDesc("fastpath", "fallbacks_total",
			"Fast-path eligible relation locks sent to the shared lock table, by reason (slots_full: the relation's slot group was full; strong_lock: a strong lock on the relation was held or pending).",
			"reason"),
		fpTransfers: newDesc("fastpath", "transfers_total",
			"Fast-path entries moved to the shared lock table by strong lockers."),
		fpSlots: newDesc("fastpath", "slots",
			"Fast-path lock slots a new backend gets (fastpath_lock_slots as resolved)."),

		procs: newDesc("", "procs",
			"Live lock-manager procs: client backends plus auxiliary processes such as the checkpointer."),
		procsWaiting: newDesc("", "procs_waiting",
			"Live procs currently waiting, by pg_stat_activity wait_event_type (sampled at scrape).",
			"wait_event_type"),
	}
}

// waitEventTypes are PostgreSQL's wait event types, always exported so
// that a panel of waiting procs has a series even when nobody waits.
var waitEventTypes = []string{"LWLock", "Lock", "Activity", "BufferPin", "Client", "Extension", "IPC", "Timeout", "IO"}

func (c *locksCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, c.lwAcquisitions, c.lwWaits, c.lwWaitSeconds, c.lwWakeups, c.lwFutileWakeups, c.lwSpinDelays,
		c.lwAcquireOrWait, c.lwWaitForVar,
		c.lockAcquisitions, c.lockWaits, c.lockWaitSeconds, c.lockDeadlocks, c.lockTimeouts,
		c.fpHits, c.fpFallbacks, c.fpTransfers, c.fpSlots, c.procs, c.procsWaiting)
}

func (c *locksCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Stats()
	for t := range s.LWLock {
		for md := range s.LWLock[t] {
			st := &s.LWLock[t][md]
			if *st == (locks.LWLockStats{}) {
				continue
			}
			tr, mode := locks.Tranche(t).String(), locks.LWMode(md).String()
			lockMode := locks.LWMode(md) != locks.LWWaitUntilFree
			if lockMode {
				counter(ch, c.lwAcquisitions, st.Acquisitions, tr, mode)
			}
			counter(ch, c.lwWaits, st.Waits, tr, mode)
			if st.Waits > 0 {
				waitHistogram(ch, c.lwWaitSeconds, st.WaitTimeNs, &st.WaitBuckets, tr, mode)
			}
			counter(ch, c.lwWakeups, st.Wakeups, tr, mode)
			counter(ch, c.lwFutileWakeups, st.FutileWakeups, tr, mode)
			if lockMode {
				counter(ch, c.lwSpinDelays, st.SpinDelays, tr, mode)
			}
		}
		if o := &s.LWLockOutcomes[t]; *o != (locks.LWLockWaitOutcomes{}) {
			tr := locks.Tranche(t).String()
			if o.AcquireOrWaitAcquired+o.AcquireOrWaitFreed > 0 {
				counter(ch, c.lwAcquireOrWait, o.AcquireOrWaitAcquired, tr, "acquired")
				counter(ch, c.lwAcquireOrWait, o.AcquireOrWaitFreed, tr, "freed")
			}
			if o.WaitForVarFree+o.WaitForVarUpdated > 0 {
				counter(ch, c.lwWaitForVar, o.WaitForVarFree, tr, "freed")
				counter(ch, c.lwWaitForVar, o.WaitForVarUpdated, tr, "updated")
			}
		}
	}
	for t := range s.Lock {
		for md := int(locks.AccessShareLock); md < locks.NumLockModes; md++ {
			st := &s.Lock[t][md]
			if *st == (locks.LockStats{}) {
				continue
			}
			lt, mode := locks.LockTagType(t).String(), locks.LockMode(md).String()
			counter(ch, c.lockAcquisitions, st.FastPath, lt, mode, "fastpath")
			counter(ch, c.lockAcquisitions, st.Shared, lt, mode, "shared")
			counter(ch, c.lockWaits, st.Waits, lt, mode)
			if st.Waits > 0 {
				waitHistogram(ch, c.lockWaitSeconds, st.WaitTimeNs, &st.WaitBuckets, lt, mode)
			}
			counter(ch, c.lockDeadlocks, st.Deadlocks, lt, mode)
			counter(ch, c.lockTimeouts, st.LockTimeouts, lt, mode)
		}
	}
	fp := &s.FastPath
	counter(ch, c.fpHits, fp.Acquisitions)
	counter(ch, c.fpFallbacks, fp.FallbacksFull, "slots_full")
	counter(ch, c.fpFallbacks, fp.FallbacksStrong, "strong_lock")
	counter(ch, c.fpTransfers, fp.TransfersDone)
	gauge(ch, c.fpSlots, float64(c.m.FastPathSlots()))

	var n int
	waiting := make(map[string]int, len(waitEventTypes))
	c.m.ForEachProc(func(p *locks.Proc) {
		n++
		if typ, _ := p.WaitEvent(); typ != "" {
			waiting[typ]++
		}
	})
	gauge(ch, c.procs, float64(n))
	for _, typ := range waitEventTypes {
		gauge(ch, c.procsWaiting, float64(waiting[typ]), typ)
	}
}

// waitHistogram sends a wait-time histogram built from the per-bucket
// counts of locks.WaitBucketBounds. A (tranche, mode) or (locktype, mode)
// that never waited gets none: 23 buckets of zeros for each combination
// that only ever took its lock at once would triple the scrape.
func waitHistogram(ch chan<- prometheus.Metric, d *prometheus.Desc, ns uint64, counts *[locks.NumWaitBuckets]uint64, labels ...string) {
	buckets := make(map[float64]uint64, len(locks.WaitBucketBounds))
	var cum uint64
	for i, b := range locks.WaitBucketBounds {
		cum += counts[i]
		buckets[b.Seconds()] = cum
	}
	cum += counts[len(locks.WaitBucketBounds)]
	ch <- prometheus.MustNewConstHistogram(d, cum, float64(ns)/1e9, buckets, labels...)
}

package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"lockd/txn"
)

// txnCollector exports the transaction manager's counters.
type txnCollector struct {
	m *txn.Manager

	commits, aborts, xids, snapshots, snapshotsReused, clears, groupSize *prometheus.Desc

	// bounds are the group-size histogram's upper bounds: bucket i of
	// txn.Stats.GroupSizes counts sizes in [GroupSizeBuckets[i],
	// GroupSizeBuckets[i+1]), that is ≤ GroupSizeBuckets[i+1]-1.
	bounds []float64
}

func newTxnCollector(m *txn.Manager) *txnCollector {
	c := &txnCollector{
		m: m,
		commits: newDesc("transactions", "committed_total",
			"Transactions committed (read-only ones and implicit single-statement transactions included)."),
		aborts: newDesc("transactions", "rolled_back_total",
			"Transactions rolled back (ROLLBACK, errors, disconnections)."),
		xids: newDesc("transactions", "xids_assigned_total",
			"Transaction ids assigned (transactions that wrote)."),
		snapshots: newDesc("", "snapshots_total",
			"Statement snapshots taken (new or reused)."),
		snapshotsReused: newDesc("", "snapshots_reused_total",
			"Statement snapshots reused without scanning the ProcArray."),
		clears: newDesc("procarray", "xid_clears_total",
			"Transaction ids removed from the ProcArray at transaction end, by path (direct: ProcArrayLock taken conditionally; locked: waited for ProcArrayLock; group_leader / group_follower: cleared by a group leader, procarray_group_update).",
			"path"),
		groupSize: newDesc("procarray", "group_size",
			"Sizes of the groups that ProcArray group-clear leaders cleared (leader included)."),
	}
	for i := 1; i < txn.NumGroupSizeBuckets; i++ {
		c.bounds = append(c.bounds, float64(txn.GroupSizeBuckets[i]-1))
	}
	return c
}

func (c *txnCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, c.commits, c.aborts, c.xids, c.snapshots, c.snapshotsReused, c.clears, c.groupSize)
}

func (c *txnCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Stats()
	counter(ch, c.commits, s.Commits)
	counter(ch, c.aborts, s.Aborts)
	counter(ch, c.xids, s.XidsAssigned)
	counter(ch, c.snapshots, s.Snapshots)
	counter(ch, c.snapshotsReused, s.SnapshotsReused)
	counter(ch, c.clears, s.ClearDirect, "direct")
	counter(ch, c.clears, s.ClearLocked, "locked")
	counter(ch, c.clears, s.GroupLeaders, "group_leader")
	counter(ch, c.clears, s.GroupFollowers, "group_follower")

	// Every member of a group is the leader or a follower, so the sizes
	// sum to leaders + followers.
	buckets := make(map[float64]uint64, len(c.bounds))
	var cum, total uint64
	for i, n := range s.GroupSizes {
		total += n
		if i < len(c.bounds) {
			cum += n
			buckets[c.bounds[i]] = cum
		}
	}
	ch <- prometheus.MustNewConstHistogram(c.groupSize, total, float64(s.GroupLeaders+s.GroupFollowers), buckets)
}

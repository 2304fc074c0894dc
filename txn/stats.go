package txn

import (
	"math/bits"
	"sync/atomic"
)

// NumGroupSizeBuckets is the number of buckets of Stats.GroupSizes.
const NumGroupSizeBuckets = 7

// GroupSizeBuckets are the lower bounds of the group-size histogram
// buckets: bucket i counts groups of size [GroupSizeBuckets[i],
// GroupSizeBuckets[i+1]), the last one 64 and more.
var GroupSizeBuckets = [NumGroupSizeBuckets]int{1, 2, 4, 8, 16, 32, 64}

func groupSizeBucket(n int) int {
	return min(bits.Len(uint(n))-1, NumGroupSizeBuckets-1)
}

// procStats are one backend's counters: single writer (the session that
// owns the proc number), atomic so scrapers can read them any time.
type procStats struct {
	snapshots       atomic.Uint64
	snapshotsReused atomic.Uint64
	xidsAssigned    atomic.Uint64
	subXidsAssigned atomic.Uint64
	subCommits      atomic.Uint64
	subAborts       atomic.Uint64
	multisCreated   atomic.Uint64
	commits         atomic.Uint64
	aborts          atomic.Uint64
	asyncCommits    atomic.Uint64
	clearDirect     atomic.Uint64
	clearLocked     atomic.Uint64
	groupLeaders    atomic.Uint64
	groupFollowers  atomic.Uint64
	groupSizes      [NumGroupSizeBuckets]atomic.Uint64
}

// Stats are transaction counters summed over all backends, live and gone.
type Stats struct {
	Snapshots       uint64 // snapshots returned by StatementSnapshot (new or reused)
	SnapshotsReused uint64 // of those, reused without scanning the ProcArray
	XidsAssigned    uint64 // top-level xids
	SubXidsAssigned uint64 // subtransaction xids
	SubCommits      uint64 // subtransactions released into their parent (RELEASE)
	SubAborts       uint64 // subtransactions rolled back (ROLLBACK TO)
	MultisCreated   uint64 // multixacts made for tuples held by several transactions
	Commits         uint64 // all commits, read-only ones included
	AsyncCommits    uint64 // commits whose record was not flushed (synchronous_commit = off)
	Aborts          uint64

	// How transactions with an xid left the ProcArray:
	ClearDirect    uint64 // ConditionalAcquire of ProcArrayLock succeeded
	ClearLocked    uint64 // blocked on ProcArrayLock (group update off)
	GroupLeaders   uint64 // led a group clear (its own xid included)
	GroupFollowers uint64 // had its xid cleared by a leader

	// GroupSizes is a histogram of the group sizes leaders cleared,
	// bucketed by GroupSizeBuckets.
	GroupSizes [NumGroupSizeBuckets]uint64
}

func (ps *procStats) addTo(s *Stats) {
	s.Snapshots += ps.snapshots.Load()
	s.SnapshotsReused += ps.snapshotsReused.Load()
	s.XidsAssigned += ps.xidsAssigned.Load()
	s.SubXidsAssigned += ps.subXidsAssigned.Load()
	s.SubCommits += ps.subCommits.Load()
	s.SubAborts += ps.subAborts.Load()
	s.MultisCreated += ps.multisCreated.Load()
	s.Commits += ps.commits.Load()
	s.Aborts += ps.aborts.Load()
	s.AsyncCommits += ps.asyncCommits.Load()
	s.ClearDirect += ps.clearDirect.Load()
	s.ClearLocked += ps.clearLocked.Load()
	s.GroupLeaders += ps.groupLeaders.Load()
	s.GroupFollowers += ps.groupFollowers.Load()
	for i := range ps.groupSizes {
		s.GroupSizes[i] += ps.groupSizes[i].Load()
	}
}

// Stats sums every backend's counters. It takes no lock; each counter is
// read atomically, so a sum taken under load is not a consistent cut but
// never goes backwards.
func (m *Manager) Stats() Stats {
	var s Stats
	for i := range m.procs {
		m.procs[i].stats.addTo(&s)
	}
	return s
}

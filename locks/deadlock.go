package locks

// Deadlock detection (PostgreSQL's deadlock.c, rewritten).
//
// Waiting is optimistic: nothing is checked when a backend starts to wait.
// Only once it has slept deadlock_timeout does it lock every partition and
// search the waits-for graph for a cycle through itself. Edges:
//
//   - hard edge A→B: B holds a mode that conflicts with A's request;
//   - soft edge A→B: B is ahead of A in the same wait queue and B's request
//     conflicts with A's. Soft edges exist only because of queue order, so
//     reordering a queue can remove them.
//
// A cycle of hard edges only is a real deadlock: the checking backend
// aborts itself with 40P01 (the others keep waiting; the victim is
// whichever waiter's timer fires first). A cycle containing soft edges is
// resolved as PostgreSQL does: the detector searches for a set of soft
// edges to reverse (each becomes a constraint "waiter before blocker"),
// topologically re-sorts the affected queues keeping the original order as
// far as the constraints allow, and accepts the first configuration in
// which no cycle through the checking backend — or through any backend
// named in a constraint — remains. The queues are then rewritten and
// re-scanned for grantable waiters ("avoided deadlock by rearranging queue
// order"). If no configuration works, it is a hard deadlock after all, and
// the error names the cycle found in the unmodified graph.
//
// Relation-extension locks have no outgoing edges: they are held briefly
// and never while waiting for another heavyweight lock (PostgreSQL 13+).
// Fast-path locks are not in the graph, which is why strong lockers
// transfer them to the shared table before waiting.
//
// The detector's state lives in the Manager and is used only with every
// partition lock held, so two detectors never run at once.

type deadlockState int

const (
	dsNotWaiting   deadlockState = iota // granted before the check could run
	dsNoDeadlock                        // nothing to do
	dsSoftDeadlock                      // queues rearranged
	dsHardDeadlock                      // abort the checking backend
)

// edge is a soft edge waiter→blocker in lock's queue; as a constraint it
// means "put waiter ahead of blocker".
type edge struct {
	waiter, blocker *Proc
	lock            *lockObj
}

type waitOrder struct {
	lock  *lockObj
	procs []*Proc
}

type detector struct {
	visited []*Proc
	details []deadlockInfo
	cur     []edge      // constraints of the configuration being tested
	orders  []waitOrder // hypothetical queue orders for cur
	maxCur  int
}

// check runs the detector for start. Caller holds every partition lock.
func (d *detector) check(m *Manager, start *Proc) deadlockState {
	d.cur = d.cur[:0]
	d.orders = d.orders[:0]
	d.maxCur = len(m.procs)
	if d.recurse(start) {
		// Report the cycle as it exists without rearrangement.
		d.orders = d.orders[:0]
		if found, _ := d.findCycle(start); !found {
			panic("locks: deadlock seems to have disappeared")
		}
		return dsHardDeadlock
	}
	if len(d.orders) == 0 {
		return dsNoDeadlock
	}
	for _, wo := range d.orders {
		lock := wo.lock
		lock.waitHead, lock.waitTail, lock.nWaiting = nil, nil, 0
		for _, q := range wo.procs {
			lock.pushWaiter(q, nil)
		}
		m.wakeWaiters(lock)
	}
	d.orders = d.orders[:0]
	return dsSoftDeadlock
}

// recurse reports true when no deadlock-free configuration extends the
// current constraints (DeadLockCheckRecurse). On false, d.orders holds the
// queue orders of the configuration found.
func (d *detector) recurse(start *Proc) bool {
	edges, ok := d.testConfiguration(start)
	if !ok {
		return true
	}
	if len(edges) == 0 {
		return false
	}
	if len(d.cur) >= d.maxCur {
		return true
	}
	for _, e := range edges {
		d.cur = append(d.cur, e)
		if !d.recurse(start) {
			return false
		}
		d.cur = d.cur[:len(d.cur)-1]
	}
	return true
}

// testConfiguration applies the current constraints and looks for cycles
// through start and through every backend they mention. ok is false for a
// hard cycle or inconsistent constraints; otherwise edges are the soft
// edges of one remaining cycle (none: the configuration is good).
func (d *detector) testConfiguration(start *Proc) (edges []edge, ok bool) {
	if !d.expandConstraints() {
		return nil, false
	}
	check := func(q *Proc) bool {
		found, soft := d.findCycle(q)
		if !found {
			return true
		}
		if len(soft) == 0 {
			return false
		}
		edges = soft
		return true
	}
	for _, c := range d.cur {
		if !check(c.waiter) || !check(c.blocker) {
			return nil, false
		}
	}
	if !check(start) {
		return nil, false
	}
	return edges, true
}

// findCycle looks for a cycle through q, returning the soft edges on it and
// filling d.details (FindLockCycle).
func (d *detector) findCycle(q *Proc) (bool, []edge) {
	d.visited = d.visited[:0]
	d.details = d.details[:0]
	var soft []edge
	found := d.findCycleRecurse(q, 0, &soft)
	return found, soft
}

func (d *detector) findCycleRecurse(q *Proc, depth int, soft *[]edge) bool {
	for i, v := range d.visited {
		if v == q {
			if i == 0 {
				// Back at the start: outer levels fill details[0:depth].
				d.details = append(d.details[:0], make([]deadlockInfo, depth)...)
				return true
			}
			return false // a cycle, but not through the start
		}
	}
	d.visited = append(d.visited, q)
	if q.waitLock == nil {
		return false
	}
	return d.findCycleMember(q, depth, soft)
}

func (d *detector) findCycleMember(q *Proc, depth int, soft *[]edge) bool {
	lock := q.waitLock
	if lock.tag.Type == LockTagRelationExtend {
		return false
	}
	mask := conflictTab[q.waitMode]
	note := func() { d.details[depth] = deadlockInfo{lock.tag, q.waitMode, q.pid} }
	// Hard edges first: if a backend both holds and awaits conflicting
	// modes, the edge counts as hard.
	for pl := lock.procLocks; pl != nil; pl = pl.lockNext {
		if pl.proc != q && pl.holdMask&mask != 0 && d.findCycleRecurse(pl.proc, depth+1, soft) {
			note()
			return true
		}
	}
	softEdge := func(b *Proc) bool {
		if mask&modeBit(b.waitMode) == 0 || !d.findCycleRecurse(b, depth+1, soft) {
			return false
		}
		note()
		*soft = append(*soft, edge{waiter: q, blocker: b, lock: lock})
		return true
	}
	for _, wo := range d.orders {
		if wo.lock == lock {
			for _, b := range wo.procs {
				if b == q {
					break
				}
				if softEdge(b) {
					return true
				}
			}
			return false
		}
	}
	for b := lock.waitHead; b != nil && b != q; b = b.waitNext {
		if softEdge(b) {
			return true
		}
	}
	return false
}

// expandConstraints computes, for each lock named in d.cur, a queue order
// satisfying the constraints on it (ExpandConstraints). The latest
// constraint is the only one that can make the set inconsistent, so locks
// are visited from the last constraint backwards.
func (d *detector) expandConstraints() bool {
	d.orders = d.orders[:0]
	for i := len(d.cur) - 1; i >= 0; i-- {
		lock := d.cur[i].lock
		done := false
		for _, wo := range d.orders {
			if wo.lock == lock {
				done = true
				break
			}
		}
		if done {
			continue
		}
		procs, ok := topoSort(lock, d.cur[:i+1])
		if !ok {
			return false
		}
		d.orders = append(d.orders, waitOrder{lock, procs})
	}
	return true
}

// topoSort reorders lock's wait queue so that each constraint's waiter
// precedes its blocker, disturbing the current order as little as
// possible: the output is filled from the back, each time with the
// latest-queued backend that no unplaced backend still has to follow.
func topoSort(lock *lockObj, constraints []edge) ([]*Proc, bool) {
	queue := make([]*Proc, 0, lock.nWaiting)
	for w := lock.waitHead; w != nil; w = w.waitNext {
		queue = append(queue, w)
	}
	n := len(queue)
	index := func(q *Proc) int {
		for i, w := range queue {
			if w == q {
				return i
			}
		}
		return -1
	}
	mustPrecede := make([]int, n) // unplaced backends this one must precede
	followers := make([][]int, n) // for a blocker: the waiters that must precede it
	for _, c := range constraints {
		if c.lock != lock {
			continue
		}
		w, b := index(c.waiter), index(c.blocker)
		if w < 0 || b < 0 {
			continue
		}
		mustPrecede[w]++
		followers[b] = append(followers[b], w)
	}
	out := make([]*Proc, n)
	for i := n - 1; i >= 0; i-- {
		j := n - 1
		for ; j >= 0; j-- {
			if queue[j] != nil && mustPrecede[j] == 0 {
				break
			}
		}
		if j < 0 {
			return nil, false
		}
		out[i] = queue[j]
		queue[j] = nil
		for _, w := range followers[j] {
			mustPrecede[w]--
		}
	}
	return out, true
}

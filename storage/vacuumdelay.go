package storage

import (
	"context"
	"time"

	"lockd/locks"
)

// VacuumCost is PostgreSQL's cost-based vacuum delay: each heap page
// VACUUM finds in the buffer pool costs PageHit, each it reads from the
// file PageMiss, and each it dirties (a buffer that was clean) PageDirty.
// When the sum reaches Limit, VACUUM sleeps Delay × sum / Limit, at most
// 4 × Delay, and the sum starts again from 0 (vacuum_delay_point). A zero
// Delay or Limit turns it off, as vacuum_cost_delay = 0 does for a manual
// VACUUM. lockd's indexes are not in the buffer pool, so their pass costs
// nothing here (PostgreSQL charges each index page btree's bulk delete
// reads).
type VacuumCost struct {
	Delay                        time.Duration
	Limit                        int
	PageHit, PageMiss, PageDirty int
}

func (c VacuumCost) active() bool { return c.Delay > 0 && c.Limit > 0 }

// vacuumDelay is one VACUUM's cost balance (VacuumCostBalance).
type vacuumDelay struct {
	cost        VacuumCost
	st          *backendStats
	hits, reads uint64 // st's counters when last charged
	balance     int
	naps        int
	slept       time.Duration
}

func newVacuumDelay(cost VacuumCost, st *backendStats) *vacuumDelay {
	v := &vacuumDelay{cost: cost, st: st}
	v.hits, v.reads = st.bufferHits.Load(), st.bufferReads.Load()
	return v
}

// charge adds the buffers VACUUM's backend found and read since the last
// charge, and one dirtied buffer if dirtied.
func (v *vacuumDelay) charge(dirtied bool) {
	if !v.cost.active() {
		return
	}
	h, r := v.st.bufferHits.Load(), v.st.bufferReads.Load()
	v.balance += int(h-v.hits)*v.cost.PageHit + int(r-v.reads)*v.cost.PageMiss
	v.hits, v.reads = h, r
	if dirtied {
		v.balance += v.cost.PageDirty
	}
}

// point sleeps if the balance has reached the limit (vacuum_delay_point),
// under wait event Timeout/VacuumDelay; ctx's end cuts the sleep short.
func (v *vacuumDelay) point(ctx context.Context, p *locks.Proc) error {
	if !v.cost.active() || v.balance < v.cost.Limit {
		return nil
	}
	d := v.cost.Delay * time.Duration(v.balance) / time.Duration(v.cost.Limit)
	d = min(d, 4*v.cost.Delay)
	v.balance = 0
	v.naps++
	v.slept += d
	if p != nil {
		p.SetWaitEvent(locks.WaitEventVacuumDelay)
		defer p.ClearWaitEvent()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

package sysviews

import (
	"sync"
	"time"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/storage"
	"lockd/wal"
)

// SharedResets are the baselines pg_stat_reset_shared() records for the
// server-wide statistics views (pg_stat_wal, pg_stat_bgwriter,
// pg_stat_archiver and PostgreSQL 19's pg_stat_lock): the counters' values
// at the reset, which the views subtract, and when it happened. The
// counters themselves — each backend's own — are never written. Safe for
// concurrent use.
type SharedResets struct {
	mu     sync.Mutex
	wal    wal.Stats
	walAt  time.Time
	ckpt   wal.CheckpointStats
	store  storage.Stats
	bgAt   time.Time
	archAt time.Time
	lock   *locks.Stats
	lockAt time.Time
}

// NewSharedResets returns baselines of zero: until a reset, the views
// show the counters as they are, and their own stats_reset (the server's
// or the log's start).
func NewSharedResets() *SharedResets {
	return &SharedResets{lock: &locks.Stats{}}
}

// at returns t, or def if t is zero (never reset).
func at(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}

// Reset is pg_stat_reset_shared(target): PostgreSQL 15's targets
// (archiver, bgwriter, recovery_prefetch, wal) and PostgreSQL 19's lock.
func (r *SharedResets) Reset(b *expr.Backend, target string) error {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	switch target {
	case "archiver":
		r.archAt = now
	case "bgwriter":
		if w := b.Store.WAL(); w != nil {
			r.ckpt = w.CheckpointStats()
		}
		r.store = b.Store.Stats()
		r.bgAt = now
	case "wal":
		if w := b.Store.WAL(); w != nil {
			r.wal = w.Stats()
		}
		r.walAt = now
	case "recovery_prefetch":
		// lockd does not prefetch during recovery: nothing to reset
	case "lock":
		r.lock = b.Locks.Stats()
		r.lockAt = now
	default:
		return pgerr.New(pgerr.InvalidParameterValue, "unrecognized reset target: \"%s\"", target).
			WithHint("Target must be \"archiver\", \"bgwriter\", \"recovery_prefetch\", or \"wal\".") // PostgreSQL 15's text; "lock" is PostgreSQL 19's
	}
	return nil
}

func (r *SharedResets) walBase() (wal.Stats, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.wal, r.walAt
}

func (r *SharedResets) bgBase() (wal.CheckpointStats, storage.Stats, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ckpt, r.store, r.bgAt
}

func (r *SharedResets) archiverAt() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.archAt
}

func (r *SharedResets) lockBase() (*locks.Stats, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lock, r.lockAt
}

package stats

import (
	"sync"
	"time"
)

// Activity counters: what pg_stat_all_tables shows of each table's
// inserts, updates and deletes, and what autovacuum's analyze threshold
// reads (n_mod_since_analyze).
//
// PostgreSQL counts a table's changes in the backend (pgstat pending
// entries), per transaction level, and folds them into shared memory at
// most once a second. lockd counts the same events the same way — a row
// written by a statement adds to the transaction's counts (Xact, a small
// slice in the session, no lock and no shared memory), and at the end of
// the transaction those are added to the backend's own totals for the
// table (Backend, under the backend's own uncontended mutex) — but never
// into a shared counter: a reader (the pg_stat views, autovacuum) sums
// the totals of every backend, plus those of backends that have ended.
// So a lock experiment never measures contention on statistics counters,
// and a committed change is visible at once (PostgreSQL's may take up
// to a second, or pg_stat_force_next_flush()).
//
// VACUUM, ANALYZE and TRUNCATE set a table's counts (live and dead rows)
// or restart them (changes since ANALYZE, inserts since VACUUM): each
// records the measured values and the sums at that moment in the
// table's base, and the counts shown are derived from the sums since.

// totals are cumulative counts of one table: attempted inserts, updates
// and deletes (committed or not: n_tup_*), the change in live and dead
// rows they made, and committed changes.
type totals struct {
	ins, upd, del int64
	live, dead    int64
	changed       int64
	// scans: sequential scans and the rows they returned, index scans
	// and the rows they fetched (seq_scan, seq_tup_read, idx_scan,
	// idx_tup_fetch), whether the transaction commits or not
	seqScan, seqRead, idxScan, idxFetch int64
	// for an index: the entries its scans returned (idx_tup_read)
	idxRead int64
	// updates that made heap-only tuples (n_tup_hot_upd), committed or not
	hot int64
}

func (t *totals) add(o *totals) {
	t.idxRead += o.idxRead
	t.hot += o.hot
	t.seqScan += o.seqScan
	t.seqRead += o.seqRead
	t.idxScan += o.idxScan
	t.idxFetch += o.idxFetch
	t.ins += o.ins
	t.upd += o.upd
	t.del += o.del
	t.live += o.live
	t.dead += o.dead
	t.changed += o.changed
}

// Backend is one backend's activity totals. Its transactions' counts
// are added by End; others read them through the Store.
type Backend struct {
	store *Store
	mu    sync.Mutex         // guards tabs; the owner holds it only while adding
	tabs  map[uint32]*totals // guarded by mu
}

// NewBackend registers a backend whose totals readers sum.
func (s *Store) NewBackend() *Backend {
	b := &Backend{store: s, tabs: map[uint32]*totals{}}
	s.mu.Lock()
	s.backends[b] = struct{}{}
	s.mu.Unlock()
	return b
}

// Close folds the backend's totals into the store's and unregisters it.
func (b *Backend) Close() {
	s := b.store
	s.mu.Lock()
	defer s.mu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	for oid, t := range b.tabs {
		c := s.closed[oid]
		if c == nil {
			c = &totals{}
			s.closed[oid] = c
		}
		c.add(t)
	}
	b.tabs = nil
	delete(s.backends, b)
}

// xactEntry is one table's counts in the current transaction.
type xactEntry struct {
	oid           uint32
	ins, upd, del int64
	// counts of rolled-back subtransactions: attempted, never committed
	abIns, abUpd, abDel int64
	// truncated: TRUNCATE ran in this transaction; pre* are the counts
	// made before it, which count again if the truncation rolls back
	truncated              bool
	preIns, preUpd, preDel int64
	// scans, which rollbacks do not undo
	seqScan, seqRead, idxScan, idxFetch, idxRead int64
	// HOT updates, which rollbacks do not undo (pgstat_count_heap_update)
	hot int64
}

// Xact is the counts of one transaction, per table (PostgreSQL's
// PgStat_TableXactStatus chain, flattened). The zero value is ready; a
// session keeps one and reuses it. It belongs to the session's goroutine.
type Xact struct {
	entries []xactEntry
	last    int // index of the entry used last: a statement writes one table many times
}

// entry returns the index of oid's entry, adding one if needed.
func (x *Xact) entry(oid uint32) int {
	if x.last < len(x.entries) && x.entries[x.last].oid == oid {
		return x.last
	}
	for i := range x.entries {
		if x.entries[i].oid == oid {
			x.last = i
			return i
		}
	}
	x.entries = append(x.entries, xactEntry{oid: oid})
	x.last = len(x.entries) - 1
	return x.last
}

// Inserted counts n rows inserted into table oid.
func (x *Xact) Inserted(oid uint32, n int64) { x.entries[x.entry(oid)].ins += n }

// Updated counts n rows of table oid updated.
func (x *Xact) Updated(oid uint32, n int64) { x.entries[x.entry(oid)].upd += n }

// HotUpdated counts a row of table oid updated into a heap-only tuple
// (also counted by Updated).
func (x *Xact) HotUpdated(oid uint32) { x.entries[x.entry(oid)].hot++ }

// Deleted counts n rows of table oid deleted.
func (x *Xact) Deleted(oid uint32, n int64) { x.entries[x.entry(oid)].del += n }

// SeqScanned counts a sequential scan of table oid that returned rows
// rows (pgstat_count_heap_scan and pgstat_count_heap_getnext).
func (x *Xact) SeqScanned(oid uint32, rows int64) {
	e := &x.entries[x.entry(oid)]
	e.seqScan++
	e.seqRead += rows
}

// IndexScanned counts an index scan of table oid that fetched rows live
// rows (pgstat_count_index_scan and pgstat_count_heap_fetch).
func (x *Xact) IndexScanned(oid uint32, rows int64) {
	e := &x.entries[x.entry(oid)]
	e.idxScan++
	e.idxFetch += rows
}

// IndexUsed counts a scan of index oid that returned read entries and
// fetched fetched live rows (pgstat_count_index_scan,
// pgstat_count_index_tuples and the heap fetches counted on the index).
func (x *Xact) IndexUsed(oid uint32, read, fetched int64) {
	e := &x.entries[x.entry(oid)]
	e.idxScan++
	e.idxRead += read
	e.idxFetch += fetched
}

// Truncated records a TRUNCATE of table oid (pgstat_count_truncate): the
// counts so far stop mattering unless it rolls back.
func (x *Xact) Truncated(oid uint32) {
	e := &x.entries[x.entry(oid)]
	if !e.truncated {
		e.truncated = true
		e.preIns, e.preUpd, e.preDel = e.ins, e.upd, e.del
	}
	e.ins, e.upd, e.del = 0, 0, 0
}

// Pending returns this transaction's net effect so far on table oid's
// live and dead rows, which ANALYZE subtracts from what it measured:
// the transaction's counts are added when it ends.
func (x *Xact) Pending(oid uint32) (live, dead int64) {
	for i := range x.entries {
		if e := &x.entries[i]; e.oid == oid {
			return e.ins - e.del, e.upd + e.del + e.abIns + e.abUpd
		}
	}
	return 0, 0
}

// XactMark is the state of a transaction's counts at a savepoint.
type XactMark []xactEntry

// Mark records the counts at a savepoint.
func (x *Xact) Mark() XactMark { return append(XactMark(nil), x.entries...) }

// RollbackTo undoes the counts made since mark, keeping them as
// attempted (rolled-back inserts and updates left dead rows).
func (x *Xact) RollbackTo(mark XactMark) {
	for i := range x.entries {
		e := &x.entries[i]
		m := xactEntry{oid: e.oid}
		if i < len(mark) {
			m = mark[i]
		}
		ins, upd, del := e.ins, e.upd, e.del
		if e.truncated && !m.truncated {
			ins, upd, del = e.preIns, e.preUpd, e.preDel
		}
		e.abIns += ins - m.ins
		e.abUpd += upd - m.upd
		e.abDel += del - m.del
		e.ins, e.upd, e.del = m.ins, m.upd, m.del
		e.truncated, e.preIns, e.preUpd, e.preDel = m.truncated, m.preIns, m.preUpd, m.preDel
	}
}

// End adds the transaction's counts to the backend's totals, as
// AtEOXact_PgStat does: every attempted insert, update and delete counts
// in n_tup_*; a commit also counts its changes (n_mod_since_analyze) and
// moves the live and dead row counts (a committed TRUNCATE first sets
// them to 0), an abort leaves its inserted and updated rows dead. The
// counts are then cleared for the next transaction.
func (x *Xact) End(b *Backend, commit bool) {
	if len(x.entries) == 0 {
		return
	}
	for i := range x.entries {
		e := &x.entries[i]
		if e.truncated && commit {
			b.store.truncatedActivity(e.oid)
		}
		if e.truncated && !commit {
			e.ins, e.upd, e.del = e.preIns, e.preUpd, e.preDel
		}
	}
	b.mu.Lock()
	for i := range x.entries {
		e := &x.entries[i]
		t := b.tabs[e.oid]
		if t == nil {
			t = &totals{}
			b.tabs[e.oid] = t
		}
		t.ins += e.ins + e.abIns
		t.upd += e.upd + e.abUpd
		t.del += e.del + e.abDel
		t.seqScan += e.seqScan
		t.seqRead += e.seqRead
		t.idxScan += e.idxScan
		t.idxFetch += e.idxFetch
		t.idxRead += e.idxRead
		t.hot += e.hot
		if commit {
			t.live += e.ins - e.del
			t.dead += e.upd + e.del + e.abIns + e.abUpd
			t.changed += e.ins + e.upd + e.del
		} else {
			t.dead += e.ins + e.upd + e.abIns + e.abUpd
		}
	}
	b.mu.Unlock()
	clear(x.entries)
	x.entries, x.last = x.entries[:0], 0
}

// sumLocked sums table oid's totals over every backend (s.mu held).
func (s *Store) sumLocked(oid uint32) totals {
	var sum totals
	if c := s.closed[oid]; c != nil {
		sum.add(c)
	}
	for b := range s.backends {
		b.mu.Lock()
		if t := b.tabs[oid]; t != nil {
			sum.add(t)
		}
		b.mu.Unlock()
	}
	return sum
}

// sumAllLocked sums every table's totals (s.mu held).
func (s *Store) sumAllLocked() map[uint32]*totals {
	out := map[uint32]*totals{}
	add := func(oid uint32, t *totals) {
		o := out[oid]
		if o == nil {
			o = &totals{}
			out[oid] = o
		}
		o.add(t)
	}
	for oid, t := range s.closed {
		add(oid, t)
	}
	for b := range s.backends {
		b.mu.Lock()
		for oid, t := range b.tabs {
			add(oid, t)
		}
		b.mu.Unlock()
	}
	return out
}

func (s *Store) baseLocked(oid uint32) *base {
	b := s.bases[oid]
	if b == nil {
		b = &base{}
		s.bases[oid] = b
	}
	return b
}

// truncatedActivity restarts table oid's live and dead rows and inserts
// since VACUUM from 0, for a committed TRUNCATE.
func (s *Store) truncatedActivity(oid uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := s.sumLocked(oid)
	b := s.baseLocked(oid)
	b.LiveBase, b.LiveAt, b.DeadBase, b.DeadAt, b.InsAt = 0, sum.live, 0, sum.dead, sum.ins
}

// ReportPruned records that pruning removed n dead row versions of
// table oid on a reader's way (pgstat_update_heap_dead_tuples):
// n_dead_tup falls by n, never below 0, so autovacuum does not count
// versions HOT pruning already removed.
func (s *Store) ReportPruned(oid uint32, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := s.sumLocked(oid)
	b := s.baseLocked(oid)
	b.DeadBase, b.DeadAt = max(b.DeadBase+sum.dead-b.DeadAt-n, 0), sum.dead
}

// ReportAnalyze records an ANALYZE of table oid (pgstat_report_analyze):
// live and dead are the rows it counted, less the analysing
// transaction's own pending changes (Xact.Pending); resetMod restarts
// n_mod_since_analyze (when every column was analysed); auto says
// autovacuum ran it.
func (s *Store) ReportAnalyze(oid uint32, live, dead int64, resetMod, auto bool, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := s.sumLocked(oid)
	b := s.baseLocked(oid)
	b.LiveBase, b.LiveAt = max(live, 0), sum.live
	b.DeadBase, b.DeadAt = max(dead, 0), sum.dead
	if resetMod {
		b.ChangedAt = sum.changed
	}
	if auto {
		b.LastAutoAnalyze = now
		b.AutoAnalyzeCount++
	} else {
		b.LastAnalyze = now
		b.AnalyzeCount++
	}
}

// ReportVacuum records a VACUUM of table oid (pgstat_report_vacuum): the
// live rows it found, the dead ones it could not remove yet, and a new
// start for n_ins_since_vacuum; auto: autovacuum ran it.
func (s *Store) ReportVacuum(oid uint32, live, dead int64, auto bool, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := s.sumLocked(oid)
	b := s.baseLocked(oid)
	b.LiveBase, b.LiveAt = live, sum.live
	b.DeadBase, b.DeadAt = dead, sum.dead
	b.InsAt = sum.ins
	if auto {
		b.LastAutoVacuum = now
		b.AutoVacuumCount++
	} else {
		b.LastVacuum = now
		b.VacuumCount++
	}
}

// ResetCounters restarts every table's cumulative counters — inserts,
// updates, deletes, scans — from zero, as pg_stat_reset() does. The live
// and dead row counts, the changes since ANALYZE and the inserts since
// VACUUM that autovacuum reads are kept (PostgreSQL resets them too, which
// leaves autovacuum without its counts until the next ANALYZE).
func (s *Store) ResetCounters() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for oid, t := range s.sumAllLocked() {
		b := s.baseLocked(oid)
		b.ResetIns, b.ResetUpd, b.ResetDel = t.ins, t.upd, t.del
		b.ResetSeqScan, b.ResetSeqRead, b.ResetIdxScan, b.ResetIdxFetch = t.seqScan, t.seqRead, t.idxScan, t.idxFetch
		b.ResetIdxRead, b.ResetHot = t.idxRead, t.hot
	}
}

// Activity returns what pg_stat_all_tables shows of every table with
// counts, by OID.
func (s *Store) Activity() map[uint32]*TableActivity {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[uint32]*TableActivity{}
	sums := s.sumAllLocked()
	for oid := range s.bases {
		if sums[oid] == nil {
			sums[oid] = &totals{}
		}
	}
	for oid, t := range sums {
		a := &TableActivity{Inserted: t.ins, Updated: t.upd, Deleted: t.del,
			SeqScan: t.seqScan, SeqTupRead: t.seqRead, IdxScan: t.idxScan, IdxTupFetch: t.idxFetch, IdxTupRead: t.idxRead, HotUpdated: t.hot,
			Live: t.live, Dead: t.dead, ModSinceAnalyze: t.changed, InsSinceVacuum: t.ins}
		if b := s.bases[oid]; b != nil {
			a.Live = b.LiveBase + t.live - b.LiveAt
			a.Dead = b.DeadBase + t.dead - b.DeadAt
			a.ModSinceAnalyze = t.changed - b.ChangedAt
			a.InsSinceVacuum = t.ins - b.InsAt
			a.LastVacuum, a.LastAnalyze, a.LastAutoAnalyze = b.LastVacuum, b.LastAnalyze, b.LastAutoAnalyze
			a.VacuumCount, a.AnalyzeCount, a.AutoAnalyzeCount = b.VacuumCount, b.AnalyzeCount, b.AutoAnalyzeCount
			a.LastAutoVacuum, a.AutoVacuumCount = b.LastAutoVacuum, b.AutoVacuumCount
			a.Inserted -= b.ResetIns
			a.Updated -= b.ResetUpd
			a.Deleted -= b.ResetDel
			a.SeqScan -= b.ResetSeqScan
			a.SeqTupRead -= b.ResetSeqRead
			a.IdxScan -= b.ResetIdxScan
			a.IdxTupFetch -= b.ResetIdxFetch
			a.IdxTupRead -= b.ResetIdxRead
			a.HotUpdated -= b.ResetHot
		}
		a.Live, a.Dead = max(a.Live, 0), max(a.Dead, 0)
		out[oid] = a
	}
	return out
}

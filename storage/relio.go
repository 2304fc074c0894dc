package storage

import (
	"sync"
	"sync/atomic"
)

// Block accesses per relation, for pg_statio_all_tables and its siblings
// (PostgreSQL's pgstat_count_buffer_read and _hit): every page a backend
// asks the buffer pool for is counted against its relation, as a hit when
// the page was in the pool and as a read when it had to be read from its
// file. Each backend counts into its own table (relIOTable, in its
// backendStats): a handful of recently used relations are found without a
// lookup, and the counters are atomics only the backend writes, so the
// statement path touches nothing shared. RelIO sums the backends when a
// view is read.
//
// lockd's indexes are B+trees in memory (index.go), not pages of the
// buffer pool: an index access counts the tree nodes it visits as hits,
// and nothing is ever read.

// RelIO is a relation's block accesses, summed over every backend.
type RelIO struct {
	Hits  uint64 // pages found in the buffer pool (index: B-tree nodes visited)
	Reads uint64 // pages read from the relation's file
}

// relIOCount is one backend's counts for one relation: written by that
// backend only, read by anyone.
type relIOCount struct {
	rel         RelID
	hits, reads atomic.Uint64
}

// relIOTable is one backend's relIOCounts by relation.
type relIOTable struct {
	mu sync.Mutex
	m  map[RelID]*relIOCount // guarded by mu; the backend adds entries, readers iterate
	// recent are the counts of relations the backend used last (owner
	// only), so that a scan or a lookup alternating between an index and
	// its table finds them without a map lookup
	recent [4]*relIOCount
	next   uint8
}

// counts returns the backend's counts for rel, creating them on first use.
// Owner only.
func (t *relIOTable) counts(rel RelID) *relIOCount {
	for _, c := range t.recent {
		if c != nil && c.rel == rel {
			return c
		}
	}
	t.mu.Lock()
	c := t.m[rel]
	if c == nil {
		if t.m == nil {
			t.m = map[RelID]*relIOCount{}
		}
		c = &relIOCount{rel: rel}
		t.m[rel] = c
	}
	t.mu.Unlock()
	t.recent[t.next%uint8(len(t.recent))] = c
	t.next++
	return c
}

// addTo adds the table's counts into out.
func (t *relIOTable) addTo(out map[RelID]RelIO) {
	t.mu.Lock()
	for rel, c := range t.m {
		v := out[rel]
		v.Hits += c.hits.Load()
		v.Reads += c.reads.Load()
		out[rel] = v
	}
	t.mu.Unlock()
}

// countIO counts one page access of r by the backend whose stats st are;
// nothing for the overflow entry, which backends without a proc share.
func (s *Store) countIO(st *backendStats, rel RelID, hit bool) {
	if st == &s.backends.overflow.stats {
		return
	}
	c := st.relIO.counts(rel)
	if hit {
		c.hits.Add(1)
	} else {
		c.reads.Add(1)
	}
}

// countIndexIO counts n B-tree nodes of index idx visited by backend p.
func (s *Store) countIndexIO(b *backend, shared bool, idx RelID, n int) {
	if shared || n == 0 {
		return
	}
	b.stats.relIO.counts(idx).hits.Add(uint64(n))
}

// relIOBase is what ResetRelIO recorded.
type relIOBase struct {
	mu   sync.Mutex
	base map[RelID]RelIO // guarded by mu
}

// RelIO returns every relation's block accesses summed over the backends,
// less what they were at the last ResetRelIO. Safe from any goroutine.
func (s *Store) RelIO() map[RelID]RelIO {
	out := s.relIOTotals()
	s.relIOBase.mu.Lock()
	for rel, b := range s.relIOBase.base {
		v := out[rel]
		v.Hits -= min(b.Hits, v.Hits)
		v.Reads -= min(b.Reads, v.Reads)
		out[rel] = v
	}
	s.relIOBase.mu.Unlock()
	return out
}

func (s *Store) relIOTotals() map[RelID]RelIO {
	out := map[RelID]RelIO{}
	t := &s.backends
	for i := range t.chunks {
		if c := t.chunks[i].Load(); c != nil {
			for j := range c {
				c[j].stats.relIO.addTo(out)
			}
		}
	}
	return out
}

// ResetRelIO makes RelIO count from zero again (pg_stat_reset).
func (s *Store) ResetRelIO() {
	tot := s.relIOTotals()
	s.relIOBase.mu.Lock()
	s.relIOBase.base = tot
	s.relIOBase.mu.Unlock()
}

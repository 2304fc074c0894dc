package storage

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"lockd/locks"
	"lockd/txn"
)

// Stats are storage counters summed over all backends.
type Stats struct {
	BufferHits      uint64 // page found in the buffer pool
	BufferReads     uint64 // page read from its file (pread)
	BufferWrites    uint64 // dirty page written back (eviction or checkpoint)
	BufferEvictions uint64 // valid page replaced by the clock sweep
	// Extensions counts relation extensions (each adds one or more pages
	// under the extension lock); PagesAdded the pages they added (the
	// caller's page and the extra ones entered in the free space map).
	// PagesAdded / Extensions is the mean extension size.
	Extensions uint64
	PagesAdded uint64
	// ExtensionSizes is the distribution of pages per extension: entry i
	// counts extensions that added more than ExtensionSizeBounds[i-1] and at
	// most ExtensionSizeBounds[i] pages; the last entry counts those above
	// 512 (+Inf). Counts per bucket, not cumulative: a Prometheus histogram
	// sums them (its _sum is PagesAdded, its _count Extensions).
	ExtensionSizes [NumExtensionSizeBuckets]uint64
	// ExtensionLockWaits counts extension attempts whose conditional
	// acquisition of the relation extension lock failed, so the backend
	// had to wait (the lock manager also counts these waits, per lock type
	// and mode); ExtensionLockWaitTime is the time spent in those waits.
	ExtensionLockWaits    uint64
	ExtensionLockWaitTime time.Duration
	// ExtensionWaitFSMHits counts extension-lock waits after which the
	// free space map had room (someone extended for this backend), so it
	// did not extend: what group mode is for.
	ExtensionWaitFSMHits uint64
	// Where tuple placements (Insert, and Update to another page) found
	// their page: TargetBlockHits in the backend's cached target block
	// (rd_targblock), FSMHits through the free space map (including the
	// re-check after an extension-lock wait), FSMMisses by extending the
	// relation. The three add up to the placements.
	TargetBlockHits  uint64
	FSMHits          uint64
	FSMMisses        uint64
	Checkpoints      uint64
	CheckpointWrites uint64 // of BufferWrites, those a checkpoint made (pg_stat_bgwriter.buffers_checkpoint)
}

// NumExtensionSizeBuckets is the number of ExtensionSizes buckets.
const NumExtensionSizeBuckets = 11

// ExtensionSizeBounds are the inclusive upper bounds of the first
// NumExtensionSizeBuckets-1 ExtensionSizes buckets, in pages; the last
// bucket is +Inf.
var ExtensionSizeBounds = [NumExtensionSizeBuckets - 1]uint32{1, 2, 4, 8, 16, 32, 64, 128, 256, 512}

// extensionSizeBucket returns the ExtensionSizes index for an extension
// of n pages.
func extensionSizeBucket(n uint32) int {
	for i, b := range ExtensionSizeBounds {
		if n <= b {
			return i
		}
	}
	return NumExtensionSizeBuckets - 1
}

// backendStats are one backend's counters: written only by that backend
// (atomics so that Stats may read them at any time), padded so that
// backends do not share cache lines.
type backendStats struct {
	bufferHits         atomic.Uint64
	bufferReads        atomic.Uint64
	bufferWrites       atomic.Uint64
	bufferEvictions    atomic.Uint64
	extensions         atomic.Uint64
	pagesAdded         atomic.Uint64
	extensionLockWaits atomic.Uint64
	checkpoints        atomic.Uint64
	checkpointWrites   atomic.Uint64 // buffers written by CheckpointBuffers
	// extension path
	extensionLockWaitNs  atomic.Uint64
	extensionWaitFSMHits atomic.Uint64
	targetBlockHits      atomic.Uint64
	fsmHits              atomic.Uint64
	fsmMisses            atomic.Uint64
	extensionSizes       [NumExtensionSizeBuckets]atomic.Uint64
	// block accesses per relation (relio.go)
	relIO relIOTable
}

func (b *backendStats) addTo(s *Stats) {
	s.BufferHits += b.bufferHits.Load()
	s.BufferReads += b.bufferReads.Load()
	s.BufferWrites += b.bufferWrites.Load()
	s.BufferEvictions += b.bufferEvictions.Load()
	s.Extensions += b.extensions.Load()
	s.PagesAdded += b.pagesAdded.Load()
	s.ExtensionLockWaits += b.extensionLockWaits.Load()
	s.Checkpoints += b.checkpoints.Load()
	s.CheckpointWrites += b.checkpointWrites.Load()
	s.ExtensionLockWaitTime += time.Duration(b.extensionLockWaitNs.Load())
	s.ExtensionWaitFSMHits += b.extensionWaitFSMHits.Load()
	s.TargetBlockHits += b.targetBlockHits.Load()
	s.FSMHits += b.fsmHits.Load()
	s.FSMMisses += b.fsmMisses.Load()
	for i := range b.extensionSizes {
		s.ExtensionSizes[i] += b.extensionSizes[i].Load()
	}
}

// ExtensionStats returns the extension counters of every heap relation,
// ordered by RelID (for pg_stat_lockd_extension). Safe from any goroutine.
func (s *Store) ExtensionStats() []RelExtensionStats {
	rels := *s.rels.Load()
	out := make([]RelExtensionStats, 0, len(rels))
	for id, r := range rels {
		out = append(out, RelExtensionStats{
			Rel:        id,
			Extensions: r.ext.extensions.Load(),
			PagesAdded: r.ext.pagesAdded.Load(),
			Waits:      r.ext.waits.Load(),
			WaitTime:   time.Duration(r.ext.waitNs.Load()),
		})
	}
	slices.SortFunc(out, func(a, b RelExtensionStats) int {
		switch {
		case a.Rel < b.Rel:
			return -1
		case a.Rel > b.Rel:
			return 1
		}
		return 0
	})
	return out
}

// targetCache is a backend's insertion target per relation (the relcache's
// rd_targblock): the block it last inserted into.
type target struct {
	gen   uint32
	block uint32
}

// backendData is the per-backend storage state of proc number n.
type backendData struct {
	stats backendStats
	// targets is owned by the backend's goroutine (nobody else touches it).
	targets map[RelID]target
	// hdrs hand tuple headers to Fetch callbacks without allocating, one
	// per nesting level (a callback may Fetch again); owner only.
	hdrs     [4]txn.TupleHeader
	hdrDepth int
}

type backend struct {
	backendData
	_ [(128 - unsafe.Sizeof(backendData{})%128) % 128]byte
}

// backendTable maps proc numbers to backend state, allocated in chunks on
// first use so that the Store needs no proc count. Numbers beyond its range
// (and a nil Proc) share the overflow entry, whose target cache is unused.
const (
	backendChunk  = 64
	backendChunks = 256 // 16384 proc numbers
)

type backendTable struct {
	mu       sync.Mutex
	chunks   [backendChunks]atomic.Pointer[[backendChunk]backend]
	overflow backend
}

// backend returns p's state; shared reports that it is the overflow entry
// (its target cache must not be used).
func (s *Store) backend(p *locks.Proc) (b *backend, shared bool) {
	t := &s.backends
	if p == nil {
		return &t.overflow, true
	}
	n := int(p.Number())
	if n < 0 || n >= backendChunk*backendChunks {
		return &t.overflow, true
	}
	c := t.chunks[n/backendChunk].Load()
	if c == nil {
		t.mu.Lock()
		if c = t.chunks[n/backendChunk].Load(); c == nil {
			c = new([backendChunk]backend)
			t.chunks[n/backendChunk].Store(c)
		}
		t.mu.Unlock()
	}
	return &c[n%backendChunk], false
}

// Stats sums every backend's counters. Safe from any goroutine.
func (s *Store) Stats() Stats {
	var out Stats
	t := &s.backends
	for i := range t.chunks {
		if c := t.chunks[i].Load(); c != nil {
			for j := range c {
				c[j].stats.addTo(&out)
			}
		}
	}
	t.overflow.stats.addTo(&out)
	return out
}

// BackendStats returns the counters of proc number n (zero if unused).
func (s *Store) BackendStats(n int32) Stats {
	var out Stats
	if n >= 0 && int(n) < backendChunk*backendChunks {
		if c := s.backends.chunks[n/backendChunk].Load(); c != nil {
			c[n%backendChunk].stats.addTo(&out)
		}
	}
	return out
}

// getTarget returns the cached insertion block for r, or InvalidBlock.
func (b *backend) getTarget(r *relation, shared bool) uint32 {
	if shared || b.targets == nil {
		return InvalidBlock
	}
	t, ok := b.targets[r.id]
	if !ok || t.gen != r.gen.Load() || t.block >= r.nblocks.Load() {
		return InvalidBlock
	}
	return t.block
}

func (b *backend) setTarget(r *relation, shared bool, blk uint32) {
	if shared {
		return
	}
	if b.targets == nil {
		b.targets = make(map[RelID]target)
	}
	b.targets[r.id] = target{gen: r.gen.Load(), block: blk}
}

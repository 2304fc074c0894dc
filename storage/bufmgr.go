package storage

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"lockd/locks"
	"lockd/wal"
)

// The buffer pool (PostgreSQL's bufmgr.c, buf_table.c, freelist.c).
//
// SharedBuffers 8 kB pages live in one array; each has a descriptor with
// a packed atomic state word, its tag (relation, block) and a content
// LWLock (tranche BufferContent). A tag → buffer hash table, split into
// 128 partitions (NUM_BUFFER_PARTITIONS) each guarded by a BufferMapping
// LWLock, finds a page's buffer.
//
// State word:
//
//	bits 0..17   refcount (pins)
//	bits 18..21  usage count (0..5, BM_MAX_USAGE_COUNT)
//	bit 22       BM_LOCKED     buffer header lock (a spin bit)
//	bit 23       BM_DIRTY
//	bit 24       BM_VALID      page contents are loaded
//	bit 25       BM_TAG_VALID  tag is meaningful and in the mapping table
//
// Invariants:
//   - A pinned buffer is never evicted and its tag never changes. Pins are
//     taken (1) by a lookup, under the mapping partition lock in shared
//     mode, (2) by the clock sweep, only from refcount 0, and (3) by
//     Checkpoint, under the header lock. Tag changes need the header lock
//     and the exclusive mapping locks of the old and new partitions and a
//     refcount of exactly 1 (the evicting backend's own pin).
//   - Every change of the state word waits while BM_LOCKED is set, so the
//     holder of the header lock may store the whole word on unlock.
//   - Page bytes are read under the content lock (shared) and changed under
//     it (exclusive), with two exceptions taken from PostgreSQL: hint bits
//     are OR-ed in atomically under a shared lock (the tuple's flags word),
//     and tuple data bytes may be read with only a pin, because tuples are
//     moved (page compaction) only under a cleanup lock: exclusive content
//     lock plus refcount 1 (LockBufferForCleanup).
//   - A page is loaded by the backend that installed its tag: it takes the
//     content lock exclusively before publishing the mapping entry, so a
//     concurrent lookup of that page waits on the content lock until the
//     read is done (PostgreSQL waits on BM_IO_IN_PROGRESS instead; here such
//     a wait shows as LWLock/BufferContent).
//   - Lock order: mapping partition locks in index order, then a header
//     lock. Content locks of two pages of one relation in block order.
//     No buffer lock is held while waiting for a heavyweight lock.
//
// Eviction is PostgreSQL's clock sweep (StrategyGetBuffer): the hand moves
// over the buffers decrementing usage counts; the first unpinned buffer with
// usage 0 is the victim. A dirty victim is written back (under its content
// lock, shared) before its tag is replaced; if someone pinned or dirtied it
// meanwhile the sweep goes on. There is no separate free list: unused
// buffers have usage 0 and are found by the sweep.
//
// The hit path (lookup, pin, content lock shared, unlock, unpin) does not
// allocate: the mapping table is a Go map probed with a struct key.
const (
	numBufferPartitions = 128 // NUM_BUFFER_PARTITIONS

	bufRefMask   uint32 = 1<<18 - 1
	bufUsageOne  uint32 = 1 << 18
	bufUsageMask uint32 = 0xf << 18
	bmMaxUsage          = 5

	bmLocked   uint32 = 1 << 22
	bmDirty    uint32 = 1 << 23
	bmValid    uint32 = 1 << 24
	bmTagValid uint32 = 1 << 25

	wordsPerPage = PageSize / 8
)

type bufTag struct {
	rel   RelID
	block uint32
}

type bufferDescData struct {
	state atomic.Uint32
	tag   bufTag // guarded by the header lock; stable while pinned
	// rel is tag.rel, written with it under the header lock and readable
	// without it: dropRelationBuffers passes over the other relations'
	// buffers without locking each header (PostgreSQL's unlocked
	// RelFileNodeEquals test in DropRelFileNodesAllBuffers).
	rel     atomic.Uint32
	content locks.LWLock // tranche BufferContent
}

// setTag sets d's tag; the caller holds its header lock.
func (d *bufferDescData) setTag(tag bufTag) {
	d.tag = tag
	d.rel.Store(uint32(tag.rel))
}

// bufferDesc is padded to 64 bytes like PostgreSQL's BufferDescPadded.
type bufferDesc struct {
	bufferDescData
	_ [(64 - unsafe.Sizeof(bufferDescData{})%64) % 64]byte
}

type mappingPartitionData struct {
	lock locks.LWLock     // tranche BufferMapping
	m    map[bufTag]int32 // guarded by lock
}

type mappingPartition struct {
	mappingPartitionData
	_ [(128 - unsafe.Sizeof(mappingPartitionData{})%128) % 128]byte
}

type bufferPool struct {
	n     uint32
	descs []bufferDesc
	mem   []uint64 // n pages
	parts [numBufferPartitions]mappingPartition
	_     [64]byte
	hand  atomic.Uint64 // clock sweep position (nextVictimBuffer)
	_     [56]byte
}

// scratchPages are write-back copies (a page is copied out under its
// content lock and written without it).
var scratchPages = sync.Pool{New: func() any { return new([PageSize]byte) }}

func (bp *bufferPool) init(n int) error {
	mem, err := mapPages(n)
	if err != nil {
		return err
	}
	bp.n = uint32(n)
	bp.descs = make([]bufferDesc, n)
	bp.mem = mem
	for i := range bp.descs {
		bp.descs[i].content.Init(locks.TrancheBufferContent)
	}
	// Whoever touches a page holds a pointer to its descriptor (to pin and
	// unpin it), so the pages are unmapped only after the descriptors are
	// unreachable.
	runtime.AddCleanup(&bp.descs[0], func(b []byte) { syscall.Munmap(b) },
		unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), len(mem)*8))
	for i := range bp.parts {
		bp.parts[i].lock.Init(locks.TrancheBufferMapping)
		bp.parts[i].m = make(map[bufTag]int32, 2*n/numBufferPartitions+8)
	}
	return nil
}

// mapPages returns n zeroed pages outside Go's heap, in an anonymous
// mapping, where PostgreSQL keeps shared_buffers too (shared memory). In
// the heap they would count as live data: the collector's goal (twice the
// live heap at GOGC=100) would then let the heap grow by shared_buffers
// again between collections, so the process would hold about twice
// shared_buffers, and each span taken from that fresh memory costs a page
// fault (measured: 1.9 faults and 7 µs of system time per pgbench
// transaction in the first collection cycle after start, with 1 GB).
func mapPages(n int) ([]uint64, error) {
	b, err := syscall.Mmap(-1, 0, n*PageSize, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("could not map anonymous shared memory: %w", err)
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(&b[0])), n*wordsPerPage), nil
}

func (bp *bufferPool) desc(id int32) *bufferDesc { return &bp.descs[id] }

// page returns buffer id's page; no allocation.
func (bp *bufferPool) page(id int32) page {
	return unsafe.Slice((*byte)(unsafe.Pointer(&bp.mem[int(id)*wordsPerPage])), PageSize)
}

func tagHash(t bufTag) uint32 {
	h := uint32(t.rel)*0x9e3779b1 ^ t.block*0x85ebca77
	h ^= h >> 16
	h *= 0x7feb352d
	h ^= h >> 15
	return h
}

func (bp *bufferPool) partition(t bufTag) (int, *mappingPartition) {
	i := int(tagHash(t) % numBufferPartitions)
	return i, &bp.parts[i]
}

// spinWait backs off while a header lock is held.
func spinWait(i *int) {
	*i++
	if *i%64 == 0 {
		runtime.Gosched()
	}
}

// lockHeader takes d's header lock and returns the state (with BM_LOCKED).
func (d *bufferDesc) lockHeader() uint32 {
	spins := 0
	for {
		old := d.state.Load()
		if old&bmLocked == 0 && d.state.CompareAndSwap(old, old|bmLocked) {
			return old | bmLocked
		}
		spinWait(&spins)
	}
}

// unlockHeader stores s (without BM_LOCKED) as the new state.
func (d *bufferDesc) unlockHeader(s uint32) { d.state.Store(s &^ bmLocked) }

// pin adds a pin and bumps the usage count (PinBuffer). The caller holds
// the buffer's mapping partition lock, or already a pin.
func (d *bufferDesc) pin() uint32 {
	spins := 0
	for {
		old := d.state.Load()
		if old&bmLocked != 0 {
			spinWait(&spins)
			continue
		}
		nu := old + 1
		if old&bufUsageMask < bmMaxUsage*bufUsageOne {
			nu += bufUsageOne
		}
		if d.state.CompareAndSwap(old, nu) {
			return nu
		}
	}
}

// unpin drops a pin (UnpinBuffer).
func (d *bufferDesc) unpin() {
	spins := 0
	for {
		old := d.state.Load()
		if old&bmLocked != 0 {
			spinWait(&spins)
			continue
		}
		if old&bufRefMask == 0 {
			panic("storage: unpin of an unpinned buffer")
		}
		if d.state.CompareAndSwap(old, old-1) {
			return
		}
	}
}

// setFlags ORs f into the state (MarkBufferDirty, MarkBufferDirtyHint).
func (d *bufferDesc) setFlags(f uint32) {
	spins := 0
	for {
		old := d.state.Load()
		if old&f == f {
			return
		}
		if old&bmLocked != 0 {
			spinWait(&spins)
			continue
		}
		if d.state.CompareAndSwap(old, old|f) {
			return
		}
	}
}

func (d *bufferDesc) clearFlags(f uint32) {
	spins := 0
	for {
		old := d.state.Load()
		if old&bmLocked != 0 {
			spinWait(&spins)
			continue
		}
		if d.state.CompareAndSwap(old, old&^f) {
			return
		}
	}
}

// readBuffer returns buffer of block blk of r, pinned and valid
// (ReadBuffer). blk must be < r.nblocks.
func (s *Store) readBuffer(p *locks.Proc, st *backendStats, r *relation, blk uint32) (int32, error) {
	return s.readBufferMode(p, st, r, blk, false)
}

// readBufferMode is readBuffer; with zero set, a page that is not in the
// pool is initialised as an empty page instead of being read
// (RBM_ZERO_AND_LOCK): for a page the caller has just added to the file.
func (s *Store) readBufferMode(p *locks.Proc, st *backendStats, r *relation, blk uint32, zero bool) (int32, error) {
	bp := &s.pool
	tag := bufTag{r.id, blk}
	for {
		_, part := bp.partition(tag)
		part.lock.Acquire(p, locks.LWShared)
		id, ok := part.m[tag]
		if ok {
			d := bp.desc(id)
			state := d.pin()
			part.lock.Release(p)
			if state&bmValid == 0 && !bp.waitValid(p, d) {
				d.unpin()
				continue
			}
			st.bufferHits.Add(1)
			s.countIO(st, r.id, true)
			return id, nil
		}
		part.lock.Release(p)
		id, retry, err := s.loadBuffer(p, st, r, tag, zero)
		if retry {
			continue
		}
		return id, err
	}
}

// waitValid waits for a concurrent load of d (holding its content lock)
// to end; false if the load failed.
func (bp *bufferPool) waitValid(p *locks.Proc, d *bufferDesc) bool {
	d.content.Acquire(p, locks.LWShared)
	d.content.Release(p)
	return d.state.Load()&bmValid != 0
}

// loadBuffer handles a miss: claims a victim buffer, retags it and reads
// the page. retry means the page appeared in the pool meanwhile (or the
// victim was taken) and the lookup should start again.
func (s *Store) loadBuffer(p *locks.Proc, st *backendStats, r *relation, tag bufTag, zero bool) (id int32, retry bool, err error) {
	bp := &s.pool
	id, err = s.victim(p, st)
	if err != nil {
		return -1, false, err
	}
	d := bp.desc(id)
	oldState := d.state.Load() // we hold the only pin: tag and flags are stable
	oldTag := d.tag
	newIdx, newPart := bp.partition(tag)
	oldIdx := -1
	var oldPart *mappingPartition
	if oldState&bmTagValid != 0 {
		oldIdx, oldPart = bp.partition(oldTag)
	}
	// Mapping locks in partition order.
	switch {
	case oldIdx < 0 || oldIdx == newIdx:
		newPart.lock.Acquire(p, locks.LWExclusive)
	case oldIdx < newIdx:
		oldPart.lock.Acquire(p, locks.LWExclusive)
		newPart.lock.Acquire(p, locks.LWExclusive)
	default:
		newPart.lock.Acquire(p, locks.LWExclusive)
		oldPart.lock.Acquire(p, locks.LWExclusive)
	}
	release := func() {
		newPart.lock.Release(p)
		if oldIdx >= 0 && oldIdx != newIdx {
			oldPart.lock.Release(p)
		}
	}
	if _, ok := newPart.m[tag]; ok {
		// Somebody loaded the page while we looked for a victim.
		release()
		d.unpin()
		return -1, true, nil
	}
	state := d.lockHeader()
	if state&bufRefMask != 1 || state&bmDirty != 0 {
		// Pinned or dirtied since we chose it: look for another victim.
		d.unlockHeader(state)
		release()
		d.unpin()
		return -1, true, nil
	}
	if state&bmTagValid != 0 {
		delete(oldPart.m, oldTag)
		st.bufferEvictions.Add(1)
	}
	d.setTag(tag)
	newPart.m[tag] = id
	d.unlockHeader(1 | bufUsageOne | bmTagValid)
	if !d.content.ConditionalAcquire(p, locks.LWExclusive) {
		panic("storage: content lock of a victim buffer is held")
	}
	release()

	pg := bp.page(id)
	if zero {
		initPage(pg)
	} else {
		if p != nil {
			p.SetWaitEvent(locks.WaitEventDataFileRead)
		}
		err := r.readPage(tag.block, pg)
		if p != nil {
			p.ClearWaitEvent()
		}
		if err != nil {
			bp.invalidate(p, id, tag)
			d.content.Release(p)
			d.unpin()
			return -1, false, err
		}
		st.bufferReads.Add(1)
		s.countIO(st, r.id, false)
	}
	d.setFlags(bmValid)
	d.content.Release(p)
	return id, false, nil
}

// invalidate removes a buffer whose load failed from the mapping table.
// The caller holds a pin and the content lock.
func (bp *bufferPool) invalidate(p *locks.Proc, id int32, tag bufTag) {
	d := bp.desc(id)
	_, part := bp.partition(tag)
	part.lock.Acquire(p, locks.LWExclusive)
	if part.m[tag] == id {
		delete(part.m, tag)
	}
	state := d.lockHeader()
	d.setTag(bufTag{})
	d.unlockHeader(state &^ (bmTagValid | bmValid | bmDirty | bufUsageMask))
	part.lock.Release(p)
}

// victim runs the clock sweep and returns a buffer pinned once by the
// caller, clean (a dirty victim is written back first). Its tag may still
// be in the mapping table.
func (s *Store) victim(p *locks.Proc, st *backendStats) (int32, error) {
	bp := &s.pool
	n := uint64(bp.n)
	// PostgreSQL gives up after a full pass that found every buffer pinned;
	// usage counts can need up to 5 passes to drain.
	limit := n * (bmMaxUsage + 2)
	for tries := uint64(0); tries < limit; tries++ {
		id := int32((bp.hand.Add(1) - 1) % n)
		d := bp.desc(id)
		spins := 0
		for {
			old := d.state.Load()
			if old&bmLocked != 0 {
				spinWait(&spins)
				continue
			}
			if old&bufRefMask != 0 {
				break
			}
			if old&bufUsageMask != 0 {
				if d.state.CompareAndSwap(old, old-bufUsageOne) {
					break
				}
				continue
			}
			if !d.state.CompareAndSwap(old, old+1) {
				continue
			}
			if old&bmDirty != 0 {
				if _, err := s.flushBuffer(p, st, id); err != nil {
					d.unpin()
					return -1, err
				}
			}
			return id, nil
		}
	}
	return -1, ErrNoUnpinnedBuffers
}

// flushBuffer writes a pinned buffer back if it is dirty (FlushBuffer).
// The page is copied under the content lock (shared), with atomic word
// loads because hint bits may be set concurrently, and written without it.
func (s *Store) flushBuffer(p *locks.Proc, st *backendStats, id int32) (wrote bool, err error) {
	bp := &s.pool
	d := bp.desc(id)
	d.content.Acquire(p, locks.LWShared)
	state := d.state.Load()
	if state&bmDirty == 0 || state&bmValid == 0 {
		d.content.Release(p)
		return false, nil
	}
	tag := d.tag
	// Clear BM_DIRTY before copying: a hint bit set after the copy dirties
	// the buffer again (PostgreSQL's BM_JUST_DIRTIED dance).
	d.clearFlags(bmDirty)
	buf := scratchPages.Get().(*[PageSize]byte)
	words := bp.mem[int(id)*wordsPerPage : int(id+1)*wordsPerPage]
	for i := range words {
		ne.PutUint64(buf[i*8:], atomic.LoadUint64(&words[i]))
	}
	d.content.Release(p)
	// WAL before data: the log must be durable up to the page's LSN
	// before the page may reach the file.
	if s.wal != nil {
		if lsn := wal.PageLSN(buf[:]); lsn != 0 {
			s.wal.Flush(p, lsn)
		}
	}
	r := (*s.rels.Load())[tag.rel]
	if r != nil {
		if p != nil {
			p.SetWaitEvent(locks.WaitEventDataFileWrite)
		}
		err = r.writePage(tag.block, buf[:])
		if p != nil {
			p.ClearWaitEvent()
		}
	}
	scratchPages.Put(buf)
	if err != nil {
		d.setFlags(bmDirty)
		return false, err
	}
	st.bufferWrites.Add(1)
	return true, nil
}

// dropRelationBuffers forgets every buffer of rel without writing it
// (DropRelationBuffers). Nobody may be using the relation; transient pins
// (checkpoint, eviction) are waited out.
func (bp *bufferPool) dropRelationBuffers(rel RelID) {
	for i := range bp.descs {
		d := &bp.descs[i]
		if d.rel.Load() != uint32(rel) {
			// Not rel's, and cannot become rel's: nobody reads a relation
			// being dropped.
			continue
		}
		for {
			state := d.lockHeader()
			tag := d.tag
			if state&bmTagValid == 0 || tag.rel != rel {
				d.unlockHeader(state)
				break
			}
			d.unlockHeader(state)
			_, part := bp.partition(tag)
			part.lock.Acquire(nil, locks.LWExclusive)
			state = d.lockHeader()
			if state&bmTagValid == 0 || d.tag != tag {
				d.unlockHeader(state)
				part.lock.Release(nil)
				continue
			}
			if state&bufRefMask != 0 {
				d.unlockHeader(state)
				part.lock.Release(nil)
				runtime.Gosched()
				continue
			}
			if part.m[tag] == int32(i) {
				delete(part.m, tag)
			}
			d.setTag(bufTag{})
			d.unlockHeader(0)
			part.lock.Release(nil)
			break
		}
	}
}

// flushAll writes every dirty buffer (BufferSync). Returns the first error.
func (s *Store) flushAll(p *locks.Proc, st *backendStats) error {
	_, err := s.writeBuffers(p, st, s.pool.dirtyBuffers(), nil)
	return err
}

// dirtyBuffers lists the buffers dirty now (BufferSync's first pass,
// which marks them BM_CHECKPOINT_NEEDED): a checkpoint writes these, not
// buffers dirtied after it began.
func (bp *bufferPool) dirtyBuffers() []int32 {
	var ids []int32
	for i := range bp.descs {
		if bp.descs[i].state.Load()&(bmDirty|bmValid) == bmDirty|bmValid {
			ids = append(ids, int32(i))
		}
	}
	return ids
}

// writeBuffers writes those of ids that are still dirty, calling pace
// (if not nil) with the fraction done after each; it returns how many it
// wrote and the first error.
func (s *Store) writeBuffers(p *locks.Proc, st *backendStats, ids []int32, pace func(float64)) (int, error) {
	bp := &s.pool
	var first error
	written := 0
	for n, i := range ids {
		d := &bp.descs[i]
		if d.state.Load()&(bmDirty|bmValid) != bmDirty|bmValid {
			continue
		}
		state := d.lockHeader()
		if state&(bmDirty|bmValid|bmTagValid) != bmDirty|bmValid|bmTagValid {
			d.unlockHeader(state)
			continue
		}
		d.unlockHeader(state + 1) // pin under the header lock
		wrote, err := s.flushBuffer(p, st, i)
		if err != nil && first == nil {
			first = err
		}
		if wrote {
			written++
		}
		d.unpin()
		if pace != nil {
			pace(float64(n+1) / float64(len(ids)))
		}
	}
	return written, first
}

package storage

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/vfs"
)

// Relation extension (PostgreSQL's hio.c RelationGetBufferForTuple and
// RelationAddExtraBlocks, bufmgr.c ExtendBufferedRelBy, md.c mdzeroextend).
//
// An inserter needs a page with room for its tuple. It tries, in order:
//
//  1. its cached target block for the relation (rd_targblock),
//  2. pages the free space map names, recording each page's real free
//     space when the map was too optimistic
//     (RecordAndGetPageWithFreeSpace),
//  3. extension: extend() below.
//
// extend takes the relation extension lock — the heavyweight lock
// ExtendTag(db, rel) in ExclusiveLock, shown in pg_locks as locktype
// "extend" and, while waited for, as wait event Lock/extend (the lock
// manager sets it) — first conditionally, as PostgreSQL 9.6+ does. If that
// fails the backend counts an extension-lock wait and waits (timed). In
// fixed and group mode it then searches the free space map again: whoever
// held the lock may have added pages for everyone; if a page with room is
// there it releases the lock and uses that page. Otherwise it adds pages at
// the end of the file; how many is decided by the extension policy
// (SetExtensionPolicy, read once per extension):
//
//   - single: 1 page (PostgreSQL before 9.6; no re-check after a wait, as
//     there are never extra pages to find);
//   - fixed:  relation_extension_blocks pages every time;
//   - group:  1 page if the lock was free at once; after a wait, 1 page for
//     the caller plus min(max_blocks, blocks × WaiterCount) extra pages,
//     where WaiterCount is locks.Manager.WaiterCount of the extension tag
//     (RelationExtensionLockWaiterCount = lock->nRequested, holder
//     included, so ≥ 1) — PostgreSQL 9.6's RelationAddExtraBlocks with its
//     ×20 and 512 defaults.
//
// The new pages are written to the file as zeroes BEFORE the relation's
// size moves (wait event IO/DataFileExtend), as mdzeroextend does: one
// pwrite for up to fallocate_threshold pages, fallocate(2) above (falling
// back to pwrite when the filesystem does not support it). They are
// initialised lazily: an all-zero page is PageIsNew, counts as empty in the
// free space map and is formatted by the first inserter under its content
// lock (addTuple), VACUUM (prunePage) or, for the caller's own page, when
// it is installed in the buffer pool without a read (RBM_ZERO_AND_LOCK) —
// a buffer already in the pool is never re-initialised, so a page can never
// be formatted over somebody's tuple. The first new page is the caller's
// and is NOT entered in the free space map; all the others are, at once and
// before the lock is released, so backends that wake up find room. Then
// the lock is released, before the caller reads and locks its page: the
// extension lock is held for the write alone, and no LWLock is ever held
// while waiting for it (PostgreSQL 13+ rule: nothing else is locked under
// the extension lock, so it cannot deadlock).
//
// Ordering of an extension by n pages starting at block first:
// write the file range → fsm.grow(first+n) (entries at category 0) →
// nblocks = first+n → fsm.set(extras) → unlock. So the free space map never
// names a page past the end of the file, and no reader sees nblocks cover a
// page that is not in the file.

// ExtensionMode is relation_extension_mode.
type ExtensionMode int32

const (
	// ExtendGroup (the default): the backend that gets a contended
	// extension lock extends for itself and for the waiters (PostgreSQL
	// 9.6–15).
	ExtendGroup ExtensionMode = iota
	// ExtendSingle: one page per extension (PostgreSQL before 9.6).
	ExtendSingle
	// ExtendFixed: relation_extension_blocks pages per extension.
	ExtendFixed
)

// String returns the setting's spelling: "single", "fixed" or "group".
func (m ExtensionMode) String() string {
	switch m {
	case ExtendSingle:
		return "single"
	case ExtendFixed:
		return "fixed"
	case ExtendGroup:
		return "group"
	}
	return fmt.Sprintf("ExtensionMode(%d)", int32(m))
}

// ParseExtensionMode parses a relation_extension_mode value.
func ParseExtensionMode(s string) (ExtensionMode, bool) {
	switch s {
	case "single":
		return ExtendSingle, true
	case "fixed":
		return ExtendFixed, true
	case "group":
		return ExtendGroup, true
	}
	return ExtendGroup, false
}

// Defaults of the extension policy (the settings' boot values).
const (
	DefaultExtensionBlocks             = 20
	DefaultExtensionMaxBlocks          = 512
	DefaultExtensionFallocateThreshold = 8
)

// extensionPolicy is one immutable set of extension settings.
type extensionPolicy struct {
	mode               ExtensionMode
	blocks, maxBlocks  uint32
	fallocateThreshold uint32
}

var defaultExtensionPolicy = &extensionPolicy{
	mode:               ExtendGroup,
	blocks:             DefaultExtensionBlocks,
	maxBlocks:          DefaultExtensionMaxBlocks,
	fallocateThreshold: DefaultExtensionFallocateThreshold,
}

// SetExtensionPolicy sets relation_extension_mode, relation_extension_blocks,
// relation_extension_max_blocks and relation_extension_fallocate_threshold
// together. It is atomic and may be called at any time (the settings'
// SIGHUP hooks call it while inserts run): each extension reads the policy
// once, so it uses either the old or the new values, never a mix. blocks
// and maxBlocks below 1 are taken as 1, a negative threshold as 0, and an
// unknown mode as group.
func (s *Store) SetExtensionPolicy(mode ExtensionMode, blocks, maxBlocks, fallocateThreshold int) {
	switch mode {
	case ExtendSingle, ExtendFixed, ExtendGroup:
	default:
		mode = ExtendGroup
	}
	clamp := func(v, lo int) uint32 {
		if v < lo {
			v = lo
		}
		if v > int(InvalidBlock>>1) {
			v = int(InvalidBlock >> 1)
		}
		return uint32(v)
	}
	s.extPolicy.Store(&extensionPolicy{
		mode:               mode,
		blocks:             clamp(blocks, 1),
		maxBlocks:          clamp(maxBlocks, 1),
		fallocateThreshold: clamp(fallocateThreshold, 0),
	})
}

// ExtensionPolicy returns the policy in force.
func (s *Store) ExtensionPolicy() (mode ExtensionMode, blocks, maxBlocks, fallocateThreshold int) {
	pol := s.policy()
	return pol.mode, int(pol.blocks), int(pol.maxBlocks), int(pol.fallocateThreshold)
}

func (s *Store) policy() *extensionPolicy {
	if pol := s.extPolicy.Load(); pol != nil {
		return pol
	}
	return defaultExtensionPolicy
}

// emptyPageCat is the FSM category of an empty page, new (all zero) or
// initialised: both have PageSize - header - one line pointer free.
var emptyPageCat = spaceToCat(PageSize - pageHeaderSize - itemIDSize)

// relExtStats are one relation's extension counters. They are updated
// while the relation's extension lock is held (waits and wait time right
// after it is granted), so they add no contention of their own.
type relExtStats struct {
	extensions atomic.Uint64
	pagesAdded atomic.Uint64
	waits      atomic.Uint64
	waitNs     atomic.Uint64
}

// RelExtensionStats are one heap relation's extension counters, for the
// pg_stat_lockd_extension view. They live in memory only (reset by a
// restart, kept by TRUNCATE).
type RelExtensionStats struct {
	Rel        RelID
	Extensions uint64        // extensions of the relation
	PagesAdded uint64        // pages they added
	Waits      uint64        // extension-lock acquisitions that had to wait
	WaitTime   time.Duration // total time spent waiting for the extension lock
}

// pagesToAdd is the number of pages one extension adds under pol (the
// caller's page included). waited reports that the extension lock was
// contended; tag is the extension lock's tag.
func (s *Store) pagesToAdd(pol *extensionPolicy, tag locks.LockTag, waited bool) uint32 {
	switch pol.mode {
	case ExtendFixed:
		return pol.blocks
	case ExtendGroup:
		if !waited {
			return 1
		}
		w := uint64(s.lm.WaiterCount(tag))
		extra := min(uint64(pol.blocks)*max(w, 1), uint64(pol.maxBlocks))
		return 1 + uint32(extra)
	}
	return 1
}

// extend adds pages to r (see above). It returns either a new block for
// the caller (fromFSM false) or, when another backend extended while this
// one waited for the lock, a block with at least minCat from the free
// space map (fromFSM true).
func (s *Store) extend(ctx context.Context, p *locks.Proc, st *backendStats, r *relation, minCat uint8) (blk uint32, fromFSM bool, err error) {
	pol := s.policy()
	tag := locks.ExtendTag(s.cfg.DatabaseOID, uint32(r.id))
	waited := false
	err = s.lm.Lock(ctx, p, tag, locks.ExclusiveLock, locks.LockOptions{NoWait: true})
	if errors.Is(err, locks.ErrLockNotAvailable) {
		waited = true
		st.extensionLockWaits.Add(1)
		start := time.Now()
		err = s.lm.Lock(ctx, p, tag, locks.ExclusiveLock, locks.LockOptions{})
		ns := uint64(time.Since(start))
		st.extensionLockWaitNs.Add(ns)
		r.ext.waits.Add(1)
		r.ext.waitNs.Add(ns)
		if err == nil && pol.mode != ExtendSingle {
			if b := r.fsm.search(minCat); b != InvalidBlock {
				s.lm.Unlock(p, tag, locks.ExclusiveLock, false)
				st.extensionWaitFSMHits.Add(1)
				return b, true, nil
			}
		}
	}
	if err != nil {
		return InvalidBlock, false, err
	}
	defer s.lm.Unlock(p, tag, locks.ExclusiveLock, false)

	n := s.pagesToAdd(pol, tag, waited)
	first := r.nblocks.Load()
	if room := uint64(InvalidBlock) - 1 - uint64(first); uint64(n) > room {
		if room == 0 {
			return InvalidBlock, false, errRelationTooLarge(r)
		}
		n = uint32(room)
	}
	if p != nil {
		p.SetWaitEvent(locks.WaitEventDataFileExtend)
	}
	err = s.zeroExtend(r, first, n, pol.fallocateThreshold)
	if p != nil {
		p.ClearWaitEvent()
	}
	if err != nil {
		return InvalidBlock, false, err
	}
	r.fsm.grow(first + n)
	r.nblocks.Store(first + n)
	for b := first + 1; b < first+n; b++ {
		r.fsm.set(b, emptyPageCat)
	}
	st.extensions.Add(1)
	st.pagesAdded.Add(uint64(n))
	st.extensionSizes[extensionSizeBucket(n)].Add(1)
	r.ext.extensions.Add(1)
	r.ext.pagesAdded.Add(uint64(n))
	return first, false, nil
}

// zeroPages is a read-only buffer of zeroes for extension writes.
var zeroPages [zeroChunkPages * PageSize]byte

// zeroChunkPages is the most pages one pwrite of zeroes covers; longer
// zero-fills loop (PostgreSQL's pg_pwrite_zeros loops over a bounded
// iovec array the same way).
const zeroChunkPages = 64

// fallocateFile is fallocate(2) mode 0 on f's descriptor; a variable so
// that tests can make it fail.
var fallocateFile = func(f vfs.File, off, size int64) error { return f.Allocate(off, size) }

// zeroExtend writes n zeroed pages at block first of r (mdzeroextend):
// pwrite of zeroes for n ≤ threshold, fallocate above, with a fall-back to
// pwrite when the filesystem does not support fallocate. Writes to a
// dropped relation are discarded.
func (s *Store) zeroExtend(r *relation, first, n, threshold uint32) error {
	r.ioMu.RLock()
	defer r.ioMu.RUnlock()
	if r.dropped {
		return nil
	}
	off := int64(first) * PageSize
	size := int64(n) * PageSize
	if n > threshold && !s.noFallocate.Load() {
		err := fallocateFile(r.file, off, size)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EOPNOTSUPP) && !errors.Is(err, syscall.ENOSYS) && !errors.Is(err, syscall.EINVAL) {
			return s.extendError(r, err)
		}
		// Not supported here: write zeroes from now on.
		s.noFallocate.Store(true)
	}
	for size > 0 {
		chunk := min(size, int64(len(zeroPages)))
		if _, err := r.file.WriteAt(zeroPages[:chunk], off); err != nil {
			// A partly written extension leaves zero pages past the size
			// the relation keeps: harmless, and overwritten by the next.
			return s.extendError(r, err)
		}
		off += chunk
		size -= chunk
	}
	return nil
}

// extendError is the error of a failed extension as PostgreSQL reports it
// (mdextend): 53100 for a full disk, with its hint; 58030 otherwise. The
// statement fails; nothing is corrupted, because the relation's size and
// free space map move only after the pages are in the file.
func (s *Store) extendError(r *relation, err error) error {
	name := "base/" + strconv.FormatUint(uint64(r.id), 10)
	var errno syscall.Errno
	msg := err.Error()
	if errors.As(err, &errno) {
		msg = errno.Error()
		if msg != "" {
			msg = strings.ToUpper(msg[:1]) + msg[1:]
		}
	}
	code := pgerr.IOError
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		code = pgerr.DiskFull
	}
	return pgerr.New(code, "could not extend file \"%s\": %s", name, msg).WithHint("Check free disk space.")
}

// getBufferForTuple returns a pinned buffer, locked exclusively, whose
// page has at least need bytes free, plus the fillfactor reserve
// (RelationGetBufferForTuple). need includes alignment, not the line
// pointer. No buffer lock may be held by the caller.
func (s *Store) getBufferForTuple(ctx context.Context, p *locks.Proc, b *backend, shared bool, r *relation, need, fillfactor int) (int32, uint32, error) {
	st := &b.stats
	if fillfactor <= 0 || fillfactor > 100 {
		fillfactor = 100
	}
	target := need + PageSize*(100-fillfactor)/100
	minCat := neededToCat(target)
	blk := b.getTarget(r, shared)
	fromTarget := blk != InvalidBlock
	if !fromTarget {
		blk = r.fsm.search(minCat)
	}
	fresh, extended := false, false
	for {
		for blk != InvalidBlock {
			// A page we just added is empty in the file too: no need to
			// read it.
			id, err := s.readBufferMode(p, st, r, blk, fresh)
			if err != nil {
				return -1, 0, err
			}
			d := s.pool.desc(id)
			d.content.Acquire(p, locks.LWExclusive)
			pg := s.pool.page(id)
			free := pg.freeSpace()
			if free >= target || (fresh && free >= need) {
				b.setTarget(r, shared, blk)
				switch {
				case extended:
					st.fsmMisses.Add(1)
				case fromTarget:
					st.targetBlockHits.Add(1)
				default:
					st.fsmHits.Add(1)
				}
				return id, blk, nil
			}
			d.content.Release(p)
			d.unpin()
			r.fsm.set(blk, spaceToCat(free))
			if fresh {
				// Someone filled our new page before we locked it (only
				// possible if VACUUM put it in the FSM); extend again.
				break
			}
			fromTarget = false
			blk = r.fsm.search(minCat)
		}
		if err := ctx.Err(); err != nil {
			return -1, 0, context.Cause(ctx)
		}
		nb, fromFSM, err := s.extend(ctx, p, st, r, minCat)
		if err != nil {
			return -1, 0, err
		}
		blk, fresh, fromTarget = nb, !fromFSM, false
		if fresh {
			extended = true
		}
	}
}

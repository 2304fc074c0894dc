package storage

import (
	"context"
	"errors"

	"lockd/locks"
)

// Relation extension (PostgreSQL's hio.c RelationGetBufferForTuple and
// RelationAddExtraBlocks, bufmgr.c ExtendBufferedRelBy).
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
// fails the backend counts an extension-lock wait, waits, and on getting
// the lock searches the free space map again: whoever held the lock may
// have added pages for everyone. Only then does it add pages at the end of
// the file: pagesToAdd decides how many (one for now); they are written to
// the file, initialised, with one pwrite each (wait event IO/
// DataFileExtend) BEFORE the relation's size moves, so no reader, buffer
// or FSM entry ever names a page past the end of the file. All but the
// first go into the free space map for other backends; the first is the
// caller's. The lock is released before the caller reads and locks the
// new page, so the extension lock is held for the write alone, and no
// LWLock is ever held while waiting for it (PostgreSQL 13+ rule: nothing
// else is locked under the extension lock, so it cannot deadlock).
//
// The seam for relation_extension_mode (single / fixed / group) is
// pagesToAdd. Group mode needs the number of backends waiting for the
// extension lock, PostgreSQL's RelationExtensionLockWaiterCount =
// LockWaiterCount(tag) = lock->nRequested of the LOCK object (holder
// included). locks.Manager does not export it yet; it would be a method
// like
//
//	func (m *Manager) WaiterCount(tag LockTag) int
//
// that hashes tag to its partition, takes that partition's LockManager
// LWLock shared, and returns part.locks[tag].nRequested (0 if absent).

// emptyPage is an initialised empty heap page, written by extension. It is
// never modified.
var emptyPage = func() []byte {
	b := make([]byte, PageSize)
	initPage(b)
	return b
}()

// emptyPageCat is the FSM category of an empty page.
var emptyPageCat = spaceToCat(page(emptyPage).freeSpace())

// pagesToAdd is the number of pages one extension adds (the extension
// strategy seam). waited reports that the extension lock was contended.
// relation_extension_mode = single: always 1 (PostgreSQL before 9.6).
func (s *Store) pagesToAdd(p *locks.Proc, r *relation, waited bool) uint32 {
	return 1
}

// extend adds pages to r (see above). It returns either a new block for
// the caller (fromFSM false) or, when another backend extended while this
// one waited for the lock, a block with at least minCat from the free
// space map (fromFSM true).
func (s *Store) extend(ctx context.Context, p *locks.Proc, st *backendStats, r *relation, minCat uint8) (blk uint32, fromFSM bool, err error) {
	tag := locks.ExtendTag(s.cfg.DatabaseOID, uint32(r.id))
	waited := false
	err = s.lm.Lock(ctx, p, tag, locks.ExclusiveLock, locks.LockOptions{NoWait: true})
	if errors.Is(err, locks.ErrLockNotAvailable) {
		waited = true
		st.extensionLockWaits.Add(1)
		err = s.lm.Lock(ctx, p, tag, locks.ExclusiveLock, locks.LockOptions{})
		if err == nil {
			if b := r.fsm.search(minCat); b != InvalidBlock {
				s.lm.Unlock(p, tag, locks.ExclusiveLock, false)
				return b, true, nil
			}
		}
	}
	if err != nil {
		return InvalidBlock, false, err
	}
	defer s.lm.Unlock(p, tag, locks.ExclusiveLock, false)

	n := s.pagesToAdd(p, r, waited)
	first := r.nblocks.Load()
	if uint64(first)+uint64(n) >= uint64(InvalidBlock) {
		return InvalidBlock, false, errRelationTooLarge(r)
	}
	if p != nil {
		p.SetWaitEvent(locks.WaitEventDataFileExtend)
	}
	for i := uint32(0); i < n && err == nil; i++ {
		err = r.writePage(first+i, emptyPage)
	}
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
	return first, false, nil
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
	if blk == InvalidBlock {
		blk = r.fsm.search(minCat)
	}
	fresh := false
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
				return id, blk, nil
			}
			d.content.Release(p)
			d.unpin()
			r.fsm.set(blk, spaceToCat(free))
			if fresh {
				// Someone filled our new page before we locked it (only
				// possible if it reached the FSM); extend again.
				break
			}
			blk = r.fsm.search(minCat)
		}
		if err := ctx.Err(); err != nil {
			return -1, 0, context.Cause(ctx)
		}
		nb, fromFSM, err := s.extend(ctx, p, st, r, minCat)
		if err != nil {
			return -1, 0, err
		}
		blk, fresh = nb, !fromFSM
	}
}

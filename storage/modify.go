package storage

import (
	"context"

	"lockd/locks"
	"lockd/txn"
)

// Update and Delete (heap_update, heap_delete). See locktuple.go for how
// they treat row lockers and wait.

// Delete deletes the tuple at tid (heap_delete) for t's current
// (sub)transaction, at FOR UPDATE strength: under the page's exclusive
// content lock it runs t.SatisfiesUpdate and, if lockers or an updater
// are in the way, waits for them as wait says (every row lock conflicts
// with a delete); then xmax = the (sub)transaction's xid — or a multixact
// keeping its own earlier row locks — with cmax = t.CommandID(). Other
// results change nothing (see UpdateOutcome).
func (s *Store) Delete(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, tid TID, wait RowWait) (UpdateOutcome, error) {
	r, err := s.relation(rel)
	if err != nil {
		return UpdateOutcome{}, err
	}
	if tid.Block >= r.nblocks.Load() {
		return UpdateOutcome{Result: txn.TMInvisible}, nil
	}
	if _, err := xidOf(t); err != nil {
		return UpdateOutcome{}, err
	}
	b, _ := s.backend(p)
	id, err := s.readBuffer(p, &b.stats, r, tid.Block)
	if err != nil {
		return UpdateOutcome{}, err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	pg := s.pool.page(id)
	mode := txn.LockTupleExclusive
	m := modifier{s: s, p: p, t: t, d: d, pg: pg, tid: tid, mode: mode, wait: wait, tl: s.newTupleLock(p, rel, tid, mode, wait)}
	defer m.tl.release()
	m.lock()
	defer m.unlock()
	tup, h, out, err := m.resolve(ctx)
	if err != nil || out.Result != txn.TMOk {
		return out, err
	}
	xmax, f, f2, err := t.NewXmax(&h, mode, true)
	if err != nil {
		return UpdateOutcome{}, err
	}
	writeXmax(tup, &h, xmax, f, f2, t.CommandID(), xmaxDelete, tid, tid)
	r.noteMulti(xmax, f)
	pg.setPrunable(t.CurrentXid())
	d.setFlags(bmDirty)
	r.clearAllVisible(tid.Block)
	if s.logging() {
		s.logHeapHeader(p, xlogHeapDelete, r, tid.Block, pg, int(tid.Offset), t.CurrentXid())
	}
	return out, nil
}

// Update replaces the tuple at tid with a new version holding newData
// (heap_update) for t's current (sub)transaction. keysChanged says whether
// the new version changes a column of a unique index (or the primary key):
// then the update has FOR UPDATE strength and waits for every locker,
// otherwise FOR NO KEY UPDATE strength, which key-share lockers do not
// block — they stay lockers of the old version (in a multixact with this
// update) and become lockers of the new one, as in PostgreSQL. Conflicting
// lockers and updaters are waited for as wait says; results other than
// TMOk change nothing (see UpdateOutcome).
//
// On TMOk the new version (xmin = the current xid, cmin = t.CommandID())
// goes on the same page if it has room — fillfactor only limits inserts,
// as in PostgreSQL — else on a page found as Insert finds one; the old
// version gets xmax, cmax, the Updated flag and ctid = the new TID. While
// the other page is found, the old version is row-locked by t, so nobody
// can change it in between (heap_update's temporary lock).
//
// hotOK says the update changes no indexed column (the caller compares
// them as heap_update's HeapDetermineColumnsInfo does). Then a new
// version on the same page is a heap-only tuple (hot.go) and out.HOT is
// set: the caller adds no index entries. Otherwise the caller inserts
// index entries for the new TID.
func (s *Store) Update(ctx context.Context, p *locks.Proc, t *txn.Txn, rel RelID, tid TID, newData []byte, fillfactor int, keysChanged, hotOK bool, wait RowWait) (UpdateOutcome, error) {
	if len(newData) > MaxTupleData {
		return UpdateOutcome{}, errRowTooBig(len(newData))
	}
	r, err := s.relation(rel)
	if err != nil {
		return UpdateOutcome{}, err
	}
	if tid.Block >= r.nblocks.Load() {
		return UpdateOutcome{Result: txn.TMInvisible}, nil
	}
	xid, err := xidOf(t)
	if err != nil {
		return UpdateOutcome{}, err
	}
	cid := t.CommandID()
	b, shared := s.backend(p)
	id, err := s.readBuffer(p, &b.stats, r, tid.Block)
	if err != nil {
		return UpdateOutcome{}, err
	}
	d := s.pool.desc(id)
	defer d.unpin()
	pg := s.pool.page(id)
	need := tupleSpace(len(newData))
	mode := txn.LockTupleNoKeyExclusive
	if keysChanged {
		mode = txn.LockTupleExclusive
	}
	m := modifier{s: s, p: p, t: t, d: d, pg: pg, tid: tid, mode: mode, keyIntact: !keysChanged, isUpdate: true, wait: wait,
		tl: s.newTupleLock(p, rel, tid, mode, wait)}
	defer m.tl.release()

	m.lock()
	defer m.unlock()
	var newHdr txn.TupleHeader // fixed by the first successful check
	haveHdr := false
	for {
		tup, h, out, err := m.resolve(ctx)
		if err != nil || out.Result != txn.TMOk {
			return out, err
		}
		if !haveHdr {
			newHdr, haveHdr = s.newVersionHeader(xid, cid, &h, m.inherit), true
		}
		if pg.freeSpace() >= need {
			// Same page. addTuple may not move tup (no compaction).
			xmax, f, f2, err := t.NewXmax(&h, mode, true)
			if err != nil {
				return UpdateOutcome{}, err
			}
			nh := newHdr
			if hotOK {
				nh.Flags2 |= txn.HeapOnly
			}
			off := pg.addTuple(&nh, true, TID{Block: tid.Block}, newData)
			if off == 0 {
				panic("storage: new version did not fit a page with enough free space")
			}
			nt := TID{Block: tid.Block, Offset: uint16(off)}
			writeXmax(tup, &h, xmax, f, f2, cid, xmaxUpdate, tid, nt)
			if hotOK {
				flagsWord(tup).Or(uint32(txn.HotUpdated) << 16)
				h.Flags2 |= txn.HotUpdated
			}
			r.noteMulti(xmax, f)
			r.noteMulti(newHdr.Xmax, newHdr.Flags)
			pg.setPrunable(xid)
			d.setFlags(bmDirty)
			r.clearAllVisible(tid.Block)
			if s.logging() {
				s.logHeapUpdate(p, r, tid.Block, pg, int(tid.Offset), tid.Block, pg, off, xid)
			}
			out.NewTID, out.HOT = nt, hotOK
			return out, nil
		}

		// Another page. Lock the old version for ourselves first, so that
		// nobody updates it while its page is unlocked; then find a page
		// without holding the old page's lock (extension may wait for a
		// heavyweight lock), and lock both in block order.
		lx, lf, lf2, err := t.NewXmax(&h, mode, false)
		if err != nil {
			return UpdateOutcome{}, err
		}
		writeXmax(tup, &h, lx, lf, lf2, cid, xmaxLock, tid, TID{})
		r.noteMulti(lx, lf)
		d.setFlags(bmDirty)
		if s.logging() {
			s.logHeapHeader(p, xlogHeapLock, r, tid.Block, pg, int(tid.Offset), xid)
		}
		m.unlock()
		nid, nblk, err := s.getBufferForTuple(ctx, p, b, shared, r, need, fillfactor)
		if err != nil {
			return UpdateOutcome{}, err
		}
		nd := s.pool.desc(nid)
		if nblk == tid.Block {
			// The old page itself has room now; we hold its lock.
			s.pool.unpinExtra(nd)
			m.locked = true
			continue
		}
		npg := s.pool.page(nid)
		if nblk > tid.Block {
			nd.content.Release(p)
			m.lock()
			nd.content.Acquire(p, locks.LWExclusive)
		} else {
			m.lock()
		}
		tup = pg.tuple(int(tid.Offset))
		if tup == nil || npg.freeSpace() < need {
			nd.content.Release(p)
			nd.unpin()
			if tup == nil {
				return UpdateOutcome{Result: txn.TMInvisible}, nil
			}
			continue // the new page filled up meanwhile; old page locked
		}
		readHeader(tup, &h) // our lock, perhaps with key-share lockers added
		xmax, f, f2, err := t.NewXmax(&h, mode, true)
		if err != nil {
			nd.content.Release(p)
			nd.unpin()
			return UpdateOutcome{}, err
		}
		off := npg.addTuple(&newHdr, true, TID{Block: nblk}, newData)
		if off == 0 {
			panic("storage: new version did not fit a page with enough free space")
		}
		nt := TID{Block: nblk, Offset: uint16(off)}
		writeXmax(tup, &h, xmax, f, f2, cid, xmaxUpdate, tid, nt)
		r.noteMulti(xmax, f)
		r.noteMulti(newHdr.Xmax, newHdr.Flags)
		pg.setPrunable(xid)
		pg.setFull()
		nd.setFlags(bmDirty)
		d.setFlags(bmDirty)
		r.clearAllVisible(tid.Block)
		r.clearAllVisible(nblk)
		if s.logging() {
			s.logHeapUpdate(p, r, tid.Block, pg, int(tid.Offset), nblk, npg, off, xid)
		}
		nd.content.Release(p)
		nd.unpin()
		return UpdateOutcome{Result: txn.TMOk, NewTID: nt}, nil
	}
}

// newVersionHeader is the header of an update's new version: it inherits
// the old version's key-share lockers (heap_update's xmax_new_tuple), so a
// key change of the new version waits for them too.
func (s *Store) newVersionHeader(xid txn.Xid, cid txn.CommandID, old *txn.TupleHeader, inherit bool) txn.TupleHeader {
	h := txn.TupleHeader{Xmin: xid, Cmin: cid, Flags: txn.XmaxInvalid}
	if !inherit || old.Flags&txn.XmaxInvalid != 0 || !old.Xmax.IsValid() {
		return h
	}
	h.Xmax, h.Flags = old.Xmax, txn.XmaxKeyShrLock|txn.XmaxLockOnly
	if old.XmaxIsMulti() {
		h.Flags, h.Flags2 = s.tm.MultiHintBits(txn.MultiXactID(old.Xmax))
	}
	return h
}

// unpinExtra drops a second pin taken on a buffer the caller already pins
// and whose content lock it now holds once (getBufferForTuple returned the
// caller's own page): the lock stays, one pin goes.
func (bp *bufferPool) unpinExtra(d *bufferDesc) { d.unpin() }

// modifier is the shared part of Update and Delete: deciding, with the
// page locked, whether the tuple may be changed, waiting for conflicting
// transactions when needed.
type modifier struct {
	s         *Store
	p         *locks.Proc
	t         *txn.Txn
	d         *bufferDesc
	pg        page
	tid       TID
	mode      txn.TupleLockMode
	keyIntact bool // an update that changes no key column
	isUpdate  bool
	wait      RowWait
	tl        tupleLock
	locked    bool // holds d's content lock exclusively
	inherit   bool // key-share lockers remain: the new version keeps them
}

func (m *modifier) lock() {
	m.d.content.Acquire(m.p, locks.LWExclusive)
	m.locked = true
}

func (m *modifier) unlock() {
	if m.locked {
		m.d.content.Release(m.p)
		m.locked = false
	}
}

// resolve is heap_update's and heap_delete's handling of the
// HeapTupleSatisfiesUpdate result. It returns with the content lock held
// (also on error), the tuple and its header on TMOk, or the outcome to
// report.
func (m *modifier) resolve(ctx context.Context) (tup []byte, h txn.TupleHeader, out UpdateOutcome, err error) {
	s, t := m.s, m.t
	status := m.mode.UpdateStatus()
	for {
		var res txn.UpdateResult
		tup, h, res, _ = readTuple(m.d, m.pg, m.tid.Offset, t)
		switch res {
		case txn.TMOk:
			m.inherit = false
			return tup, h, UpdateOutcome{Result: txn.TMOk}, nil
		case txn.TMInvisible:
			return nil, h, UpdateOutcome{Result: txn.TMInvisible}, nil
		case txn.TMSelfModified, txn.TMUpdated, txn.TMDeleted:
			return tup, h, s.failedOutcome(res, tup, &h), nil
		}

		// TMBeingModified: lockers or an updater run.
		before := h
		ctid := tupleCtid(tup)
		skipCheck := false
		switch {
		case before.XmaxIsMulti():
			conflict, currentIsMember := t.MultiConflicts(&before, m.mode)
			if !conflict {
				m.inherit = m.isUpdate && m.keyIntact
				break
			}
			if m.wait.Policy != WaitBlock {
				return tup, h, s.blockedOutcome(txn.TMBeingModified, &before, ctid), nil
			}
			m.unlock()
			if !currentIsMember {
				if _, err := m.tl.acquire(ctx, m.wait); err != nil {
					m.lock()
					return tup, h, UpdateOutcome{}, err
				}
			}
			remain, err := t.WaitForMulti(ctx, &before, status, m.wait.Lock, false)
			m.lock()
			if err != nil {
				return tup, h, UpdateOutcome{}, err
			}
			if m.changed(&before) {
				continue
			}
			m.inherit = m.isUpdate && remain != 0
		case t.IsCurrent(before.Xmax):
			// We are the only locker: no wait, keep our lock.
			m.inherit = m.isUpdate
			skipCheck = true
		case m.isUpdate && m.keyIntact && before.XmaxLockedOnly() &&
			before.Flags&txn.XmaxLockMask == txn.XmaxKeyShrLock:
			// A key-share locker and we change no key: no wait, keep it.
			m.inherit = true
			skipCheck = true
		default:
			if m.wait.Policy != WaitBlock {
				return tup, h, s.blockedOutcome(txn.TMBeingModified, &before, ctid), nil
			}
			m.unlock()
			if _, err := m.tl.acquire(ctx, m.wait); err != nil {
				m.lock()
				return tup, h, UpdateOutcome{}, err
			}
			err := t.WaitForOptions(ctx, before.Xmax, m.wait.Lock)
			m.lock()
			if err != nil {
				return tup, h, UpdateOutcome{}, err
			}
			if m.changed(&before) {
				continue
			}
			m.inherit = false
		}
		// Re-read with hints: may we go ahead?
		tup = m.pg.tuple(int(m.tid.Offset))
		if tup == nil {
			return nil, h, UpdateOutcome{Result: txn.TMInvisible}, nil
		}
		readHeader(tup, &h)
		if !skipCheck && !before.XmaxIsMulti() {
			hb := h.Flags
			t.SatisfiesUpdate(&h) // sets the xmax hint bits (UpdateXmaxHintBits)
			writeHints(m.d, tup, hb, h.Flags)
		}
		if skipCheck || h.Flags&txn.XmaxInvalid != 0 || h.XmaxLockedOnly() || t.IsOnlyLocked(&h) {
			return tup, h, UpdateOutcome{Result: txn.TMOk}, nil
		}
		r := txn.TMDeleted
		if h.Flags&txn.Updated != 0 {
			r = txn.TMUpdated
		}
		return tup, h, s.failedOutcome(r, tup, &h), nil
	}
}

// changed reports whether the tuple's xmax changed while the page was
// unlocked; the caller starts over.
func (m *modifier) changed(before *txn.TupleHeader) bool {
	tup := m.pg.tuple(int(m.tid.Offset))
	if tup == nil {
		return true
	}
	var now txn.TupleHeader
	readHeader(tup, &now)
	return txn.XmaxChanged(&now, before)
}

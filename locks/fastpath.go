package locks

// Fast path (PostgreSQL 9.2+, with PostgreSQL 18's slot groups).
//
// Most lock traffic is weak relation locks (AccessShare, RowShare,
// RowExclusive) that conflict with nothing but the four strong modes (Share
// and above). A backend records those in its own slots, guarded by its own
// LockFastPath LWLock, without touching the shared table or any partition
// lock: acquire + release is two uncontended LWLock round trips on the
// backend's own cache lines.
//
// Slots: groups of 16. A relation may only use the group
// (relid × 49157) & (groups − 1) (modulo when groups is not a power of two,
// which only an explicit fastpath_lock_slots can produce); inside the group
// a linear search finds its slot or a free one. Each group keeps one uint64
// of mode bits, 3 per slot. fastpath_lock_slots = -1 derives the group count
// as PostgreSQL 18: max(1, min(nextPow2(max_locks_per_transaction)/16, 1024)).
//
// Strong locks: 1024 counters indexed by the tag hash count strong locks
// held or being acquired. A weak locker checks its counter under its own
// fast-path LWLock and falls back to the shared table when it is non-zero.
// A strong locker first increments the counter, then visits every backend's
// fast-path LWLock and moves that backend's matching entries into the
// shared table (on the backend's behalf, granted), so it — and the deadlock
// detector — sees every conflicting weak lock.
//
// Memory ordering: the counter increment and the weak locker's read are
// sequentially consistent atomics, and both sides access the slots only
// while holding the owning backend's fast-path LWLock. Either the weak
// locker's critical section comes first — then the strong locker, taking
// that LWLock afterwards, sees the slot and transfers it — or the strong
// locker's increment precedes the weak locker's read of the counter, which
// then sees it non-zero and does not use the slot.
//
// The backend's own virtual-transaction lock (ExclusiveLock on its VXID) is
// also kept here; whoever wants to wait for that VXID transfers it first.

const (
	fpSlotsPerGroup  = 16
	fpMaxGroups      = 1024
	fpBitsPerSlot    = 3
	strongPartitions = 1024
)

type fastPath struct {
	lock   LWLock // tranche LockFastPath
	groups uint32 // 0 = fast path disabled for this backend
	mask   uint32 // groups-1 when groups is a power of two
	pow2   bool

	bits     []uint64 // per group, 3 mode bits per slot; guarded by lock
	db       []uint32 // per slot; guarded by lock
	rel      []uint32 // per slot; guarded by lock
	vxidHeld bool     // ExclusiveLock on own VXID held here; guarded by lock

	// localUse[g] counts used slots of group g. Owner only: it may
	// overestimate after a strong locker transferred entries away, and is
	// recomputed whenever the owner releases a fast-path lock of the group.
	localUse []uint8
}

// fastPathGroups turns a fastpath_lock_slots value into a group count.
func fastPathGroups(setting, maxLocksPerTx int) int {
	var g int
	switch {
	case setting == 0:
		return 0
	case setting < 0:
		n := 1
		for n < maxLocksPerTx {
			n <<= 1
		}
		g = n / fpSlotsPerGroup
	default:
		g = (setting + fpSlotsPerGroup - 1) / fpSlotsPerGroup
	}
	return max(1, min(g, fpMaxGroups))
}

func (f *fastPath) init(groups int) {
	f.lock.Init(TrancheLockFastPath)
	f.groups = uint32(groups)
	f.pow2 = groups&(groups-1) == 0
	if groups > 0 {
		f.mask = uint32(groups - 1)
	}
	f.bits = make([]uint64, groups)
	f.db = make([]uint32, groups*fpSlotsPerGroup)
	f.rel = make([]uint32, groups*fpSlotsPerGroup)
	f.localUse = make([]uint8, groups)
}

func (f *fastPath) group(rel uint32) uint32 {
	h := rel * 49157
	if f.pow2 {
		return h & f.mask
	}
	return h % f.groups
}

func eligibleForFastPath(tag LockTag, mode LockMode) bool {
	return tag.Type == LockTagRelation && tag.Method == DefaultLockMethod && tag.Field1 != 0 &&
		mode < ShareUpdateExclusiveLock
}

func conflictsWithFastPath(tag LockTag, mode LockMode) bool {
	return tag.Type == LockTagRelation && tag.Method == DefaultLockMethod && tag.Field1 != 0 &&
		mode > ShareUpdateExclusiveLock
}

func slotModeBit(slot int, mode LockMode) uint64 {
	return 1 << (slot*fpBitsPerSlot + int(mode) - 1)
}

// grantSlot records mode on rel in group g (FastPathGrantRelationLock).
// Caller holds f.lock.
func (f *fastPath) grantSlot(g uint32, db, rel uint32, mode LockMode) bool {
	base := int(g) * fpSlotsPerGroup
	bits := f.bits[g]
	unused := -1
	for i := 0; i < fpSlotsPerGroup; i++ {
		if (bits>>(i*fpBitsPerSlot))&7 == 0 {
			if unused < 0 {
				unused = i
			}
			continue
		}
		if f.rel[base+i] == rel && f.db[base+i] == db {
			f.bits[g] = bits | slotModeBit(i, mode)
			return true
		}
	}
	if unused < 0 {
		return false
	}
	f.rel[base+unused], f.db[base+unused] = rel, db
	f.bits[g] = bits | slotModeBit(unused, mode)
	f.localUse[g]++
	return true
}

// ungrantSlot clears mode on rel (FastPathUnGrantRelationLock), recomputing
// the group's use count. It returns false when the entry is gone (moved to
// the shared table by a strong locker). Caller holds f.lock.
func (f *fastPath) ungrantSlot(db, rel uint32, mode LockMode) bool {
	g := f.group(rel)
	base := int(g) * fpSlotsPerGroup
	bits := f.bits[g]
	found := false
	used := 0
	for i := 0; i < fpSlotsPerGroup; i++ {
		sb := (bits >> (i * fpBitsPerSlot)) & 7
		if sb == 0 {
			continue
		}
		if !found && f.rel[base+i] == rel && f.db[base+i] == db && bits&slotModeBit(i, mode) != 0 {
			bits &^= slotModeBit(i, mode)
			found = true
			if (bits>>(i*fpBitsPerSlot))&7 == 0 {
				continue
			}
		}
		used++
	}
	f.bits[g] = bits
	f.localUse[g] = uint8(used)
	return found
}

// fastPathGrant tries to take a weak relation lock in p's own slots.
func (m *Manager) fastPathGrant(p *Proc, tag LockTag, mode LockMode, hash uint32) bool {
	f := &p.fp
	g := f.group(tag.Field2)
	if f.localUse[g] >= fpSlotsPerGroup {
		p.stats.fp.fallbackFull.Add(1)
		return false
	}
	f.lock.Acquire(p, LWExclusive)
	if m.strong[hash%strongPartitions].Load() != 0 {
		f.lock.Release(p)
		p.stats.fp.fallbackStrong.Add(1)
		return false
	}
	ok := f.grantSlot(g, tag.Field1, tag.Field2, mode)
	f.lock.Release(p)
	if !ok {
		p.stats.fp.fallbackFull.Add(1)
	}
	return ok
}

// transferRelationLocks moves every backend's fast-path locks on the
// relation named by tag into the shared table (FastPathTransferRelationLocks).
// p is the strong locker, already counted in the strong-lock counters.
func (m *Manager) transferRelationLocks(p *Proc, tag LockTag, hash uint32) error {
	part := m.part(hash)
	db, rel := tag.Field1, tag.Field2
	for i := range m.procs {
		q := m.procs[i].Load()
		if q == nil || q.fp.groups == 0 {
			continue
		}
		f := &q.fp
		g := f.group(rel)
		f.lock.Acquire(p, LWExclusive)
		bits := f.bits[g]
		if bits == 0 {
			f.lock.Release(p)
			continue
		}
		base := int(g) * fpSlotsPerGroup
		for j := 0; j < fpSlotsPerGroup; j++ {
			sb := (bits >> (j * fpBitsPerSlot)) & 7
			if sb == 0 || f.rel[base+j] != rel || f.db[base+j] != db {
				continue
			}
			part.lock.Acquire(p, LWExclusive)
			for mode := AccessShareLock; mode <= RowExclusiveLock; mode++ {
				if sb&(1<<(mode-1)) == 0 {
					continue
				}
				lock, pl := m.setupLock(part, q, tag, hash, mode)
				if lock == nil {
					part.lock.Release(p)
					f.lock.Release(p)
					return errOutOfSharedMemory()
				}
				lock.grant(pl, mode)
				f.bits[g] &^= slotModeBit(j, mode)
				p.stats.fp.transfersDone.Add(1)
				q.stats.fp.transfersOut.Add(1)
			}
			part.lock.Release(p)
			break // a relation occupies at most one slot of its group
		}
		f.lock.Release(p)
	}
	return nil
}

// transferVXID moves the ExclusiveLock of the backend owning the virtual
// transaction named by tag into the shared table, so that p can wait on it.
// If that virtual transaction has ended, nothing is moved and p's request
// will be granted at once (VirtualXactLock).
func (m *Manager) transferVXID(p *Proc, tag LockTag, hash uint32) error {
	n := int32(tag.Field1)
	if n < 0 || int(n) >= len(m.procs) {
		return nil
	}
	q := m.procs[n].Load()
	if q == nil {
		return nil
	}
	q.fp.lock.Acquire(p, LWExclusive)
	defer q.fp.lock.Release(p)
	if !q.fp.vxidHeld || q.lxid.Load() != tag.Field2 {
		return nil
	}
	part := m.part(hash)
	part.lock.Acquire(p, LWExclusive)
	lock, pl := m.setupLock(part, q, tag, hash, ExclusiveLock)
	if lock == nil {
		part.lock.Release(p)
		return errOutOfSharedMemory()
	}
	lock.grant(pl, ExclusiveLock)
	part.lock.Release(p)
	q.fp.vxidHeld = false
	return nil
}

// BeginVirtualXact starts virtual transaction p.Number()/lxid: p takes
// ExclusiveLock on its VXID through the fast path, so that others can wait
// for the transaction to end. ReleaseTransactionLocks ends it.
func (m *Manager) BeginVirtualXact(p *Proc, lxid uint32) {
	if p.lxid.Load() != 0 {
		m.endVirtualXact(p)
	}
	p.fp.lock.Acquire(p, LWExclusive)
	p.fp.vxidHeld = true
	p.lxid.Store(lxid)
	p.fp.lock.Release(p)
}

// endVirtualXact releases the VXID lock (VirtualXactLockTableCleanup),
// through the shared table if a waiter transferred it there.
func (m *Manager) endVirtualXact(p *Proc) {
	lxid := p.lxid.Load()
	if lxid == 0 {
		return
	}
	p.fp.lock.Acquire(p, LWExclusive)
	held := p.fp.vxidHeld
	p.fp.vxidHeld = false
	p.lxid.Store(0)
	p.fp.lock.Release(p)
	if held {
		return
	}
	tag := VirtualXidTag(p.number, lxid)
	hash := tag.hash()
	part := m.part(hash)
	part.lock.Acquire(p, LWExclusive)
	if lock := part.locks[tag]; lock != nil {
		if pl := part.procLocks[procLockKey{lock, p}]; pl != nil && pl.holdMask&modeBit(ExclusiveLock) != 0 {
			wake := lock.ungrant(pl, ExclusiveLock)
			m.cleanUpLock(part, lock, pl, wake)
		}
	}
	part.lock.Release(p)
}

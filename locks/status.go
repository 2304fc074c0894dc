package locks

import (
	"cmp"
	"slices"
	"strconv"
	"time"
)

// LockStatus is one row of pg_locks: one mode held or awaited by one
// backend on one object.
type LockStatus struct {
	Tag       LockTag
	PID       int32
	VXID      string // the backend's virtual transaction, "procNumber/lxid"
	Mode      LockMode
	Granted   bool
	FastPath  bool
	WaitStart time.Time // zero when granted
}

// Status returns a pg_locks snapshot (GetLockStatusData): every backend's
// fast-path locks, each read under that backend's fast-path lock, then the
// shared table read with all partitions locked. As in PostgreSQL the two
// parts are not one atomic snapshot: a lock transferred in between may be
// listed twice. Rows are sorted by lock tag, pid and mode. Status is
// expensive under load (it stops every lock acquisition that needs the
// shared table); it is meant for humans, not for a hot loop.
func (m *Manager) Status() []LockStatus {
	var out []LockStatus
	for i := range m.procs {
		q := m.procs[i].Load()
		if q == nil {
			continue
		}
		f := &q.fp
		f.lock.Acquire(nil, LWShared)
		vxid := vxidString(q)
		for g, bits := range f.bits {
			if bits == 0 {
				continue
			}
			for j := 0; j < fpSlotsPerGroup; j++ {
				sb := (bits >> (j * fpBitsPerSlot)) & 7
				if sb == 0 {
					continue
				}
				slot := g*fpSlotsPerGroup + j
				for mode := AccessShareLock; mode <= RowExclusiveLock; mode++ {
					if sb&(1<<(mode-1)) != 0 {
						out = append(out, LockStatus{Tag: RelationTag(f.db[slot], f.rel[slot]), PID: q.pid,
							VXID: vxid, Mode: mode, Granted: true, FastPath: true})
					}
				}
			}
		}
		if f.vxidHeld {
			out = append(out, LockStatus{Tag: VirtualXidTag(q.number, q.lxid.Load()), PID: q.pid,
				VXID: vxid, Mode: ExclusiveLock, Granted: true, FastPath: true})
		}
		f.lock.Release(nil)
	}
	for i := range m.parts {
		m.parts[i].lock.Acquire(nil, LWShared)
	}
	for i := range m.parts {
		for _, lock := range m.parts[i].locks {
			for pl := lock.procLocks; pl != nil; pl = pl.lockNext {
				q := pl.proc
				vxid := vxidString(q)
				for mode := AccessShareLock; mode <= MaxLockMode; mode++ {
					if pl.holdMask&modeBit(mode) != 0 {
						out = append(out, LockStatus{Tag: lock.tag, PID: q.pid, VXID: vxid, Mode: mode, Granted: true})
					}
				}
				if q.waitProcLock == pl {
					out = append(out, LockStatus{Tag: lock.tag, PID: q.pid, VXID: vxid, Mode: q.waitMode,
						WaitStart: time.Unix(0, q.waitStart.Load())})
				}
			}
		}
	}
	for i := len(m.parts) - 1; i >= 0; i-- {
		m.parts[i].lock.Release(nil)
	}
	slices.SortFunc(out, func(a, b LockStatus) int {
		return cmp.Or(
			cmp.Compare(a.Tag.Type, b.Tag.Type),
			cmp.Compare(a.Tag.Field1, b.Tag.Field1),
			cmp.Compare(a.Tag.Field2, b.Tag.Field2),
			cmp.Compare(a.Tag.Field3, b.Tag.Field3),
			cmp.Compare(a.Tag.Field4, b.Tag.Field4),
			cmp.Compare(a.PID, b.PID),
			cmp.Compare(a.Mode, b.Mode),
		)
	})
	return out
}

func vxidString(q *Proc) string {
	return strconv.Itoa(int(q.number)) + "/" + strconv.FormatUint(uint64(q.lxid.Load()), 10)
}

// BlockingPIDs returns the pids blocking backend pid's heavyweight lock
// wait (pg_blocking_pids): holders of conflicting modes (hard blockers)
// first, then backends queued ahead of it with conflicting requests (soft
// blockers). Empty when pid is not waiting or unknown.
func (m *Manager) BlockingPIDs(pid int32) []int32 {
	q := m.ProcByPID(pid)
	if q == nil {
		return nil
	}
	for i := range m.parts {
		m.parts[i].lock.Acquire(nil, LWShared)
	}
	var out []int32
	if lock := q.waitLock; lock != nil {
		mask := conflictTab[q.waitMode]
		for pl := lock.procLocks; pl != nil; pl = pl.lockNext {
			if pl.proc != q && pl.holdMask&mask != 0 {
				out = append(out, pl.proc.pid)
			}
		}
		for w := lock.waitHead; w != nil && w != q; w = w.waitNext {
			if mask&modeBit(w.waitMode) != 0 {
				out = append(out, w.pid)
			}
		}
	}
	for i := len(m.parts) - 1; i >= 0; i-- {
		m.parts[i].lock.Release(nil)
	}
	return out
}

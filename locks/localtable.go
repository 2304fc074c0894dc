package locks

// localTable is the backend's local lock table (PostgreSQL's
// LockMethodLocalHash): entries keyed by (tag, mode), found by the tag hash
// that Lock computes anyway. It is an open-addressing table with linear
// probing and backward-shift deletion, so steady-state lock/unlock neither
// allocates nor pays Go map hashing; it is owner-only and unsynchronised.
type localTable struct {
	slots []*localLock // length is a power of two
	n     int
}

const (
	localTableMinSize    = 16
	localTableShrinkSize = 1024 // emptied tables larger than this are reallocated small
)

func (t *localTable) init(size int) {
	t.slots = make([]*localLock, size)
	t.n = 0
}

func localHome(hash uint32, mode LockMode, mask uint32) uint32 {
	return (hash + uint32(mode)*0x9E3779B9) & mask
}

func (t *localTable) get(tag LockTag, mode LockMode, hash uint32) *localLock {
	mask := uint32(len(t.slots) - 1)
	for i := localHome(hash, mode, mask); ; i = (i + 1) & mask {
		ll := t.slots[i]
		if ll == nil {
			return nil
		}
		if ll.hash == hash && ll.mode == mode && ll.tag == tag {
			return ll
		}
	}
}

func (t *localTable) put(ll *localLock) {
	if 2*(t.n+1) > len(t.slots) {
		old := t.slots
		t.init(2 * len(old))
		for _, e := range old {
			if e != nil {
				t.put(e)
			}
		}
	}
	mask := uint32(len(t.slots) - 1)
	i := localHome(ll.hash, ll.mode, mask)
	for t.slots[i] != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = ll
	t.n++
}

func (t *localTable) remove(ll *localLock) {
	mask := uint32(len(t.slots) - 1)
	i := localHome(ll.hash, ll.mode, mask)
	for t.slots[i] != ll {
		if t.slots[i] == nil {
			panic("locks: local lock entry not found")
		}
		i = (i + 1) & mask
	}
	t.n--
	// Backward-shift deletion: pull later entries of the probe run into
	// the hole unless their home lies cyclically in (hole, current].
	for {
		t.slots[i] = nil
		j := i
		for {
			j = (j + 1) & mask
			e := t.slots[j]
			if e == nil {
				return
			}
			k := localHome(e.hash, e.mode, mask)
			if (i <= j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
				continue
			}
			t.slots[i] = e
			i = j
			break
		}
	}
}

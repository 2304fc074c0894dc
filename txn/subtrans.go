package txn

import "sync/atomic"

// subtrans is the parent map of subtransaction xids (PostgreSQL's
// pg_subtrans): for every xid a subtransaction was given, the xid of its
// immediate parent; zero for top-level xids and for xids the map has
// forgotten. Like pg_subtrans it is indexed by xid in pages (2048 xids of
// 4 bytes, an 8 kB SLRU page), but it lives in memory only: after a restart
// no transaction runs, so no subxid needs mapping to a running parent
// (PostgreSQL zeroes pg_subtrans at start-up for the same reason).
//
// Pages are made only when a subxid falls into them, so a workload without
// savepoints costs nothing. Truncate drops pages below the oldest xid any
// snapshot or running transaction may still ask about.
//
// Concurrency: set and truncate run under XidGenLock exclusive (set from
// GetNewTransactionId, before nextXid passes the new xid, so anyone who can
// know the subxid finds its parent). Readers take no lock: the directory
// is an immutable value replaced atomically, and entries are atomic words.
// PostgreSQL reads pg_subtrans under SubtransSLRU; lockd does not model
// that lock, because its readers (snapshot checks of in-progress xids,
// TransactionIdIsInProgress) would otherwise take it for every xid that is
// not found among the running top-level xids.
type subtrans struct {
	dir atomic.Pointer[subtransDir]
}

const subtransXidsPerPage = 2048 // SUBTRANS_XACTS_PER_PAGE

type subtransPage [subtransXidsPerPage]atomic.Uint32

// subtransDir is an immutable directory: pages[i] holds page base+i, nil
// when no subxid of that page was recorded.
type subtransDir struct {
	base  uint32
	pages []*subtransPage
}

// parent returns xid's recorded parent, InvalidXid if none.
func (st *subtrans) parent(xid Xid) Xid {
	d := st.dir.Load()
	if d == nil {
		return InvalidXid
	}
	pg := uint32(xid) / subtransXidsPerPage
	if pg < d.base || pg-d.base >= uint32(len(d.pages)) {
		return InvalidXid
	}
	page := d.pages[pg-d.base]
	if page == nil {
		return InvalidXid
	}
	return Xid(page[uint32(xid)%subtransXidsPerPage].Load())
}

// topmost follows the parent links of xid to its top-level transaction
// (SubTransGetTopmostTransaction); xid itself when it has no parent.
func (st *subtrans) topmost(xid Xid) Xid {
	if st.dir.Load() == nil {
		return xid
	}
	for {
		p := st.parent(xid)
		if p == InvalidXid {
			return xid
		}
		xid = p
	}
}

// set records parent as xid's parent (SubTransSetParent). Caller holds
// XidGenLock exclusive.
func (st *subtrans) set(xid, parent Xid) {
	pg := uint32(xid) / subtransXidsPerPage
	d := st.dir.Load()
	if d == nil || pg < d.base || pg-d.base >= uint32(len(d.pages)) || d.pages[pg-d.base] == nil {
		d = d.with(pg)
		st.dir.Store(d)
	}
	d.pages[pg-d.base][uint32(xid)%subtransXidsPerPage].Store(uint32(parent))
}

// with returns a copy of d (which may be nil) that has page pg.
func (d *subtransDir) with(pg uint32) *subtransDir {
	n := &subtransDir{base: pg}
	if d != nil && len(d.pages) > 0 {
		n.base = min(d.base, pg)
		end := max(d.base+uint32(len(d.pages)), pg+1)
		n.pages = make([]*subtransPage, end-n.base)
		copy(n.pages[d.base-n.base:], d.pages)
	} else {
		n.pages = make([]*subtransPage, 1)
	}
	if n.pages[pg-n.base] == nil {
		n.pages[pg-n.base] = new(subtransPage)
	}
	return n
}

// truncate forgets the pages wholly below oldest (TruncateSUBTRANS): no
// running transaction has a subxid there, and no snapshot asks about one.
// Caller holds XidGenLock exclusive.
func (st *subtrans) truncate(oldest Xid) {
	d := st.dir.Load()
	if d == nil {
		return
	}
	cut := uint32(oldest) / subtransXidsPerPage
	if cut <= d.base {
		return
	}
	if cut-d.base >= uint32(len(d.pages)) {
		st.dir.Store(nil)
		return
	}
	n := &subtransDir{base: cut, pages: append([]*subtransPage(nil), d.pages[cut-d.base:]...)}
	st.dir.Store(n)
}

// pages returns the number of pages the map holds (tests).
func (st *subtrans) npages() int {
	d := st.dir.Load()
	if d == nil {
		return 0
	}
	n := 0
	for _, p := range d.pages {
		if p != nil {
			n++
		}
	}
	return n
}

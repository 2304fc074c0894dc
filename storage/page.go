package storage

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"lockd/txn"
)

// Page layout. A heap page is PostgreSQL's (bufpage.h, itemid.h,
// htup_details.h) with a simplified tuple header:
//
//	+----------------+---------------------------------+
//	| PageHeaderData | linp1 linp2 linp3 ...           |
//	+-----------+----+---------------------------------+
//	| ... linpN |                                      |
//	+-----------+--------------------------------------+
//	|           ^ pd_lower                             |
//	|                                                  |
//	|             v pd_upper                           |
//	+-------------+------------------------------------+
//	|             | tupleN ...                         |
//	+-------------+------------------+-----------------+
//	|       ... tuple3 tuple2 tuple1 |                 |
//	+--------------------------------+-----------------+
//
// Multi-byte fields are in the host's byte order, as PostgreSQL's are: data
// files are not portable between architectures of different endianness.
const (
	PageSize = 8192 // BLCKSZ

	pageHeaderSize = 24 // SizeOfPageHeaderData
	itemIDSize     = 4  // sizeof(ItemIdData)

	// page header field offsets
	pdFlags    = 10
	pdLower    = 12
	pdUpper    = 14
	pdSpecial  = 16
	pdVersion  = 18
	pdPruneXid = 20

	pageLayoutVersion = 4

	// pd_flags bits
	pdHasFreeLines = 0x0001 // there are LP_UNUSED line pointers before pd_lower
	pdPageFull     = 0x0002 // an UPDATE found no room here (PD_PAGE_FULL): prune it
)

// Line pointer states (lp_flags).
const (
	lpUnused   = 0 // free, may be reused by an insert
	lpNormal   = 1 // points at a tuple
	lpRedirect = 2 // HOT redirect: lpOff is the chain's next line pointer (hot.go)
	lpDead     = 3 // dead, no storage; waits for index entries to go
)

// Tuple header (our HeapTupleHeaderData): 28 bytes, then the data.
//
//	0  xmin   uint32
//	4  xmax   uint32
//	8  cmin   uint32
//	12 cmax   uint32
//	16 ctid.block uint32
//	20 flags  uint32  (t_infomask, txn.TupleHeader.Flags, in the low 16
//	                   bits, t_infomask2, Flags2, in the high 16; read and
//	                   OR-ed atomically because hint bits are set under a
//	                   shared content lock, as PostgreSQL's SetHintBits does)
//	24 ctid.offset uint16
//	26 data length uint16
const (
	tupleHeaderSize = 28
	thXmin          = 0
	thXmax          = 4
	thCmin          = 8
	thCmax          = 12
	thCtidBlock     = 16
	thFlags         = 20
	thCtidOffset    = 24
	thDataLen       = 26

	maxAlign = 8

	// MaxTupleSize is the largest tuple (header + data) a page holds
	// (MaxHeapTupleSize).
	MaxTupleSize = PageSize - ((pageHeaderSize + itemIDSize + maxAlign - 1) &^ (maxAlign - 1))
	// MaxTupleData is the largest data a tuple may carry; lockd has no
	// TOAST, so larger rows are refused.
	MaxTupleData = MaxTupleSize - tupleHeaderSize
	// MaxTuplesPerPage is MaxHeapTuplesPerPage: the most tuples a heap
	// page can hold.
	MaxTuplesPerPage = (PageSize - pageHeaderSize) / (((tupleHeaderSize + maxAlign - 1) &^ (maxAlign - 1)) + itemIDSize)
)

var ne = binary.NativeEndian

func maxAligned(n int) int { return (n + maxAlign - 1) &^ (maxAlign - 1) }

// tupleSpace is the page space (without line pointer) a tuple with n data
// bytes takes.
func tupleSpace(n int) int { return maxAligned(tupleHeaderSize + n) }

// page is a view of one 8 kB page in the buffer pool. Its first byte is
// 8-byte aligned (the pool is allocated as []uint64).
type page []byte

func (pg page) u16(off int) uint16      { return ne.Uint16(pg[off:]) }
func (pg page) put16(off int, v uint16) { ne.PutUint16(pg[off:], v) }
func (pg page) u32(off int) uint32      { return ne.Uint32(pg[off:]) }
func (pg page) put32(off int, v uint32) { ne.PutUint32(pg[off:], v) }

func (pg page) lower() int { return int(pg.u16(pdLower)) }
func (pg page) upper() int { return int(pg.u16(pdUpper)) }

// isNew reports an all-zero (never initialised) page (PageIsNew).
func (pg page) isNew() bool { return pg.u16(pdUpper) == 0 }

// initPage formats pg as an empty page (PageInit).
func initPage(pg page) {
	clear(pg)
	pg.put16(pdLower, pageHeaderSize)
	pg.put16(pdUpper, PageSize)
	pg.put16(pdSpecial, PageSize)
	pg.put16(pdVersion, PageSize|pageLayoutVersion)
}

// maxOffset is the number of line pointers (PageGetMaxOffsetNumber).
func (pg page) maxOffset() int {
	l := pg.lower()
	if l <= pageHeaderSize {
		return 0
	}
	return (l - pageHeaderSize) / itemIDSize
}

// itemID returns line pointer off (1-based): offset, flags, length.
func (pg page) itemID(off int) (lpOff, flags, length int) {
	v := pg.u32(pageHeaderSize + (off-1)*itemIDSize)
	return int(v & 0x7fff), int(v >> 15 & 3), int(v >> 17)
}

func (pg page) setItemID(off, lpOff, flags, length int) {
	pg.put32(pageHeaderSize+(off-1)*itemIDSize, uint32(lpOff)|uint32(flags)<<15|uint32(length)<<17)
}

// freeSpace is PageGetHeapFreeSpace: the room for one more tuple,
// line pointer already deducted. A page whose line-pointer array is full
// has room only if one of them is unused: pdHasFreeLines is only a hint
// (addTuple leaves it set when it takes the last unused one), so it is
// checked, as PostgreSQL checks it; trusting it, an UPDATE once put its
// new version on a page that could not take it.
func (pg page) freeSpace() int {
	if pg.isNew() {
		return PageSize - pageHeaderSize - itemIDSize
	}
	space := pg.upper() - pg.lower()
	if space < itemIDSize {
		return 0
	}
	space -= itemIDSize
	if nline := pg.maxOffset(); nline >= MaxTuplesPerPage {
		if pg.u16(pdFlags)&pdHasFreeLines == 0 {
			return 0
		}
		for i := 1; i <= nline; i++ {
			if _, f, l := pg.itemID(i); f == lpUnused && l == 0 {
				return space
			}
		}
		return 0
	}
	return space
}

// addTuple places a tuple with header h and data on the page and returns its
// line pointer number, or 0 if it does not fit (PageAddItem). The caller
// holds the content lock exclusively.
func (pg page) addTuple(h *txn.TupleHeader, ctidSelf bool, ctid TID, data []byte) int {
	if pg.isNew() {
		initPage(pg)
	}
	size := tupleHeaderSize + len(data)
	space := maxAligned(size)
	off := 0
	nline := pg.maxOffset()
	if pg.u16(pdFlags)&pdHasFreeLines != 0 {
		for i := 1; i <= nline; i++ {
			if _, f, l := pg.itemID(i); f == lpUnused && l == 0 {
				off = i
				break
			}
		}
		if off == 0 {
			pg.put16(pdFlags, pg.u16(pdFlags)&^pdHasFreeLines)
		}
	}
	lower := pg.lower()
	if off == 0 {
		if nline >= MaxTuplesPerPage {
			return 0
		}
		off = nline + 1
		lower += itemIDSize
	}
	upper := pg.upper() - space
	if upper < lower {
		return 0
	}
	t := pg[upper : upper+size]
	// The alignment padding may hold an old tuple's bytes (the space
	// was freed by compaction); zero it, as redo's placeTuple does, so
	// a replayed page is byte for byte the page the run wrote.
	clear(pg[upper+size : upper+space])
	putHeader(t, h)
	if ctidSelf {
		ne.PutUint32(t[thCtidBlock:], ctid.Block)
		ne.PutUint16(t[thCtidOffset:], uint16(off))
	}
	ne.PutUint16(t[thDataLen:], uint16(len(data)))
	copy(t[tupleHeaderSize:], data)
	pg.setItemID(off, upper, lpNormal, size)
	pg.put16(pdLower, uint16(lower))
	pg.put16(pdUpper, uint16(upper))
	return off
}

// tuple returns the bytes of the tuple at line pointer off, or nil if off
// is out of range or not LP_NORMAL.
func (pg page) tuple(off int) []byte {
	if off < 1 || off > pg.maxOffset() {
		return nil
	}
	o, f, l := pg.itemID(off)
	if f != lpNormal || l < tupleHeaderSize {
		return nil
	}
	return pg[o : o+l]
}

// putHeader writes xmin..cmax and flags (plain stores: exclusive lock held).
func putHeader(t []byte, h *txn.TupleHeader) {
	ne.PutUint32(t[thXmin:], uint32(h.Xmin))
	ne.PutUint32(t[thXmax:], uint32(h.Xmax))
	ne.PutUint32(t[thCmin:], uint32(h.Cmin))
	ne.PutUint32(t[thCmax:], uint32(h.Cmax))
	ne.PutUint32(t[thFlags:], uint32(h.Flags)|uint32(h.Flags2)<<16)
}

// flagsWord is the tuple's flags as an atomic word. Hint bits are OR-ed
// into it under a shared content lock by concurrent readers, so every
// access that may overlap one (reads under a shared lock) goes through it.
func flagsWord(t []byte) *atomic.Uint32 {
	return (*atomic.Uint32)(unsafe.Pointer(&t[thFlags]))
}

// readHeader decodes t's header into h. The caller holds the content lock
// (shared or exclusive).
func readHeader(t []byte, h *txn.TupleHeader) {
	h.Xmin = txn.Xid(ne.Uint32(t[thXmin:]))
	h.Xmax = txn.Xid(ne.Uint32(t[thXmax:]))
	h.Cmin = txn.CommandID(ne.Uint32(t[thCmin:]))
	h.Cmax = txn.CommandID(ne.Uint32(t[thCmax:]))
	f := flagsWord(t).Load()
	h.Flags, h.Flags2 = uint16(f), uint16(f>>16)
}

func tupleCtid(t []byte) TID {
	return TID{Block: ne.Uint32(t[thCtidBlock:]), Offset: ne.Uint16(t[thCtidOffset:])}
}

func setTupleCtid(t []byte, tid TID) {
	ne.PutUint32(t[thCtidBlock:], tid.Block)
	ne.PutUint16(t[thCtidOffset:], tid.Offset)
}

func tupleData(t []byte) []byte {
	n := int(ne.Uint16(t[thDataLen:]))
	return t[tupleHeaderSize : tupleHeaderSize+n]
}

// repairFragmentation compacts the tuple storage of pg so that free space is
// contiguous (PageRepairFragmentation) and trims trailing unused line
// pointers. It moves tuples: the caller holds a cleanup lock (exclusive
// content lock and the only pin). scratch is a PageSize work area.
func (pg page) repairFragmentation(scratch []byte) {
	if pg.isNew() {
		return
	}
	nline := pg.maxOffset()
	// trim trailing unused line pointers (PageTruncateLinePointerArray)
	for nline > 0 {
		if _, f, _ := pg.itemID(nline); f != lpUnused {
			break
		}
		nline--
	}
	copy(scratch, pg)
	upper := PageSize
	hasFree := false
	for i := 1; i <= nline; i++ {
		o, f, l := pg.itemID(i)
		if f != lpNormal {
			if f == lpUnused {
				hasFree = true
			}
			continue
		}
		upper -= maxAligned(l)
		copy(pg[upper:upper+l], scratch[o:o+l])
		pg.setItemID(i, upper, lpNormal, l)
	}
	flags := pg.u16(pdFlags) &^ pdHasFreeLines
	if hasFree {
		flags |= pdHasFreeLines
	}
	pg.put16(pdFlags, flags)
	pg.put16(pdLower, uint16(pageHeaderSize+nline*itemIDSize))
	pg.put16(pdUpper, uint16(upper))
}

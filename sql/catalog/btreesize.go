package catalog

import (
	"math"

	"lockd/sql/types"
)

// The size PostgreSQL's B-tree would have for an index. lockd's indexes
// are in-memory trees of memcmp keys, whose size says little of
// PostgreSQL's; but the planner's index costs are in PostgreSQL's pages
// (an index-only scan of a whole index costs random_page_cost per page),
// so pg_class.relpages, pg_relation_size and the costs use this model of
// the index as CREATE INDEX builds it (nbtsort.c), from the number of
// entries, distinct keys and the keys' average width:
//
//   - an index tuple is an 8-byte header and the key columns laid out
//     with their alignment, MAXALIGNed; a text key is a short varlena;
//   - leaf pages are filled to 90% (BTREE_DEFAULT_FILLFACTOR), internal
//     ones to 70%, each page's last tuple moving on to the next page (its
//     high key staying behind), and a metapage comes first;
//   - in a non-unique index of types whose equal values are identical
//     (integers, booleans, dates and times, strings: not numeric or
//     floats), equal keys are deduplicated into posting-list tuples of up
//     to a tenth of a page (PostgreSQL 13+), and the fill rule counts a
//     posting list as already truncated from the page's high key.
//
// All keys are taken as equally wide and all distinct keys as equally
// common. An index PostgreSQL grows by inserts in random order has leaf
// pages about 70% full instead (half-full after a split), so it is larger
// than the model says; one grown in key order (a serial primary key) is
// built at 90% by its rightmost splits, as the model says.

// Page geometry of nbtree (BLCKSZ 8192).
const (
	btPageSpace     = 8192 - 24 - 16 - 4 - 4 // after page header, special space, the high key's line pointer; PageGetFreeSpace's own
	btLeafFull      = 8192 * (100 - 90) / 100
	btInternalFull  = 8192 * (100 - 70) / 100
	btMaxPostingLen = (8192*10/100)&^7 - 4 // MAXALIGN_DOWN(BLCKSZ/10) - sizeof(ItemIdData)
	btItemID        = 4
	btTupleHeader   = 8 // IndexTupleData
	btHeapTID       = 6 // ItemPointerData
	btMaxAlign      = 8
)

func btAlign(n, a float64) float64 { return math.Ceil(n/a) * a }

// BtreeDedups reports whether PostgreSQL deduplicates equal keys of ix
// (a non-unique index whose key types all allow it).
func BtreeDedups(t *TableDef, ix *IndexDef) bool {
	if ix.Unique {
		return false
	}
	for _, c := range ix.Cols {
		if !dedupable(t.Cols[c].Type()) {
			return false
		}
	}
	return true
}

// BtreeTupleData returns the bytes the key columns of ix take in a
// PostgreSQL index tuple (after its header, alignment included), given
// the average bytes of lockd's keys (keyBytes, catalog.AppendKey's
// encoding) for the widths of variable-length columns; and whether
// PostgreSQL deduplicates such keys (BtreeDedups).
func BtreeTupleData(t *TableDef, ix *IndexDef, keyBytes float64) (data float64, dedup bool) {
	var fixedKey, nvar float64
	for _, c := range ix.Cols {
		if typeLen(t.Cols[c].Type()) > 0 {
			fixedKey += 9 // tag + 8 bytes (AppendKey)
		} else {
			nvar++
		}
	}
	varLen := 0.0 // data bytes of each variable-length column
	if nvar > 0 {
		varLen = math.Max(0, (keyBytes-fixedKey)/nvar-3) // tag + two terminator bytes
	}
	off := float64(btTupleHeader)
	for _, c := range ix.Cols {
		ty := t.Cols[c].Type()
		if n := typeLen(ty); n > 0 {
			off = btAlign(off, typeAlign(n)) + float64(n)
			continue
		}
		l := varLen
		if ty.OID == types.OIDBpchar && ty.Mod > 4 {
			l = float64(ty.Mod - 4) // stored blank-padded
		}
		if l+1 <= 127 {
			off += l + 1 // a short varlena: one header byte, no alignment
		} else {
			off = btAlign(off, 4) + l + 4
		}
	}
	return off - btTupleHeader, BtreeDedups(t, ix)
}

// typeLen is the type's typlen as an index stores it (-1 variable).
func typeLen(t types.Type) int {
	switch t.OID {
	case types.OIDBool, types.OIDChar:
		return 1
	case types.OIDInt2:
		return 2
	case types.OIDInt4, types.OIDOid, types.OIDXid, types.OIDDate, types.OIDFloat4,
		types.OIDRegproc, types.OIDRegclass, types.OIDRegtype, types.OIDRegrole, types.OIDRegnsp:
		return 4
	case types.OIDInt8, types.OIDFloat8, types.OIDTimestamp, types.OIDTimestamptz, types.OIDPgLsn:
		return 8
	case types.OIDInterval:
		return 16
	case types.OIDName:
		return 64
	}
	if t.Len > 0 {
		return int(t.Len)
	}
	return -1
}

func typeAlign(n int) float64 {
	switch {
	case n >= 8:
		if n == 64 { // name: char alignment
			return 1
		}
		return 8
	case n == 4:
		return 4
	case n == 2:
		return 2
	}
	return 1
}

// dedupable reports whether btree deduplication applies to keys of type
// t (its operator class's btequalimage): equal values have equal bytes.
func dedupable(t types.Type) bool {
	switch t.OID {
	case types.OIDFloat4, types.OIDFloat8, types.OIDNumeric, types.OIDInterval:
		return false
	}
	switch types.CategoryOf(t) {
	case types.CatInt, types.CatBool, types.CatDatetime, types.CatString:
		return true
	}
	return false
}

// BtreeSize estimates a PostgreSQL B-tree's pages (metapage included) and
// height (the root's level: 0 when the root is the only leaf) for entries
// index tuples with key data of data bytes each (BtreeTupleData), distinct
// of them distinct keys (0: as many as entries), deduplicated if dedup.
func BtreeSize(entries, distinct, data float64, dedup bool) (pages float64, height int) {
	if entries < 1 {
		return 1, 0 // the metapage alone
	}
	if distinct < 1 || distinct > entries {
		distinct = entries
	}
	tup := btAlign(btTupleHeader+data, btMaxAlign)
	// leaf tuples: their number, average size and average posting list
	// (the part a high key drops)
	n, size, posting := entries, tup, 0.0
	maxTIDs := math.Floor((float64(btMaxPostingLen&^7) - tup) / btHeapTID)
	if dup := math.Round(entries / distinct); dedup && dup >= 2 && maxTIDs >= 2 {
		full := math.Floor(dup / maxTIDs)
		rest := math.Round(dup - full*maxTIDs)
		fullSize := btAlign(tup+maxTIDs*btHeapTID, btMaxAlign)
		perKey, bytes, lists := full, full*fullSize, full*(fullSize-tup)
		switch {
		case rest >= 2:
			s := btAlign(tup+rest*btHeapTID, btMaxAlign)
			perKey, bytes, lists = perKey+1, bytes+s, lists+s-tup
		case rest >= 1:
			perKey, bytes = perKey+1, bytes+tup
		}
		n, size, posting = distinct*perKey, bytes/perKey, lists/perKey
	}
	leaves := btLevelPages(n, size, posting, btLeafFull, true)
	pages, level := leaves, leaves
	pivot := tup
	if distinct < leaves {
		pivot += btAlign(btHeapTID, btMaxAlign) // high keys between equal keys keep a heap TID
	}
	for level > 1 {
		level = btLevelPages(level, pivot, 0, btInternalFull, false)
		pages += level
		height++
	}
	return pages + 1, height
}

// btLevelPages is how many pages one level of n tuples of size bytes
// (posting of which a high key drops) takes: _bt_buildadd starts a new
// page when the next tuple does not fit (with room for a heap TID in a
// leaf's high key) or the free space, counting the last tuple's posting
// list as free, is below full; the last tuple moves to the new page.
func btLevelPages(n, size, posting, full float64, leaf bool) float64 {
	step := size + btItemID
	reserve := size
	if leaf {
		reserve += btAlign(btHeapTID, btMaxAlign)
	}
	hard := math.Floor((btPageSpace-reserve)/step) + 1
	soft := math.Floor((btPageSpace+posting-full)/step) + 1
	per := math.Max(2, math.Min(hard, soft)) // tuples on a page when it is finished
	return math.Max(1, math.Ceil((n-1)/(per-1)))
}

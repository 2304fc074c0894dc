package wal

import (
	"fmt"
	"strconv"
	"strings"
)

// LSN is a log sequence number: a byte position in the write-ahead log
// (PostgreSQL's XLogRecPtr). The zero LSN is invalid.
type LSN uint64

// InvalidLSN is InvalidXLogRecPtr.
const InvalidLSN LSN = 0

// String formats l as PostgreSQL does (pg_lsn_out, LSN_FORMAT_ARGS): the
// high and low 32 bits in upper-case hexadecimal, e.g. "0/16B3748".
func (l LSN) String() string {
	return strings.ToUpper(strconv.FormatUint(uint64(l)>>32, 16) + "/" + strconv.FormatUint(uint64(l)&0xffffffff, 16))
}

// ParseLSN parses "X/X" (pg_lsn_in): two hexadecimal numbers of at most 8
// digits each.
func ParseLSN(s string) (LSN, error) {
	hi, lo, ok := strings.Cut(s, "/")
	if !ok || len(hi) == 0 || len(lo) == 0 || len(hi) > 8 || len(lo) > 8 {
		return 0, fmt.Errorf("invalid input syntax for type pg_lsn: \"%s\"", s)
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("invalid input syntax for type pg_lsn: \"%s\"", s)
	}
	return LSN(h<<32 | l), nil
}

// Sizes of the log's layout (PostgreSQL's, xlog_internal.h).
const (
	// PageSize is XLOG_BLCKSZ.
	PageSize = 8192
	// DefaultSegmentSize is DEFAULT_XLOG_SEG_SIZE (16 MB).
	DefaultSegmentSize = 16 << 20
	// MinSegmentSize and MaxSegmentSize bound a segment size (a power of
	// two); only tests use other than the default.
	MinSegmentSize = 1 << 16
	MaxSegmentSize = 1 << 30

	shortPageHeaderSize = 24 // SizeOfXLogShortPHD
	longPageHeaderSize  = 40 // SizeOfXLogLongPHD
	recordHeaderSize    = 24 // SizeOfXLogRecord
	maxAlign            = 8

	usableBytesInPage = PageSize - shortPageHeaderSize
)

// TimeLineID is always 1: lockd has no archive recovery or promotion, so
// the log never forks.
const TimeLineID = 1

func maxAligned(n uint64) uint64 { return (n + maxAlign - 1) &^ (maxAlign - 1) }

// geometry holds the sizes derived from the segment size.
type geometry struct {
	segSize              uint64
	usableBytesInSegment uint64
}

func newGeometry(segSize uint64) geometry {
	return geometry{segSize: segSize,
		usableBytesInSegment: segSize/PageSize*usableBytesInPage - (longPageHeaderSize - shortPageHeaderSize)}
}

// bytePosToLSN converts a "usable byte position" — a count of record
// bytes that excludes page headers, which is what insertion reserves — to
// the LSN of a record starting there (XLogBytePosToRecPtr). A position
// right at a page boundary maps past the next page's header.
func (g *geometry) bytePosToLSN(pos uint64) LSN {
	fullsegs := pos / g.usableBytesInSegment
	left := pos % g.usableBytesInSegment
	var off uint64
	if left < PageSize-longPageHeaderSize {
		off = left + longPageHeaderSize
	} else {
		left -= PageSize - longPageHeaderSize
		fullpages := left / usableBytesInPage
		left %= usableBytesInPage
		off = PageSize + fullpages*PageSize + left + shortPageHeaderSize
	}
	return LSN(fullsegs*g.segSize + off)
}

// bytePosToEndLSN is bytePosToLSN for the end of a record
// (XLogBytePosToEndRecPtr): a position at a page boundary maps to the end
// of the page, not past the next header.
func (g *geometry) bytePosToEndLSN(pos uint64) LSN {
	fullsegs := pos / g.usableBytesInSegment
	left := pos % g.usableBytesInSegment
	var off uint64
	if left < PageSize-longPageHeaderSize {
		if left == 0 {
			off = 0
		} else {
			off = left + longPageHeaderSize
		}
	} else {
		left -= PageSize - longPageHeaderSize
		fullpages := left / usableBytesInPage
		left %= usableBytesInPage
		if left == 0 {
			off = PageSize + fullpages*PageSize
		} else {
			off = PageSize + fullpages*PageSize + left + shortPageHeaderSize
		}
	}
	return LSN(fullsegs*g.segSize + off)
}

// lsnToBytePos is the inverse of bytePosToLSN (XLogRecPtrToBytePos).
func (g *geometry) lsnToBytePos(l LSN) uint64 {
	fullsegs := uint64(l) / g.segSize
	off := uint64(l) % g.segSize
	fullpages := off / PageSize
	inpage := off % PageSize
	var pos uint64
	if fullpages == 0 {
		pos = fullsegs * g.usableBytesInSegment
		if inpage > 0 {
			pos += inpage - longPageHeaderSize
		}
	} else {
		pos = fullsegs*g.usableBytesInSegment + (PageSize - longPageHeaderSize) + (fullpages-1)*usableBytesInPage
		if inpage > 0 {
			pos += inpage - shortPageHeaderSize
		}
	}
	return pos
}

// segNo is the number of the segment holding l (XLByteToSeg).
func (g *geometry) segNo(l LSN) uint64 { return uint64(l) / g.segSize }

// prevSegNo is the segment holding the byte before l (XLByteToPrevSeg):
// an LSN on a segment boundary belongs to the segment it ends.
func (g *geometry) prevSegNo(l LSN) uint64 { return (uint64(l) - 1) / g.segSize }

// SegmentFileName is the name of segment segno in pg_wal (XLogFileName):
// timeline, then the segment number as two 8-digit hexadecimal halves of
// 2^32 / segSize segments each.
func SegmentFileName(segno, segSize uint64) string {
	per := uint64(1<<32) / segSize
	return fmt.Sprintf("%08X%08X%08X", TimeLineID, segno/per, segno%per)
}

// parseSegmentFileName returns the segment number a pg_wal file name
// stands for.
func parseSegmentFileName(name string, segSize uint64) (uint64, bool) {
	if len(name) != 24 {
		return 0, false
	}
	var tli, hi, lo uint64
	for i, part := range []*uint64{&tli, &hi, &lo} {
		v, err := strconv.ParseUint(name[i*8:i*8+8], 16, 32)
		if err != nil {
			return 0, false
		}
		*part = v
	}
	if tli != TimeLineID {
		return 0, false
	}
	per := uint64(1<<32) / segSize
	if lo >= per {
		return 0, false
	}
	return hi*per + lo, true
}

// WALFileName is pg_walfile_name(lsn) for the default segment size: the
// file holding the byte before lsn (XLByteToPrevSeg), so an LSN exactly
// on a segment boundary names the previous file.
func (w *WAL) WALFileName(l LSN) string {
	return SegmentFileName(w.geo.prevSegNo(l), w.geo.segSize)
}

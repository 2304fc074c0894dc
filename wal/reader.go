package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"lockd/vfs"
)

// reader reads records from the segment files (PostgreSQL's xlogreader.c
// with the crash-recovery page reader). It validates every page header it
// crosses and every record — its length, resource manager, xl_prev link
// and CRC — and stops at the first that fails, with PostgreSQL's message
// for the reason in errMsg: that is the end of the log.
type reader struct {
	w   *WAL
	seg vfs.File
	// segno of seg; valid when seg != nil
	segno uint64
	page  [PageSize]byte
	// pageLSN is the start of the page in page; InvalidLSN if none.
	pageLSN LSN

	ReadRecPtr LSN // start of the last record read
	EndRecPtr  LSN // end of the last record read
	rec        []byte
	decoded    Record
	images     [MaxBlocks][PageSize]byte
	errMsg     string
}

func newReader(w *WAL) *reader { return &reader{w: w} }

func (r *reader) close() {
	if r.seg != nil {
		r.seg.Close()
		r.seg = nil
	}
}

// loadPage reads the page starting at pageLSN and validates its header
// (XLogReaderValidatePageHeader). It returns false with errMsg set (or
// empty for a missing segment, which simply ends the log).
func (r *reader) loadPage(pageLSN LSN) bool {
	if r.pageLSN == pageLSN && pageLSN != InvalidLSN {
		return true
	}
	g := &r.w.geo
	segno := g.segNo(pageLSN)
	name := SegmentFileName(segno, g.segSize)
	if r.seg == nil || r.segno != segno {
		r.close()
		f, err := r.w.fs.OpenFile(r.w.segPath(segno), os.O_RDONLY, 0)
		if err != nil {
			r.errMsg = fmt.Sprintf("could not open file \"%s\": %s", "pg_wal/"+name, errnoText(err))
			return false
		}
		r.seg, r.segno = f, segno
	}
	off := uint64(pageLSN) % g.segSize
	n, err := r.seg.ReadAt(r.page[:], int64(off))
	if n < PageSize {
		if err == nil || err == io.EOF {
			r.errMsg = fmt.Sprintf("could not read from WAL segment %s, offset %d: read %d of %d", name, off, n, PageSize)
		} else {
			r.errMsg = fmt.Sprintf("could not read from WAL segment %s, offset %d: %s", name, off, errnoText(err))
		}
		r.pageLSN = InvalidLSN
		return false
	}
	r.pageLSN = InvalidLSN
	pg := r.page[:]
	if m := binary.LittleEndian.Uint16(pg); m != PageMagic {
		r.errMsg = fmt.Sprintf("invalid magic number %04X in log segment %s, offset %d", m, name, off)
		return false
	}
	info := binary.LittleEndian.Uint16(pg[2:])
	if info&^(xlpFirstIsContRecord|xlpLongHeader) != 0 {
		r.errMsg = fmt.Sprintf("invalid info bits %04X in log segment %s, offset %d", info, name, off)
		return false
	}
	if off == 0 {
		if info&xlpLongHeader == 0 {
			r.errMsg = fmt.Sprintf("invalid info bits %04X in log segment %s, offset %d", info, name, off)
			return false
		}
		if sys := binary.LittleEndian.Uint64(pg[24:]); sys != r.w.ctl.SystemID {
			r.errMsg = fmt.Sprintf("WAL file is from different database system: WAL file database system identifier is %d, pg_control database system identifier is %d",
				sys, r.w.ctl.SystemID)
			return false
		}
		if binary.LittleEndian.Uint32(pg[32:]) != uint32(g.segSize) {
			r.errMsg = "WAL file is from different database system: incorrect segment size in page header"
			return false
		}
		if binary.LittleEndian.Uint32(pg[36:]) != PageSize {
			r.errMsg = "WAL file is from different database system: incorrect XLOG_BLCKSZ in page header"
			return false
		}
	} else if info&xlpLongHeader != 0 {
		r.errMsg = fmt.Sprintf("invalid info bits %04X in log segment %s, offset %d", info, name, off)
		return false
	}
	if addr := LSN(binary.LittleEndian.Uint64(pg[8:])); addr != pageLSN {
		r.errMsg = fmt.Sprintf("unexpected pageaddr %s in log segment %s, offset %d", addr, name, off)
		return false
	}
	if tli := binary.LittleEndian.Uint32(pg[4:]); tli != TimeLineID {
		r.errMsg = fmt.Sprintf("unexpected timeline ID %d in log segment %s, offset %d", tli, name, off)
		return false
	}
	r.pageLSN = pageLSN
	return true
}

func (r *reader) headerSize(pageLSN LSN) LSN {
	if uint64(pageLSN)%r.w.geo.segSize == 0 {
		return longPageHeaderSize
	}
	return shortPageHeaderSize
}

// read reads the record at at (0: the one after the last read), checking
// its xl_prev against prev unless prev is InvalidLSN. It returns nil at
// the end of the log, with errMsg saying why.
func (r *reader) read(at, prev LSN) *Record {
	r.errMsg = ""
	if at == InvalidLSN {
		at = r.EndRecPtr
		if at%PageSize == 0 {
			at += r.headerSize(at)
		}
	}
	pageLSN := at - at%PageSize
	if !r.loadPage(pageLSN) {
		return nil
	}
	hs := r.headerSize(pageLSN)
	inPage := at - pageLSN
	if inPage < hs {
		r.errMsg = fmt.Sprintf("invalid record offset at %s", at)
		return nil
	}
	if inPage == hs && binary.LittleEndian.Uint16(r.page[2:])&xlpFirstIsContRecord != 0 {
		r.errMsg = fmt.Sprintf("contrecord is requested by %s", at)
		return nil
	}
	// Gather the header, then the rest, across pages.
	r.rec = r.rec[:0]
	want := recordHeaderSize
	total := -1
	pos := at
	for {
		avail := PageSize - int(pos-pageLSN)
		take := min(avail, want-len(r.rec))
		r.rec = append(r.rec, r.page[pos-pageLSN:int(pos-pageLSN)+take]...)
		pos += LSN(take)
		if total < 0 && len(r.rec) >= recordHeaderSize {
			tot := binary.LittleEndian.Uint32(r.rec[offTotLen:])
			if tot < recordHeaderSize {
				r.errMsg = fmt.Sprintf("invalid record length at %s: wanted %d, got %d", at, recordHeaderSize, tot)
				return nil
			}
			if tot > 1<<30 {
				r.errMsg = fmt.Sprintf("record length %d at %s too long", tot, at)
				return nil
			}
			if rm := RmgrID(r.rec[offRmid]); !rm.valid() {
				r.errMsg = fmt.Sprintf("invalid resource manager ID %d at %s", rm, at)
				return nil
			}
			if p := LSN(binary.LittleEndian.Uint64(r.rec[offPrev:])); prev != InvalidLSN && p != prev {
				r.errMsg = fmt.Sprintf("record with incorrect prev-link %s at %s", p, at)
				return nil
			}
			total = int(tot)
			want = total
		}
		if len(r.rec) >= want && total >= 0 {
			break
		}
		if pos-pageLSN < PageSize {
			continue // more of the record on this page
		}
		// Continue on the next page.
		pageLSN = pos
		if !r.loadPage(pageLSN) {
			if r.errMsg == "" {
				r.errMsg = fmt.Sprintf("could not read the page at %s", pageLSN)
			}
			return nil
		}
		info := binary.LittleEndian.Uint16(r.page[2:])
		if info&xlpFirstIsContRecord == 0 {
			r.errMsg = fmt.Sprintf("there is no contrecord flag at %s", pos)
			return nil
		}
		remLen := binary.LittleEndian.Uint32(r.page[20:])
		expect := want - len(r.rec)
		if total < 0 {
			// Still in the header: its length is not known yet; the page
			// says how much of the record remains, header included.
			if remLen == 0 {
				r.errMsg = fmt.Sprintf("invalid contrecord length %d at %s", remLen, pos)
				return nil
			}
		} else if remLen == 0 || int(remLen) != expect {
			r.errMsg = fmt.Sprintf("invalid contrecord length %d (expected %d) at %s", remLen, expect, pos)
			return nil
		}
		pos += r.headerSize(pageLSN)
	}
	raw := r.rec[:total]
	crc := crc32.Update(0, crcTable, raw[recordHeaderSize:])
	crc = crc32.Update(crc, crcTable, raw[:offCRC])
	if crc != binary.LittleEndian.Uint32(raw[offCRC:]) {
		r.errMsg = fmt.Sprintf("incorrect resource manager data checksum in record at %s", at)
		return nil
	}
	rec := &r.decoded
	if err := decodeRecord(raw, rec, &r.images); err != nil {
		r.errMsg = fmt.Sprintf("invalid record at %s: %v", at, err)
		return nil
	}
	// The end: after MAXALIGN padding, which never crosses a page.
	end := pos + LSN(maxAligned(uint64(pos))-uint64(pos))
	rec.LSN, rec.EndLSN, rec.Prev = at, end, LSN(binary.LittleEndian.Uint64(raw[offPrev:]))
	r.ReadRecPtr, r.EndRecPtr = at, end
	return rec
}

package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"lockd/locks"
)

// RmgrID names a resource manager: the kind of change a record describes
// and the code that replays it. Ids are PostgreSQL's (rmgrlist.h) for the
// managers lockd shares with it.
type RmgrID uint8

// Resource managers.
const (
	RmgrXLOG      RmgrID = 0  // checkpoints, NEXTOID, full-page images
	RmgrXact      RmgrID = 1  // commit and abort
	RmgrStorage   RmgrID = 2  // relation file creation and truncation
	RmgrMultiXact RmgrID = 6  // multixact creation
	RmgrHeap2     RmgrID = 9  // heap tuples in batches (COPY's multi-insert), visibility map bits
	RmgrHeap      RmgrID = 10 // heap tuples
	RmgrBtree     RmgrID = 11 // index entries
	RmgrSequence  RmgrID = 15 // sequence values
	numRmgrs             = 16
)

var rmgrNames = [numRmgrs]string{
	RmgrXLOG: "XLOG", RmgrXact: "Transaction", RmgrStorage: "Storage", RmgrMultiXact: "MultiXact",
	RmgrHeap2: "Heap2", RmgrHeap: "Heap", RmgrBtree: "Btree", RmgrSequence: "Sequence",
}

func (r RmgrID) String() string {
	if int(r) < len(rmgrNames) && rmgrNames[r] != "" {
		return rmgrNames[r]
	}
	return fmt.Sprintf("rmgr%d", uint8(r))
}

func (r RmgrID) valid() bool { return int(r) < len(rmgrNames) && rmgrNames[r] != "" }

// XLOG resource manager record types (the high nibble of xl_info).
const (
	InfoCheckpointShutdown uint8 = 0x00 // XLOG_CHECKPOINT_SHUTDOWN
	InfoCheckpointOnline   uint8 = 0x10 // XLOG_CHECKPOINT_ONLINE
	InfoNextOID            uint8 = 0x30 // XLOG_NEXTOID
	InfoFPI                uint8 = 0xB0 // XLOG_FPI: a page image, nothing else
)

// Record header layout (XLogRecord), 24 bytes:
//
//	0  xl_tot_len u32   whole record, header included
//	4  xl_xid     u32   transaction id, 0 if none
//	8  xl_prev    u64   start of the previous record
//	16 xl_info    u8    high nibble: record type; low nibble: flags
//	17 xl_rmid    u8    resource manager
//	18 pad        2
//	20 xl_crc     u32   CRC-32C of bytes [24, tot_len), then [0, 20)
//
// Then, unaligned: one header per registered block, a main-data header,
// each block's image and data, the main data (see Builder.assemble).
const (
	offTotLen = 0
	offXid    = 4
	offPrev   = 8
	offInfo   = 16
	offRmid   = 17
	offCRC    = 20
)

// Block header bits (XLogRecordBlockHeader.fork_flags) and ids.
const (
	bkpbForkMask = 0x0F
	bkpbHasImage = 0x10
	bkpbHasData  = 0x20
	bkpbWillInit = 0x40
	bkpbSameRel  = 0x80

	bimgHasHole = 0x01
	bimgApply   = 0x02

	blockIDDataShort = 255 // XLR_BLOCK_ID_DATA_SHORT
	blockIDDataLong  = 254 // XLR_BLOCK_ID_DATA_LONG

	// MaxBlocks is the most blocks one record may reference.
	MaxBlocks = 4
)

// Flags for RegisterBlock (REGBUF_*).
const (
	// RegForceImage always includes a full-page image.
	RegForceImage uint8 = 1 << iota
	// RegNoImage never includes one.
	RegNoImage
	// RegWillInit: redo initialises the page from the record; no image.
	RegWillInit
	// RegStandard: the page has a standard layout, so the hole between
	// pd_lower and pd_upper is left out of an image.
	RegStandard
	// RegKeepData keeps the block's data even when an image is taken.
	RegKeepData
)

// RelFileNode names a relation's file (tablespace, database, relation).
type RelFileNode struct {
	Spc, DB, Rel uint32
}

// DefaultTablespace is pg_default's OID, the tablespace of every lockd
// relation.
const DefaultTablespace = 1663

var crcTable = crc32.MakeTable(crc32.Castagnoli)

type regBlock struct {
	flags   uint8
	rel     RelFileNode
	blk     uint32
	page    []byte // the page, for an image; nil: never an image
	dataOff int    // into Builder.data
	dataLen int
}

// Builder assembles one record (PostgreSQL's XLogBeginInsert,
// XLogRegisterBuffer, XLogRegisterBufData, XLogRegisterData and
// XLogRecordAssemble). Get one with WAL.Begin; it is reused per backend,
// so a steady-state insertion allocates nothing.
//
// A page registered for an image must stay locked exclusively until
// Insert returns: its bytes are read by Insert, and its LSN is the
// caller's to set afterwards (PageSetLSN).
type Builder struct {
	w      *WAL
	p      *locks.Proc
	rmid   RmgrID
	info   uint8
	xid    uint32
	blocks [MaxBlocks]regBlock
	nblk   int
	data   []byte // block data, back to back
	main   []byte
	buf    []byte // the assembled record
	inUse  bool
	commit bool // a commit record (MarkCommit)

	// set by assemble
	fpwLSN   LSN // oldest page LSN of a block that got no image (0: none)
	images   int
	imgBytes int
}

// SetXid sets the record's transaction id (xl_xid).
func (b *Builder) SetXid(xid uint32) { b.xid = xid }

// RegisterBlock adds block id (0..MaxBlocks-1, in order) of relation rel.
// page is the block's current contents (8 kB, with the page LSN in its
// first 8 bytes) if an image may be needed, else nil.
func (b *Builder) RegisterBlock(id int, rel RelFileNode, blk uint32, page []byte, flags uint8) {
	if id != b.nblk || id >= MaxBlocks {
		panic("wal: blocks must be registered in order, at most MaxBlocks")
	}
	b.blocks[id] = regBlock{flags: flags, rel: rel, blk: blk, page: page, dataOff: len(b.data)}
	b.nblk++
}

// BlockData appends data to block id's data (XLogRegisterBufData); it is
// left out when the block gets an image, unless RegKeepData.
func (b *Builder) BlockData(id int, data []byte) {
	blk := &b.blocks[id]
	if blk.dataOff+blk.dataLen != len(b.data) {
		panic("wal: block data must be appended block by block")
	}
	b.data = append(b.data, data...)
	blk.dataLen += len(data)
}

// MainData appends to the record's main data (XLogRegisterData).
func (b *Builder) MainData(data []byte) { b.main = append(b.main, data...) }

// Main returns the main data buffer so that callers can append encoded
// fields without a copy: b.SetMain(append(b.Main(), ...)).
func (b *Builder) Main() []byte { return b.main }

// SetMain replaces the main data with buf, which must extend b.Main().
func (b *Builder) SetMain(buf []byte) { b.main = buf }

// pageLSN reads the LSN a page carries in its first 8 bytes (pd_lsn).
func pageLSN(page []byte) LSN { return LSN(binary.NativeEndian.Uint64(page)) }

// SetPageLSN stores lsn as page's pd_lsn (PageSetLSN). The caller holds
// the page's content lock exclusively.
func SetPageLSN(page []byte, lsn LSN) { binary.NativeEndian.PutUint64(page, uint64(lsn)) }

// PageLSN returns page's pd_lsn.
func PageLSN(page []byte) LSN { return pageLSN(page) }

// hole returns the unused middle of a standard page (pd_lower..pd_upper),
// which images leave out.
func hole(page []byte) (off, length int) {
	lower := int(binary.NativeEndian.Uint16(page[12:]))
	upper := int(binary.NativeEndian.Uint16(page[14:]))
	if lower >= 24 && upper > lower && upper <= PageSize {
		return lower, upper - lower
	}
	return 0, 0
}

// assemble builds the record in b.buf for redo pointer redo and
// doPageWrites (XLogRecordAssemble), leaving xl_prev and the header CRC
// to insertion. It returns the record's length and the payload CRC.
func (b *Builder) assemble(redo LSN, doPageWrites bool) (totLen int, crc uint32) {
	var zeroHeader [recordHeaderSize]byte
	buf := append(b.buf[:0], zeroHeader[:]...)
	b.fpwLSN, b.images, b.imgBytes = 0, 0, 0
	var prevRel RelFileNode
	var img [MaxBlocks]bool
	var holeOff, holeLen [MaxBlocks]int
	for i := 0; i < b.nblk; i++ {
		blk := &b.blocks[i]
		needImage := false
		switch {
		case blk.page == nil || blk.flags&(RegNoImage|RegWillInit) != 0:
		case blk.flags&RegForceImage != 0:
			needImage = true
		case doPageWrites:
			pl := pageLSN(blk.page)
			if pl <= redo {
				needImage = true
			} else if b.fpwLSN == 0 || pl < b.fpwLSN {
				b.fpwLSN = pl
			}
		}
		img[i] = needImage
		withData := blk.dataLen > 0 && (!needImage || blk.flags&RegKeepData != 0)
		ff := uint8(0)
		if needImage {
			ff |= bkpbHasImage
		}
		if withData {
			ff |= bkpbHasData
		}
		if blk.flags&RegWillInit != 0 {
			ff |= bkpbWillInit
		}
		if i > 0 && blk.rel == prevRel {
			ff |= bkpbSameRel
		}
		dl := 0
		if withData {
			dl = blk.dataLen
		}
		buf = append(buf, byte(i), ff, byte(dl), byte(dl>>8))
		if needImage {
			if blk.flags&RegStandard != 0 {
				holeOff[i], holeLen[i] = hole(blk.page)
			}
			ilen := PageSize - holeLen[i]
			info := uint8(bimgApply)
			if holeLen[i] > 0 {
				info |= bimgHasHole
			}
			buf = append(buf, byte(ilen), byte(ilen>>8), byte(holeOff[i]), byte(holeOff[i]>>8), info)
			b.images++
			b.imgBytes += ilen
		}
		if ff&bkpbSameRel == 0 {
			buf = binary.LittleEndian.AppendUint32(buf, blk.rel.Spc)
			buf = binary.LittleEndian.AppendUint32(buf, blk.rel.DB)
			buf = binary.LittleEndian.AppendUint32(buf, blk.rel.Rel)
		}
		buf = binary.LittleEndian.AppendUint32(buf, blk.blk)
		prevRel = blk.rel
	}
	if n := len(b.main); n > 0 {
		if n <= 0xff {
			buf = append(buf, blockIDDataShort, byte(n))
		} else {
			buf = append(buf, blockIDDataLong)
			buf = binary.LittleEndian.AppendUint32(buf, uint32(n))
		}
	}
	for i := 0; i < b.nblk; i++ {
		blk := &b.blocks[i]
		if img[i] {
			buf = append(buf, blk.page[:holeOff[i]]...)
			buf = append(buf, blk.page[holeOff[i]+holeLen[i]:]...)
		}
		if blk.dataLen > 0 && (!img[i] || blk.flags&RegKeepData != 0) {
			buf = append(buf, b.data[blk.dataOff:blk.dataOff+blk.dataLen]...)
		}
	}
	buf = append(buf, b.main...)
	totLen = len(buf)
	binary.LittleEndian.PutUint32(buf[offTotLen:], uint32(totLen))
	binary.LittleEndian.PutUint32(buf[offXid:], b.xid)
	buf[offInfo] = b.info
	buf[offRmid] = uint8(b.rmid)
	b.buf = buf
	return totLen, crc32.Update(0, crcTable, buf[recordHeaderSize:])
}

// ImagesTaken reports how many full-page images the record just inserted
// carries.
func (b *Builder) ImagesTaken() int { return b.images }

// Record is one decoded record, as recovery hands it to a resource
// manager. Its slices point into the reader's buffer and are valid only
// during the redo call.
type Record struct {
	LSN    LSN // start
	EndLSN LSN // end (what pages modified by it get as their LSN)
	Rmid   RmgrID
	Info   uint8 // record type (high nibble) and flags
	Xid    uint32
	Prev   LSN
	Blocks []BlockRef
	Main   []byte
	TotLen int
}

// BlockRef is one block a record references.
type BlockRef struct {
	ID       int
	Rel      RelFileNode
	Blk      uint32
	WillInit bool
	HasImage bool
	Image    []byte // the whole page, hole restored (valid if HasImage)
	Data     []byte // block data (nil if none)
}

// Block returns block reference id, or nil.
func (r *Record) Block(id int) *BlockRef {
	for i := range r.Blocks {
		if r.Blocks[i].ID == id {
			return &r.Blocks[i]
		}
	}
	return nil
}

var errBadRecord = errors.New("wal: malformed record")

// decodeRecord parses a whole, CRC-checked record in raw into r, using
// scratch for restored page images (DecodeXLogRecord).
func decodeRecord(raw []byte, r *Record, images *[MaxBlocks][PageSize]byte) error {
	r.TotLen = len(raw)
	r.Xid = binary.LittleEndian.Uint32(raw[offXid:])
	r.Prev = LSN(binary.LittleEndian.Uint64(raw[offPrev:]))
	r.Info = raw[offInfo]
	r.Rmid = RmgrID(raw[offRmid])
	r.Blocks = r.Blocks[:0]
	r.Main = nil
	pos := recordHeaderSize
	type imgInfo struct {
		len, holeOff int
		hasHole      bool
	}
	var imgs [MaxBlocks]imgInfo
	var dataLens [MaxBlocks]int
	mainLen := 0
	var prevRel RelFileNode
	need := func(n int) bool { return pos+n <= len(raw) }
	// Headers come first; what follows them (images, block data, main
	// data) has the announced total length, which tells where they end.
	datatotal := 0
	for len(raw)-pos > datatotal {
		id := raw[pos]
		if id == blockIDDataShort || id == blockIDDataLong {
			if id == blockIDDataShort {
				if !need(2) {
					return errBadRecord
				}
				mainLen = int(raw[pos+1])
				pos += 2
			} else {
				if !need(5) {
					return errBadRecord
				}
				mainLen = int(binary.LittleEndian.Uint32(raw[pos+1:]))
				pos += 5
			}
			datatotal += mainLen
			break // the main-data header is the last header
		}
		if int(id) != len(r.Blocks) || id >= MaxBlocks || !need(4) {
			return errBadRecord
		}
		ff := raw[pos+1]
		dl := int(binary.LittleEndian.Uint16(raw[pos+2:]))
		pos += 4
		br := BlockRef{ID: int(id), WillInit: ff&bkpbWillInit != 0, HasImage: ff&bkpbHasImage != 0}
		if ff&bkpbHasData != 0 {
			dataLens[id] = dl
			datatotal += dl
		} else if dl != 0 {
			return errBadRecord
		}
		if br.HasImage {
			if !need(5) {
				return errBadRecord
			}
			imgs[id] = imgInfo{len: int(binary.LittleEndian.Uint16(raw[pos:])),
				holeOff: int(binary.LittleEndian.Uint16(raw[pos+2:])), hasHole: raw[pos+4]&bimgHasHole != 0}
			pos += 5
			if imgs[id].len > PageSize || imgs[id].holeOff > imgs[id].len || !imgs[id].hasHole && imgs[id].len != PageSize {
				return errBadRecord
			}
			datatotal += imgs[id].len
		}
		if ff&bkpbSameRel != 0 {
			if id == 0 {
				return errBadRecord
			}
			br.Rel = prevRel
		} else {
			if !need(12) {
				return errBadRecord
			}
			br.Rel = RelFileNode{binary.LittleEndian.Uint32(raw[pos:]), binary.LittleEndian.Uint32(raw[pos+4:]), binary.LittleEndian.Uint32(raw[pos+8:])}
			pos += 12
		}
		if !need(4) {
			return errBadRecord
		}
		br.Blk = binary.LittleEndian.Uint32(raw[pos:])
		pos += 4
		prevRel = br.Rel
		r.Blocks = append(r.Blocks, br)
	}
	for i := range r.Blocks {
		br := &r.Blocks[i]
		if br.HasImage {
			in := imgs[i]
			if !need(in.len) {
				return errBadRecord
			}
			dst := images[i][:]
			holeLen := PageSize - in.len
			copy(dst, raw[pos:pos+in.holeOff])
			clear(dst[in.holeOff : in.holeOff+holeLen])
			copy(dst[in.holeOff+holeLen:], raw[pos+in.holeOff:pos+in.len])
			br.Image = dst
			pos += in.len
		}
		if n := dataLens[i]; n > 0 {
			if !need(n) {
				return errBadRecord
			}
			br.Data = raw[pos : pos+n]
			pos += n
		}
	}
	if !need(mainLen) {
		return errBadRecord
	}
	if mainLen > 0 {
		r.Main = raw[pos : pos+mainLen]
	}
	pos += mainLen
	if pos != len(raw) {
		return errBadRecord
	}
	return nil
}

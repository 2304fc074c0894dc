package txn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/vfs"
	"lockd/wal"
)

// MultiXacts (PostgreSQL's multixact.c): a tuple's xmax names one
// transaction, but several may lock a row at once (FOR SHARE, FOR KEY
// SHARE), and a key-share locker may coexist with a non-key updater. Then
// xmax holds a MultiXactID — flagged by XmaxIsMulti in the tuple header —
// naming an immutable set of members, each an xid with a status saying how
// it holds the row. At most one member updates it.
//
// Layout, as PostgreSQL's two SLRUs: an offsets array (multi → index of its
// first member) and a members array (xid and status, 8 bytes each), both in
// 8 kB pages kept in memory and written at Checkpoint as 32-page segment
// files under DataDir/pg_multixact/offsets and .../members. A multi's
// members run from its offset to the next multi's (or nextOffset for the
// newest). Multis are never changed; adding a member makes a new one
// (expandMulti).
//
// Persistence: Checkpoint writes the pages and pg_multixact/checkpoint
// (next multi, next offset, oldest multi); the next-multi bound
// (pg_multixact/nextmulti) is written and fsynced before assignment passes
// it, 8192 ids at a time, as the next-xid bound is, so an id is never
// handed out twice. After a crash the multis created since the last
// checkpoint are lost and read as having no members: their lockers ended
// with the server, and an updater that cannot be found is taken as
// aborted, as the commit log takes unrecorded commits. A clean shutdown
// keeps them all. Lock-only multis could be dropped at restart; keeping
// them is simpler and harmless.
//
// Truncation: TruncateMultis forgets the multis below a cutoff the caller
// (VACUUM) proves no tuple refers to any more; MultiTruncationLimit bounds
// that cutoff by the multis of transactions still running, which may not
// be counted in a relation's floor yet.
//
// Locking: MultiXactGen (LWLock) serialises creation and the bound file;
// the pages, next and nextOffset are guarded by the members SLRU lock —
// shared to read a multi, exclusive (taken after MultiXactGen) to record
// one. Lookups happen under a buffer content lock; nothing takes a buffer
// lock while holding either.

// MultiXactID names a set of transactions holding one tuple (PostgreSQL's
// MultiXactId). It lives in a tuple's xmax when XmaxIsMulti is set.
type MultiXactID uint32

// Special multixact ids.
const (
	InvalidMultiXactID MultiXactID = 0
	FirstMultiXactID   MultiXactID = 1
)

func (m MultiXactID) String() string { return strconv.FormatUint(uint64(m), 10) }

// MultiStatus is how a member holds the tuple (MultiXactStatus), in
// PostgreSQL's order and values; the last two update it.
type MultiStatus uint8

// Member statuses.
const (
	MultiForKeyShare    MultiStatus = iota // SELECT FOR KEY SHARE (and foreign-key checks)
	MultiForShare                          // SELECT FOR SHARE
	MultiForNoKeyUpdate                    // SELECT FOR NO KEY UPDATE
	MultiForUpdate                         // SELECT FOR UPDATE
	MultiNoKeyUpdate                       // UPDATE that changes no key column
	MultiUpdate                            // UPDATE of a key column, or DELETE
)

var multiStatusNames = [...]string{"keysh", "sh", "fornokeyupd", "forupd", "nokeyupd", "upd"}

// String is the status as pgrowlocks prints it.
func (s MultiStatus) String() string {
	if int(s) < len(multiStatusNames) {
		return multiStatusNames[s]
	}
	return "status" + strconv.Itoa(int(s))
}

// IsUpdate reports whether the member updated or deleted the tuple
// (ISUPDATE_from_mxstatus).
func (s MultiStatus) IsUpdate() bool { return s > MultiForUpdate }

// Mode is the tuple lock strength the status amounts to
// (TUPLOCK_from_mxstatus).
func (s MultiStatus) Mode() TupleLockMode {
	switch s {
	case MultiForKeyShare:
		return LockTupleKeyShare
	case MultiForShare:
		return LockTupleShare
	case MultiForNoKeyUpdate, MultiNoKeyUpdate:
		return LockTupleNoKeyExclusive
	}
	return LockTupleExclusive
}

// MultiMember is one member of a multixact.
type MultiMember struct {
	Xid    Xid
	Status MultiStatus
}

const (
	mxOffsetsPerPage = slruPageSize / 4
	mxMembersPerPage = slruPageSize / 8
	// multiReserve is how far ahead of the next multi the persisted bound
	// moves each time assignment reaches it.
	multiReserve = 8192
	// multiStopLimit: lockd does not freeze multis either; stop while
	// plain comparisons are still correct.
	multiStopLimit   MultiXactID = 1<<31 - 3_000_000
	mxBoundFile                  = "nextmulti"
	mxCheckpointFile             = "checkpoint"
)

// multiXacts is the multixact store of a Manager. The zero value is an
// empty, non-persistent store whose locks are TrancheOther; Open inits it.
type multiXacts struct {
	gen   locks.LWLock // MultiXactGen: creation, bound; taken before slru
	slru  locks.LWLock // MultiXactMemberSLRU: everything below
	fs    vfs.FS
	wal   *wal.WAL    // creations are logged (nil: not)
	dir   string      // DataDir/pg_multixact, "" when not persistent
	bound MultiXactID // guarded by gen: persisted upper bound of assigned ids

	next       MultiXactID // next id to assign; guarded by slru (written holding gen too)
	nextOffset uint32      // next member index; guarded by slru
	oldest     MultiXactID // multis below it were truncated; guarded by slru
	offsets    slru        // guarded by slru
	members    slru        // guarded by slru
}

var (
	trancheMultiXactGen    = mustTranche("MultiXactGen")
	trancheMultiXactMember = mustTranche("MultiXactMemberSLRU")
)

func mustTranche(name string) locks.Tranche {
	t, err := locks.RegisterTranche(name)
	if err != nil {
		panic(err)
	}
	return t
}

// open initialises the store, loading it from dir ("" = not persistent).
func (mx *multiXacts) open(fsys vfs.FS, dir string) error {
	mx.fs = fsys
	mx.gen.Init(trancheMultiXactGen)
	mx.slru.Init(trancheMultiXactMember)
	mx.next, mx.oldest, mx.bound = FirstMultiXactID, FirstMultiXactID, FirstMultiXactID
	if dir == "" {
		return nil
	}
	mx.dir = dir
	mx.offsets.dir = filepath.Join(dir, "offsets")
	mx.members.dir = filepath.Join(dir, "members")
	mx.offsets.fs, mx.members.fs = fsys, fsys
	if err := mx.offsets.load(); err != nil {
		return err
	}
	if err := mx.members.load(); err != nil {
		return err
	}
	ck, ok, err := readWords(fsys, filepath.Join(dir, mxCheckpointFile), 3)
	if err != nil {
		return err
	}
	if ok {
		mx.next, mx.nextOffset, mx.oldest = MultiXactID(ck[0]), ck[1], MultiXactID(ck[2])
	}
	b, ok, err := readWords(fsys, filepath.Join(dir, mxBoundFile), 1)
	if err != nil {
		return err
	}
	if ok {
		mx.bound = MultiXactID(b[0])
	}
	return nil
}

// finishOpen skips the ids that were assigned before a crash but are
// known neither from the last checkpoint nor from the log's replay,
// recording them without members, and persists the bound. Open calls it
// at once without a log; with one, EndRecovery calls it after replay.
func (mx *multiXacts) finishOpen() error {
	if mx.dir == "" {
		return nil
	}
	if mx.bound > mx.next {
		for m := mx.next; m < mx.bound; m++ {
			mx.setOffset(m, mx.nextOffset)
		}
		mx.next = mx.bound
	}
	mx.bound = mx.next
	return writeWords(mx.fs, mx.dir, mxBoundFile, uint32(mx.next))
}

func (mx *multiXacts) offsetAt(m MultiXactID) (uint32, bool) {
	pg := mx.offsets.page(int(m/mxOffsetsPerPage), false)
	if pg == nil {
		return 0, false
	}
	i := int(m%mxOffsetsPerPage) * 4
	return binary.LittleEndian.Uint32(pg.data[i:]), true
}

func (mx *multiXacts) setOffset(m MultiXactID, off uint32) {
	pg := mx.offsets.page(int(m/mxOffsetsPerPage), true)
	binary.LittleEndian.PutUint32(pg.data[int(m%mxOffsetsPerPage)*4:], off)
	pg.dirty.Store(true)
}

func (mx *multiXacts) memberAt(off uint32) (MultiMember, bool) {
	pg := mx.members.page(int(off/mxMembersPerPage), false)
	if pg == nil {
		return MultiMember{}, false
	}
	v := binary.LittleEndian.Uint64(pg.data[int(off%mxMembersPerPage)*8:])
	return MultiMember{Xid: Xid(v), Status: MultiStatus(v >> 32)}, true
}

func (mx *multiXacts) setMember(off uint32, mem MultiMember) {
	pg := mx.members.page(int(off/mxMembersPerPage), true)
	binary.LittleEndian.PutUint64(pg.data[int(off%mxMembersPerPage)*8:], uint64(mem.Xid)|uint64(mem.Status)<<32)
	pg.dirty.Store(true)
}

// create records a new multixact with the given members (MultiXactIdCreate
// and RecordNewMultiXact).
// creator, if not nil, is the creating backend's oldestMulti, set to the
// new id unless already set.
func (mx *multiXacts) create(p *locks.Proc, members []MultiMember, creator *atomic.Uint32) (MultiXactID, error) {
	mx.gen.Acquire(p, locks.LWExclusive)
	defer mx.gen.Release(p)
	m := mx.next
	if m >= multiStopLimit {
		return InvalidMultiXactID, pgerr.New(pgerr.ProgramLimitExceeded,
			"database is not accepting commands that generate new MultiXactIds to avoid wraparound data loss").
			WithHint("lockd does not freeze multixacts; dump the data and initialize a new data directory.")
	}
	if mx.dir != "" && m >= mx.bound {
		b := m + multiReserve
		if err := writeWords(mx.fs, mx.dir, mxBoundFile, uint32(b)); err != nil {
			return InvalidMultiXactID, err
		}
		mx.bound = b
	}
	if creator != nil && creator.Load() == 0 {
		creator.Store(uint32(m))
	}
	mx.slru.Acquire(p, locks.LWExclusive)
	off := mx.nextOffset
	if mx.wal != nil {
		// XLOG_MULTIXACT_CREATE_ID, before the multixact exists: a tuple
		// naming it is logged later, so replay finds it recorded.
		b := mx.wal.Begin(p, wal.RmgrMultiXact, xlogMultixactCreateID)
		b.SetMain(encodeMulti(b.Main(), m, off, members))
		b.Insert()
	}
	mx.setOffset(m, off)
	for i, mem := range members {
		mx.setMember(off+uint32(i), mem)
	}
	mx.next = m + 1
	mx.nextOffset = off + uint32(len(members))
	mx.slru.Release(p)
	return m, nil
}

// get appends the members of multi to dst (GetMultiXactIdMembers). A multi
// that does not exist — truncated, lost in a crash, or never assigned —
// has none.
func (mx *multiXacts) get(p *locks.Proc, multi MultiXactID, dst []MultiMember) []MultiMember {
	mx.slru.Acquire(p, locks.LWShared)
	defer mx.slru.Release(p)
	if multi < mx.oldest || multi >= mx.next {
		return dst
	}
	start, ok := mx.offsetAt(multi)
	if !ok {
		return dst
	}
	end := mx.nextOffset
	if multi+1 < mx.next {
		if e, ok := mx.offsetAt(multi + 1); ok {
			end = e
		}
	}
	for off := start; off < end; off++ {
		mem, ok := mx.memberAt(off)
		if !ok {
			break
		}
		dst = append(dst, mem)
	}
	return dst
}

// truncate forgets the multis below oldest (TruncateMultiXact).
func (mx *multiXacts) truncate(p *locks.Proc, oldest MultiXactID) {
	mx.slru.Acquire(p, locks.LWExclusive)
	defer mx.slru.Release(p)
	oldest = min(oldest, mx.next)
	if oldest <= mx.oldest {
		return
	}
	off := mx.nextOffset
	if oldest < mx.next {
		if o, ok := mx.offsetAt(oldest); ok {
			off = o
		}
	}
	mx.oldest = oldest
	mx.offsets.truncate(int(oldest / mxOffsetsPerPage))
	mx.members.truncate(int(off / mxMembersPerPage))
}

// checkpoint writes the changed pages and the checkpoint record.
func (mx *multiXacts) checkpoint() error {
	if mx.dir == "" {
		return nil
	}
	mx.slru.Acquire(nil, locks.LWShared)
	next, nextOff, oldest := mx.next, mx.nextOffset, mx.oldest
	mx.slru.Release(nil)
	lock := func() { mx.slru.Acquire(nil, locks.LWShared) }
	unlock := func() { mx.slru.Release(nil) }
	if err := mx.offsets.checkpoint(lock, unlock); err != nil {
		return err
	}
	if err := mx.members.checkpoint(lock, unlock); err != nil {
		return err
	}
	return writeWords(mx.fs, mx.dir, mxCheckpointFile, uint32(next), nextOff, uint32(oldest))
}

// close checkpoints and records the exact next multi as the bound.
func (mx *multiXacts) close() error {
	if err := mx.checkpoint(); err != nil || mx.dir == "" {
		return err
	}
	mx.gen.Acquire(nil, locks.LWExclusive)
	defer mx.gen.Release(nil)
	mx.slru.Acquire(nil, locks.LWShared)
	next := mx.next
	mx.slru.Release(nil)
	if err := writeWords(mx.fs, mx.dir, mxBoundFile, uint32(next)); err != nil {
		return err
	}
	mx.bound = next
	return nil
}

// writeWords durably replaces dir/name with little-endian words and their
// CRC-32.
func writeWords(fsys vfs.FS, dir, name string, words ...uint32) error {
	b := make([]byte, 4*len(words)+4)
	for i, w := range words {
		binary.LittleEndian.PutUint32(b[4*i:], w)
	}
	binary.LittleEndian.PutUint32(b[4*len(words):], crc32.ChecksumIEEE(b[:4*len(words)]))
	if err := writeFileAtomic(fsys, dir, name, b); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

// readWords reads a file written by writeWords; ok is false if it does not
// exist.
func readWords(fsys vfs.FS, name string, n int) ([]uint32, bool, error) {
	b, err := vfs.ReadFile(fsys, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if len(b) != 4*n+4 || crc32.ChecksumIEEE(b[:4*n]) != binary.LittleEndian.Uint32(b[4*n:]) {
		return nil, false, fmt.Errorf("txn: %s is corrupt", name)
	}
	w := make([]uint32, n)
	for i := range w {
		w[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return w, true, nil
}

// xlogMultixactCreateID is the MultiXact record of a new multixact:
// id u32, first member's offset u32, member count u32, then per member
// xid u32 and status u8.
const xlogMultixactCreateID uint8 = 0x30

func encodeMulti(buf []byte, m MultiXactID, off uint32, members []MultiMember) []byte {
	buf = binary.LittleEndian.AppendUint32(buf, uint32(m))
	buf = binary.LittleEndian.AppendUint32(buf, off)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(members)))
	for _, mem := range members {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(mem.Xid))
		buf = append(buf, byte(mem.Status))
	}
	return buf
}

// RedoMultiXact replays a multixact's creation (multixact_redo): the same
// id gets the same members at the same offset, and the next id and offset
// move past them.
func (m *Manager) RedoMultiXact(rec *wal.Record) error {
	b := rec.Main
	if rec.Info != xlogMultixactCreateID || len(b) < 12 {
		return fmt.Errorf("malformed multixact record at %s", rec.LSN)
	}
	id := MultiXactID(binary.LittleEndian.Uint32(b))
	off := binary.LittleEndian.Uint32(b[4:])
	n := int(binary.LittleEndian.Uint32(b[8:]))
	if len(b) < 12+5*n {
		return fmt.Errorf("malformed multixact record at %s", rec.LSN)
	}
	mx := &m.multis
	mx.slru.Acquire(nil, locks.LWExclusive)
	defer mx.slru.Release(nil)
	mx.setOffset(id, off)
	for i := range n {
		e := b[12+5*i:]
		mx.setMember(off+uint32(i), MultiMember{Xid: Xid(binary.LittleEndian.Uint32(e)), Status: MultiStatus(e[4])})
	}
	if id >= mx.next {
		mx.next = id + 1
		mx.nextOffset = off + uint32(n)
	}
	return nil
}

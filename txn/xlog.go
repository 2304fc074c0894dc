package txn

import (
	"encoding/binary"
	"fmt"
	"time"

	"lockd/locks"
	"lockd/wal"
)

// Commit and abort records (PostgreSQL's RecordTransactionCommit,
// RecordTransactionAbort, XactLogCommitRecord, xact_redo).
//
// A transaction with an xid ends with a record in the write-ahead log:
//
//	Transaction COMMIT (0x00) / ABORT (0x20), xl_xid = the transaction's
//	xid, main data:
//	  xact_time  i64  µs since the Unix epoch
//	  xinfo      u32  0x01 subtransactions follow, 0x02 relation files
//	                  follow, 0x04 catalog changes follow (lockd's)
//	  [nsubxacts u32, subxids u32...]   committed (or aborted) children
//	  [nrels u32, relfile u32...]       files removed at commit (abort: the
//	                                    files the transaction created)
//	  [len u32, bytes]                  the catalog changes, opaque here
//
// Commit order (RecordTransactionCommit): the backend marks itself as
// delaying a checkpoint's start, inserts the record, flushes it if
// synchronous_commit says so (with commit_delay and commit_siblings, in
// wal.CommitFlush: group commit), sets the commit log, stops delaying
// checkpoints, and only then leaves the ProcArray. A checkpoint whose redo
// point falls after the record therefore writes a commit log that shows
// the commit.
//
// With synchronous_commit = off the record is not flushed: the WAL writer
// flushes it within three wal_writer_delays. Until then the commit log
// page remembers the record's LSN for the xid's group of 32 (PostgreSQL's
// group LSNs), and a visibility check does not set the "committed" hint
// bit on a tuple of that transaction: the hint would reach disk with the
// page, which waits only for the page's own LSN, and outlive a crash that
// loses the commit.
//
// An abort record is never flushed: a transaction whose abort is lost
// reads as aborted anyway.
//
// synchronous_commit local, remote_write, remote_apply and on all flush
// locally: lockd has no standbys (PostgreSQL's meaning with an empty
// synchronous_standby_names).

// Xact record types.
const (
	xlogXactCommit uint8 = 0x00
	xlogXactAbort  uint8 = 0x20

	xinfoHasSubxacts uint32 = 0x01
	xinfoHasRels     uint32 = 0x02
	xinfoHasCatalog  uint32 = 0x04
)

// SyncCommit is synchronous_commit.
type SyncCommit uint8

// synchronous_commit values, in PostgreSQL's order of strength.
const (
	SyncCommitOff SyncCommit = iota
	SyncCommitLocal
	SyncCommitRemoteWrite
	SyncCommitOn
	SyncCommitRemoteApply
)

// ParseSyncCommit parses a synchronous_commit value (the canonical
// spellings).
func ParseSyncCommit(s string) (SyncCommit, bool) {
	switch s {
	case "off":
		return SyncCommitOff, true
	case "local":
		return SyncCommitLocal, true
	case "remote_write":
		return SyncCommitRemoteWrite, true
	case "on":
		return SyncCommitOn, true
	case "remote_apply":
		return SyncCommitRemoteApply, true
	}
	return SyncCommitOn, false
}

// CommitOptions are the session's settings that decide how a commit
// waits: synchronous_commit, commit_delay and commit_siblings. The zero
// value is synchronous_commit = off; NewCommitOptions gives the defaults.
type CommitOptions struct {
	Sync     SyncCommit
	Delay    time.Duration // commit_delay
	Siblings int           // commit_siblings
}

// DefaultCommitOptions are PostgreSQL's defaults.
var DefaultCommitOptions = CommitOptions{Sync: SyncCommitOn, Siblings: 5}

// SetCommitOptions sets the options the next Commit uses (the session
// reads its settings at commit time: SET LOCAL synchronous_commit = off
// inside the transaction counts).
func (t *Txn) SetCommitOptions(o CommitOptions) { t.commitOpts = o; t.commitOptsSet = true }

// DropAtCommit records relation files the commit removes (its record
// lists them, and replay removes them). DropAtAbort records files an
// abort removes (those the transaction created). Both are forgotten when
// the transaction ends.
func (t *Txn) DropAtCommit(files ...uint32) { t.dropAtCommit = append(t.dropAtCommit, files...) }

// DropAtAbort: see DropAtCommit.
func (t *Txn) DropAtAbort(files ...uint32) { t.dropAtAbort = append(t.dropAtAbort, files...) }

// CommitRecord writes and flushes the transaction's commit record now,
// with payload (the catalog changes), before Commit finishes the commit:
// the catalog publishes its changes between the two, so that its file and
// the log agree. It gives the transaction an xid if it has none. The
// record is always flushed, whatever synchronous_commit says: the catalog
// file written next must not run ahead of the log. Commit must follow.
func (t *Txn) CommitRecord(payload []byte) (wal.LSN, error) {
	if _, err := t.AssignTopXid(); err != nil {
		return 0, err
	}
	lsn := t.writeCommitRecord(payload, true)
	t.commitWritten = true
	return lsn, nil
}

// writeCommitRecord inserts the commit record (RecordTransactionCommit up
// to the commit log) and flushes it unless the commit is asynchronous.
// It starts delaying checkpoints; finishCommit ends that.
func (t *Txn) writeCommitRecord(payload []byte, forceSync bool) wal.LSN {
	w := t.m.wal
	if w == nil {
		return 0
	}
	w.DelayCheckpointStart(t.p)
	t.delayingCkpt = true
	b := w.Begin(t.p, wal.RmgrXact, xlogXactCommit)
	b.SetXid(uint32(t.xid))
	b.MarkCommit()
	b.SetMain(encodeXact(b.Main(), t.subXids, t.dropAtCommit, payload))
	lsn := b.Insert()
	opts := t.commitOpts
	if !t.commitOptsSet {
		opts = DefaultCommitOptions
	}
	if forceSync || opts.Sync != SyncCommitOff || len(t.dropAtCommit) > 0 {
		w.CommitFlush(t.p, lsn, opts.Delay, opts.Siblings)
		t.asyncLSN = 0
	} else {
		w.SetAsyncXactLSN(lsn)
		t.asyncLSN = lsn
		t.slot.stats.asyncCommits.Add(1)
	}
	return lsn
}

// writeAbortRecord logs the abort of xid with the given children
// (RecordTransactionAbort); not flushed.
func (t *Txn) writeAbortRecord(xid Xid, subs []Xid, drops []uint32) {
	w := t.m.wal
	if w == nil {
		return
	}
	b := w.Begin(t.p, wal.RmgrXact, xlogXactAbort)
	b.SetXid(uint32(xid))
	b.SetMain(encodeXact(b.Main(), subs, drops, nil))
	b.Insert()
}

func encodeXact(buf []byte, subs []Xid, rels []uint32, payload []byte) []byte {
	xinfo := uint32(0)
	if len(subs) > 0 {
		xinfo |= xinfoHasSubxacts
	}
	if len(rels) > 0 {
		xinfo |= xinfoHasRels
	}
	if payload != nil {
		xinfo |= xinfoHasCatalog
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(time.Now().UnixMicro()))
	buf = binary.LittleEndian.AppendUint32(buf, xinfo)
	if len(subs) > 0 {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(subs)))
		for _, x := range subs {
			buf = binary.LittleEndian.AppendUint32(buf, uint32(x))
		}
	}
	if len(rels) > 0 {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(rels)))
		for _, r := range rels {
			buf = binary.LittleEndian.AppendUint32(buf, r)
		}
	}
	if payload != nil {
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(payload)))
		buf = append(buf, payload...)
	}
	return buf
}

// XactRecord is a decoded commit or abort record.
type XactRecord struct {
	Commit  bool
	Xid     Xid
	Subxids []Xid
	Rels    []uint32 // relation files removed
	Catalog []byte   // catalog changes (commit), nil if none
	Time    time.Time
}

// DecodeXactRecord parses a Transaction record.
func DecodeXactRecord(rec *wal.Record) (XactRecord, error) {
	x := XactRecord{Xid: Xid(rec.Xid)}
	switch rec.Info & 0x70 {
	case xlogXactCommit:
		x.Commit = true
	case xlogXactAbort:
	default:
		return x, fmt.Errorf("unknown transaction record type %#x", rec.Info)
	}
	b := rec.Main
	bad := fmt.Errorf("transaction record at %s is malformed", rec.LSN)
	if len(b) < 12 {
		return x, bad
	}
	x.Time = time.UnixMicro(int64(binary.LittleEndian.Uint64(b)))
	xinfo := binary.LittleEndian.Uint32(b[8:])
	b = b[12:]
	list := func() ([]uint32, bool) {
		if len(b) < 4 {
			return nil, false
		}
		n := int(binary.LittleEndian.Uint32(b))
		if len(b) < 4+4*n {
			return nil, false
		}
		out := make([]uint32, n)
		for i := range out {
			out[i] = binary.LittleEndian.Uint32(b[4+4*i:])
		}
		b = b[4+4*n:]
		return out, true
	}
	if xinfo&xinfoHasSubxacts != 0 {
		l, ok := list()
		if !ok {
			return x, bad
		}
		for _, v := range l {
			x.Subxids = append(x.Subxids, Xid(v))
		}
	}
	if xinfo&xinfoHasRels != 0 {
		l, ok := list()
		if !ok {
			return x, bad
		}
		x.Rels = l
	}
	if xinfo&xinfoHasCatalog != 0 {
		if len(b) < 4 || len(b) < 4+int(binary.LittleEndian.Uint32(b)) {
			return x, bad
		}
		n := int(binary.LittleEndian.Uint32(b))
		x.Catalog = b[4 : 4+n]
	}
	return x, nil
}

// RedoXact replays a commit or abort record's effect on the commit log
// (xact_redo_commit, xact_redo_abort); the caller removes the files and
// applies the catalog changes.
func (m *Manager) RedoXact(x XactRecord) {
	st := Aborted
	if x.Commit {
		st = Committed
	}
	last := x.Xid
	for _, s := range x.Subxids {
		if Follows(s, last) {
			last = s
		}
	}
	if last.IsNormal() {
		m.clog.lock.Acquire(nil, locks.LWExclusive)
		m.clog.growLocked(int(last / clogXidsPerPage))
		m.clog.lock.Release(nil)
		if Follows(last, m.recoveredXid) {
			m.recoveredXid = last
		}
	}
	m.clog.setTreeStatus(nil, x.Xid, x.Subxids, st)
}

// EndRecovery ends start-up: every xid below next (or beyond the newest
// replayed, if later) that the commit log still shows in progress was cut
// short by the crash and is marked aborted, and multixact ids assigned
// but never recorded are skipped. Open calls it itself without a WAL;
// with one, the server calls it after replay, before any session starts.
func (m *Manager) EndRecovery(next Xid) error {
	if m.recoveredXid.IsNormal() && !Precedes(m.recoveredXid, next) {
		next = m.recoveredXid + 1
		m.nextXid.Store(uint32(next))
		m.latestCompletedXid = next - 1
	}
	if n := m.clog.abortInProgress(next); n > 0 {
		m.logger.Info("transactions in progress at last shutdown marked aborted", "count", n)
	}
	return m.multis.finishOpen()
}

// MinimumActiveBackends reports whether at least n backends besides the
// caller — which is committing, so its xid is still in the ProcArray —
// run a transaction with an xid (commit_siblings). PostgreSQL also skips
// backends waiting for a lock; lockd does not know that here.
func (m *Manager) MinimumActiveBackends(n int) bool {
	if n <= 0 {
		return true
	}
	count := -1 // the caller
	for i := range m.xids {
		if m.xids[i].Load() != 0 {
			count++
			if count >= n {
				return true
			}
		}
	}
	return false
}

// NextMulti returns the next multixact id and member offset (for
// checkpoint records).
func (m *Manager) NextMulti() (next, offset uint32) {
	mx := &m.multis
	mx.slru.Acquire(nil, locks.LWShared)
	defer mx.slru.Release(nil)
	return uint32(mx.next), mx.nextOffset
}

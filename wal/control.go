package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"time"

	"lockd/vfs"
)

// The control file, DataDir/global/pg_control (PostgreSQL's pg_control):
// where recovery starts. It is rewritten in place, 8 kB with the fields in
// the first sector and a CRC over them, so that its write is atomic on
// any disk (PostgreSQL keeps the struct under 512 bytes for the same
// reason).

// ControlVersion is the format of lockd's data directory, in the control
// file (PG_CONTROL_VERSION plays this part in PostgreSQL). A data
// directory of another format is refused, never misread.
const ControlVersion = 1

const (
	controlMagic    = "LKDCTL\x00\x00"
	controlFileSize = 8192 // PG_CONTROL_FILE_SIZE
	controlDataSize = 136
)

// DBState is the state the control file records (DBState).
type DBState uint32

// States, in PostgreSQL's order.
const (
	DBStartup DBState = iota
	DBShutdowned
	DBShutdownedInRecovery
	DBShutdowning
	DBInCrashRecovery
	DBInArchiveRecovery
	DBInProduction
)

var dbStateNames = [...]string{"starting up", "shut down", "shut down in recovery", "shutting down",
	"in crash recovery", "in archive recovery", "in production"}

func (s DBState) String() string {
	if int(s) < len(dbStateNames) {
		return dbStateNames[s]
	}
	return "unrecognized status code"
}

// CheckPoint is the contents of a checkpoint record and of the control
// file's copy of the latest one (CheckPoint in pg_control.h).
type CheckPoint struct {
	Redo           LSN // where replay starts
	TimeLineID     uint32
	FullPageWrites bool
	NextXid        uint32
	NextOid        uint32
	NextMulti      uint32
	NextMultiOff   uint32
	Time           int64 // Unix seconds
}

const checkPointSize = 8 + 4 + 4 + 4 + 4 + 4 + 4 + 8

func (c *CheckPoint) encode(buf []byte) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, uint64(c.Redo))
	buf = binary.LittleEndian.AppendUint32(buf, c.TimeLineID)
	fpw := uint32(0)
	if c.FullPageWrites {
		fpw = 1
	}
	buf = binary.LittleEndian.AppendUint32(buf, fpw)
	buf = binary.LittleEndian.AppendUint32(buf, c.NextXid)
	buf = binary.LittleEndian.AppendUint32(buf, c.NextOid)
	buf = binary.LittleEndian.AppendUint32(buf, c.NextMulti)
	buf = binary.LittleEndian.AppendUint32(buf, c.NextMultiOff)
	return binary.LittleEndian.AppendUint64(buf, uint64(c.Time))
}

// DecodeCheckPoint parses a checkpoint record's main data.
func DecodeCheckPoint(b []byte) (CheckPoint, bool) {
	if len(b) < checkPointSize {
		return CheckPoint{}, false
	}
	return CheckPoint{
		Redo: LSN(binary.LittleEndian.Uint64(b)), TimeLineID: binary.LittleEndian.Uint32(b[8:]),
		FullPageWrites: binary.LittleEndian.Uint32(b[12:]) != 0, NextXid: binary.LittleEndian.Uint32(b[16:]),
		NextOid: binary.LittleEndian.Uint32(b[20:]), NextMulti: binary.LittleEndian.Uint32(b[24:]),
		NextMultiOff: binary.LittleEndian.Uint32(b[28:]), Time: int64(binary.LittleEndian.Uint64(b[32:])),
	}, true
}

// controlFile is pg_control's data.
type controlFile struct {
	Version    uint32
	SystemID   uint64
	State      DBState
	Time       int64 // last update, Unix seconds
	CheckPoint LSN   // the latest checkpoint record
	Copy       CheckPoint
	SegSize    uint64
	BlockSize  uint32
	PageSize   uint32 // WAL page size
}

func newControlFile(segSize uint64) controlFile {
	// A system identifier as initdb makes one: seconds, microseconds and
	// the process id.
	now := time.Now()
	sysid := uint64(now.Unix())<<32 | uint64(now.Nanosecond()/1000)<<12 | uint64(os.Getpid()&0xfff)
	return controlFile{Version: ControlVersion, SystemID: sysid, State: DBShutdowned, SegSize: segSize,
		BlockSize: 8192, PageSize: PageSize}
}

func (c *controlFile) encode() []byte {
	buf := make([]byte, 0, controlFileSize)
	buf = append(buf, controlMagic...)
	buf = binary.LittleEndian.AppendUint32(buf, c.Version)
	buf = binary.LittleEndian.AppendUint32(buf, uint32(c.State))
	buf = binary.LittleEndian.AppendUint64(buf, c.SystemID)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(c.Time))
	buf = binary.LittleEndian.AppendUint64(buf, uint64(c.CheckPoint))
	buf = c.Copy.encode(buf)
	buf = binary.LittleEndian.AppendUint64(buf, c.SegSize)
	buf = binary.LittleEndian.AppendUint32(buf, c.BlockSize)
	buf = binary.LittleEndian.AppendUint32(buf, c.PageSize)
	for len(buf) < controlDataSize-4 {
		buf = append(buf, 0)
	}
	buf = binary.LittleEndian.AppendUint32(buf, crc32.Checksum(buf, crcTable))
	return buf[:controlFileSize]
}

func readControlFile(fsys vfs.FS, path string) (controlFile, error) {
	raw, err := vfs.ReadFile(fsys, path)
	if err != nil {
		return controlFile{}, err
	}
	var c controlFile
	if len(raw) < controlDataSize || string(raw[:8]) != controlMagic {
		return c, fmt.Errorf("%w: \"%s\" is not a lockd control file", ErrIncompatible, path)
	}
	c.Version = binary.LittleEndian.Uint32(raw[8:])
	if c.Version != ControlVersion {
		return c, fmt.Errorf("%w: the data directory was initialized with format %d, but this lockd needs format %d",
			ErrIncompatible, c.Version, ControlVersion)
	}
	if crc32.Checksum(raw[:controlDataSize-4], crcTable) != binary.LittleEndian.Uint32(raw[controlDataSize-4:]) {
		return c, fmt.Errorf("incorrect checksum in control file \"%s\"", path)
	}
	c.State = DBState(binary.LittleEndian.Uint32(raw[12:]))
	c.SystemID = binary.LittleEndian.Uint64(raw[16:])
	c.Time = int64(binary.LittleEndian.Uint64(raw[24:]))
	c.CheckPoint = LSN(binary.LittleEndian.Uint64(raw[32:]))
	c.Copy, _ = DecodeCheckPoint(raw[40:])
	off := 40 + checkPointSize
	c.SegSize = binary.LittleEndian.Uint64(raw[off:])
	c.BlockSize = binary.LittleEndian.Uint32(raw[off+8:])
	c.PageSize = binary.LittleEndian.Uint32(raw[off+12:])
	if c.BlockSize != 8192 || c.PageSize != PageSize {
		return c, fmt.Errorf("%w: the data directory was initialized with BLCKSZ %d and XLOG_BLCKSZ %d, but this lockd uses 8192 and %d",
			ErrIncompatible, c.BlockSize, c.PageSize, PageSize)
	}
	if c.SegSize < MinSegmentSize || c.SegSize > MaxSegmentSize || c.SegSize&(c.SegSize-1) != 0 {
		return c, fmt.Errorf("%w: invalid WAL segment size %d in control file", ErrIncompatible, c.SegSize)
	}
	return c, nil
}

// updateControlFile writes w.ctl in place and syncs it (UpdateControlFile).
// Caller holds ctlMu. A failure is a PANIC, as in PostgreSQL.
func (w *WAL) updateControlFile() {
	w.ctl.Time = time.Now().Unix()
	data := w.ctl.encode()
	f, err := w.fs.OpenFile(w.controlPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		w.panicErr("could not open file \"%s\": %v", w.controlPath(), err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		f.Close()
		w.panicErr("could not write to file \"%s\": %v", w.controlPath(), err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		w.panicErr("could not fsync file \"%s\": %v", w.controlPath(), err)
	}
	f.Close()
}

// SystemIdentifier returns the data directory's system identifier.
func (w *WAL) SystemIdentifier() uint64 {
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	return w.ctl.SystemID
}

// ControlState returns the state, latest checkpoint and its copy that the
// control file records.
func (w *WAL) ControlState() (DBState, LSN, CheckPoint) {
	w.ctlMu.Lock()
	defer w.ctlMu.Unlock()
	return w.ctl.State, w.ctl.CheckPoint, w.ctl.Copy
}

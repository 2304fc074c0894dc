package locks

// LockMode is a heavyweight lock mode, numbered as PostgreSQL numbers them
// (lockdefs.h): NoLock is 0 and AccessExclusiveLock is 8.
type LockMode uint8

// The eight heavyweight lock modes, weakest first.
const (
	NoLock                   LockMode = iota
	AccessShareLock                   // SELECT
	RowShareLock                      // SELECT FOR UPDATE / FOR SHARE
	RowExclusiveLock                  // INSERT, UPDATE, DELETE
	ShareUpdateExclusiveLock          // VACUUM (non-FULL), ANALYZE, CREATE INDEX CONCURRENTLY
	ShareLock                         // CREATE INDEX
	ShareRowExclusiveLock             // CREATE TRIGGER and many ALTER TABLE forms
	ExclusiveLock                     // blocks ROW SHARE; also xid/vxid ownership
	AccessExclusiveLock               // ALTER TABLE, DROP TABLE, VACUUM FULL, LOCK TABLE

	// MaxLockMode is the strongest mode.
	MaxLockMode = AccessExclusiveLock
	// NumLockModes is the size of arrays indexed by LockMode (index 0 unused).
	NumLockModes = int(MaxLockMode) + 1
)

var lockModeNames = [NumLockModes]string{
	"INVALID",
	"AccessShareLock",
	"RowShareLock",
	"RowExclusiveLock",
	"ShareUpdateExclusiveLock",
	"ShareLock",
	"ShareRowExclusiveLock",
	"ExclusiveLock",
	"AccessExclusiveLock",
}

// String returns PostgreSQL's name for the mode, as pg_locks.mode shows it.
func (m LockMode) String() string {
	if int(m) < len(lockModeNames) {
		return lockModeNames[m]
	}
	return "INVALID"
}

// ParseLockMode maps a mode name such as "RowExclusiveLock" back to its mode.
func ParseLockMode(s string) (LockMode, bool) {
	for i := AccessShareLock; i <= MaxLockMode; i++ {
		if lockModeNames[i] == s {
			return i, true
		}
	}
	return NoLock, false
}

// Valid reports whether m is one of the eight lock modes.
func (m LockMode) Valid() bool { return m >= AccessShareLock && m <= MaxLockMode }

// lockMask is a set of lock modes, bit m standing for mode m (LOCKBIT_ON).
type lockMask uint16

func modeBit(m LockMode) lockMask { return 1 << m }

// conflictTab is PostgreSQL's LockConflicts table: conflictTab[m] is the set
// of modes that conflict with a request for m. The table is symmetric.
var conflictTab = [NumLockModes]lockMask{
	NoLock:          0,
	AccessShareLock: modeBit(AccessExclusiveLock),
	RowShareLock:    modeBit(ExclusiveLock) | modeBit(AccessExclusiveLock),
	RowExclusiveLock: modeBit(ShareLock) | modeBit(ShareRowExclusiveLock) |
		modeBit(ExclusiveLock) | modeBit(AccessExclusiveLock),
	ShareUpdateExclusiveLock: modeBit(ShareUpdateExclusiveLock) | modeBit(ShareLock) |
		modeBit(ShareRowExclusiveLock) | modeBit(ExclusiveLock) | modeBit(AccessExclusiveLock),
	ShareLock: modeBit(RowExclusiveLock) | modeBit(ShareUpdateExclusiveLock) |
		modeBit(ShareRowExclusiveLock) | modeBit(ExclusiveLock) | modeBit(AccessExclusiveLock),
	ShareRowExclusiveLock: modeBit(RowExclusiveLock) | modeBit(ShareUpdateExclusiveLock) |
		modeBit(ShareLock) | modeBit(ShareRowExclusiveLock) | modeBit(ExclusiveLock) |
		modeBit(AccessExclusiveLock),
	ExclusiveLock: modeBit(RowShareLock) | modeBit(RowExclusiveLock) |
		modeBit(ShareUpdateExclusiveLock) | modeBit(ShareLock) | modeBit(ShareRowExclusiveLock) |
		modeBit(ExclusiveLock) | modeBit(AccessExclusiveLock),
	AccessExclusiveLock: modeBit(AccessShareLock) | modeBit(RowShareLock) |
		modeBit(RowExclusiveLock) | modeBit(ShareUpdateExclusiveLock) | modeBit(ShareLock) |
		modeBit(ShareRowExclusiveLock) | modeBit(ExclusiveLock) | modeBit(AccessExclusiveLock),
}

// Conflicts reports whether a request for m conflicts with a lock held (or
// awaited) in mode other by a different backend.
func (m LockMode) Conflicts(other LockMode) bool {
	if int(m) >= NumLockModes || int(other) >= NumLockModes {
		return false
	}
	return conflictTab[m]&modeBit(other) != 0
}

package txn

import "strconv"

// Xid is a transaction id (PostgreSQL's TransactionId). Xids are assigned
// from a 32-bit counter at a transaction's first write; the commit log
// records what became of each.
type Xid uint32

// Special xids, as PostgreSQL numbers them (transam.h).
const (
	InvalidXid     Xid = 0 // no transaction; reads as aborted
	BootstrapXid   Xid = 1 // the transaction that created the catalogs; always committed
	FrozenXid      Xid = 2 // "older than every snapshot": committed and visible to all
	FirstNormalXid Xid = 3 // the first xid ever assigned
)

// xidStopLimit is where assignment stops. lockd does not freeze tuples, so
// it cannot survive wraparound; stopping while every normal xid is within
// 2^31 of every other keeps both the modular comparisons below and plain
// integer comparisons (used for sorting snapshots) correct. PostgreSQL
// stops 3 million xids before its wrap limit in the same way
// (SetTransactionIdLimit's xidStopLimit).
const xidStopLimit Xid = 1<<31 - 3_000_000

// IsNormal reports whether x is an xid that assignment can hand out
// (TransactionIdIsNormal).
func (x Xid) IsNormal() bool { return x >= FirstNormalXid }

// IsValid reports whether x is not InvalidXid (TransactionIdIsValid).
func (x Xid) IsValid() bool { return x != InvalidXid }

func (x Xid) String() string { return strconv.FormatUint(uint64(x), 10) }

// Precedes reports whether a is logically before b (TransactionIdPrecedes):
// normal xids compare modulo 2^32, special xids precede every normal one.
func Precedes(a, b Xid) bool {
	if !a.IsNormal() || !b.IsNormal() {
		return a < b
	}
	return int32(a-b) < 0
}

// PrecedesOrEquals is TransactionIdPrecedesOrEquals.
func PrecedesOrEquals(a, b Xid) bool {
	if !a.IsNormal() || !b.IsNormal() {
		return a <= b
	}
	return int32(a-b) <= 0
}

// Follows is TransactionIdFollows.
func Follows(a, b Xid) bool { return Precedes(b, a) }

// FollowsOrEquals is TransactionIdFollowsOrEquals.
func FollowsOrEquals(a, b Xid) bool { return PrecedesOrEquals(b, a) }

// CommandID numbers the statements of one transaction (PostgreSQL's
// CommandId): a tuple's cmin/cmax say which command inserted/deleted it, and
// a statement sees the effects of earlier commands of its own transaction
// only.
type CommandID uint32

// FirstCommandID is the command id of a transaction's first statement.
const FirstCommandID CommandID = 0

// Isolation is a transaction's isolation level. SERIALIZABLE is run as
// RepeatableRead by the caller (lockd has no predicate locks), as
// PostgreSQL before 9.1 did.
type Isolation uint8

// Isolation levels. The zero value is PostgreSQL's default.
const (
	ReadCommitted Isolation = iota
	RepeatableRead
)

func (i Isolation) String() string {
	if i == RepeatableRead {
		return "repeatable read"
	}
	return "read committed"
}

// XidStatus is what the commit log says about an xid. The values are
// PostgreSQL's two-bit clog codes (TRANSACTION_STATUS_*).
type XidStatus uint8

// Commit log states.
const (
	InProgress XidStatus = 0
	Committed  XidStatus = 1
	Aborted    XidStatus = 2
)

func (s XidStatus) String() string {
	switch s {
	case InProgress:
		return "in progress"
	case Committed:
		return "committed"
	case Aborted:
		return "aborted"
	}
	return "status" + strconv.Itoa(int(s))
}

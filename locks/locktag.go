package locks

import "strconv"

// LockTagType says what kind of object a LockTag names. The values and
// pg_locks.locktype names are PostgreSQL's (lock.h LockTagType).
type LockTagType uint8

// Lock tag types in PostgreSQL's order.
const (
	LockTagRelation           LockTagType = iota // whole relation
	LockTagRelationExtend                        // the right to extend a relation
	LockTagDatabaseFrozenIDs                     // pg_database.datfrozenxid
	LockTagPage                                  // one page of a relation
	LockTagTuple                                 // one physical tuple
	LockTagTransaction                           // transaction (for waiting on xact done)
	LockTagVirtualTransaction                    // virtual transaction
	LockTagSpeculativeToken                      // speculative insertion xid + token
	LockTagObject                                // non-relation database object
	LockTagUserLock                              // reserved for old contrib/userlock
	LockTagAdvisory                              // advisory user locks
	LockTagApplyTransaction                      // logical replication apply transaction

	// NumLockTagTypes is the size of arrays indexed by LockTagType.
	NumLockTagTypes = int(LockTagApplyTransaction) + 1
)

var lockTagTypeNames = [NumLockTagTypes]string{
	"relation", "extend", "frozenid", "page", "tuple", "transactionid",
	"virtualxid", "spectoken", "object", "userlock", "advisory", "applytransaction",
}

// String returns the pg_locks.locktype name ("relation", "advisory", ...),
// which is also the wait_event name of a heavyweight lock wait.
func (t LockTagType) String() string {
	if int(t) < NumLockTagTypes {
		return lockTagTypeNames[t]
	}
	return "unknown"
}

// Lock methods (lock.h): advisory locks use the user lock method, all
// others the default one. pg_advisory_unlock_all releases only the former.
const (
	DefaultLockMethod uint8 = 1
	UserLockMethod    uint8 = 2
)

// LockTag identifies a lockable object; it mirrors PostgreSQL's LOCKTAG
// field for field, so pg_locks columns can be filled from it. LockTag is a
// small comparable value: use it as a map key, copy it freely. Build tags
// with the constructors below rather than by hand.
type LockTag struct {
	Field1 uint32
	Field2 uint32
	Field3 uint32
	Field4 uint16
	Type   LockTagType
	Method uint8
}

// RelationTag names relation rel of database db (db 0 = shared catalog).
func RelationTag(db, rel uint32) LockTag {
	return LockTag{Field1: db, Field2: rel, Type: LockTagRelation, Method: DefaultLockMethod}
}

// ExtendTag names the right to extend relation rel of database db.
func ExtendTag(db, rel uint32) LockTag {
	return LockTag{Field1: db, Field2: rel, Type: LockTagRelationExtend, Method: DefaultLockMethod}
}

// FrozenIDsTag names the datfrozenxid of database db.
func FrozenIDsTag(db uint32) LockTag {
	return LockTag{Field1: db, Type: LockTagDatabaseFrozenIDs, Method: DefaultLockMethod}
}

// PageTag names block blk of relation rel.
func PageTag(db, rel, blk uint32) LockTag {
	return LockTag{Field1: db, Field2: rel, Field3: blk, Type: LockTagPage, Method: DefaultLockMethod}
}

// TupleTag names tuple (blk,off) of relation rel.
func TupleTag(db, rel, blk uint32, off uint16) LockTag {
	return LockTag{Field1: db, Field2: rel, Field3: blk, Field4: off, Type: LockTagTuple, Method: DefaultLockMethod}
}

// TransactionTag names transaction id xid.
func TransactionTag(xid uint32) LockTag {
	return LockTag{Field1: xid, Type: LockTagTransaction, Method: DefaultLockMethod}
}

// VirtualXidTag names virtual transaction procNo/lxid.
func VirtualXidTag(procNo int32, lxid uint32) LockTag {
	return LockTag{Field1: uint32(procNo), Field2: lxid, Type: LockTagVirtualTransaction, Method: DefaultLockMethod}
}

// SpeculativeTokenTag names a speculative insertion token of xid.
func SpeculativeTokenTag(xid, token uint32) LockTag {
	return LockTag{Field1: xid, Field2: token, Type: LockTagSpeculativeToken, Method: DefaultLockMethod}
}

// AdvisoryTag64 is the tag of pg_advisory_lock(bigint) in database db:
// field2 holds the key's high 32 bits, field3 the low 32 bits, field4 = 1.
func AdvisoryTag64(db uint32, key int64) LockTag {
	return LockTag{Field1: db, Field2: uint32(uint64(key) >> 32), Field3: uint32(uint64(key)),
		Field4: 1, Type: LockTagAdvisory, Method: UserLockMethod}
}

// AdvisoryTag32 is the tag of pg_advisory_lock(int, int) in database db:
// field2 = k1, field3 = k2, field4 = 2.
func AdvisoryTag32(db uint32, k1, k2 int32) LockTag {
	return LockTag{Field1: db, Field2: uint32(k1), Field3: uint32(k2),
		Field4: 2, Type: LockTagAdvisory, Method: UserLockMethod}
}

// ObjectTag names sub-object sub of object objID of catalog classID in
// database db (db 0 for shared objects).
func ObjectTag(db, classID, objID uint32, sub uint16) LockTag {
	return LockTag{Field1: db, Field2: classID, Field3: objID, Field4: sub, Type: LockTagObject, Method: DefaultLockMethod}
}

// TypeName is pg_locks.locktype for the tag.
func (t LockTag) TypeName() string { return t.Type.String() }

// Describe renders the tag as PostgreSQL's DescribeLockTag does; the text
// appears in deadlock details and log_lock_waits messages.
func (t LockTag) Describe() string {
	u := func(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
	switch t.Type {
	case LockTagRelation:
		return "relation " + u(t.Field2) + " of database " + u(t.Field1)
	case LockTagRelationExtend:
		return "extension of relation " + u(t.Field2) + " of database " + u(t.Field1)
	case LockTagDatabaseFrozenIDs:
		return "pg_database.datfrozenxid of database " + u(t.Field1)
	case LockTagPage:
		return "page " + u(t.Field3) + " of relation " + u(t.Field2) + " of database " + u(t.Field1)
	case LockTagTuple:
		return "tuple (" + u(t.Field3) + "," + u(uint32(t.Field4)) + ") of relation " + u(t.Field2) +
			" of database " + u(t.Field1)
	case LockTagTransaction:
		return "transaction " + u(t.Field1)
	case LockTagVirtualTransaction:
		return "virtual transaction " + strconv.FormatInt(int64(int32(t.Field1)), 10) + "/" + u(t.Field2)
	case LockTagSpeculativeToken:
		return "speculative token " + u(t.Field2) + " of transaction " + u(t.Field1)
	case LockTagObject:
		return "object " + u(t.Field3) + " of class " + u(t.Field2) + " of database " + u(t.Field1)
	case LockTagUserLock:
		return "user lock [" + u(t.Field1) + "," + u(t.Field2) + "," + u(t.Field3) + "]"
	case LockTagAdvisory:
		return "advisory lock [" + u(t.Field1) + "," + u(t.Field2) + "," + u(t.Field3) + "," + u(uint32(t.Field4)) + "]"
	case LockTagApplyTransaction:
		return "remote transaction " + u(t.Field3) + " of subscription " + u(t.Field2) + " of database " + u(t.Field1)
	}
	return "unrecognized locktag type " + strconv.Itoa(int(t.Type))
}

// hash mixes all tag fields into 32 bits; the lock partition is its low
// bits and the strong-lock counter index its value modulo 1024, as
// PostgreSQL derives both from LockTagHashCode.
func (t LockTag) hash() uint32 {
	x := uint64(t.Field1) | uint64(t.Field2)<<32
	y := uint64(t.Field3) | uint64(t.Field4)<<32 | uint64(t.Type)<<48 | uint64(t.Method)<<56
	h := x*0x9E3779B97F4A7C15 ^ (y+0x632BE59BD9B4E019)*0xC2B2AE3D27D4EB4F
	h ^= h >> 31
	h *= 0xBF58476D1CE4E5B9
	h ^= h >> 29
	return uint32(h) ^ uint32(h>>32)
}

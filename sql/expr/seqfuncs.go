package expr

import (
	"lockd/sql/catalog"
)

// The sequence functions nextval, currval, setval and lastval, with
// PostgreSQL 15's semantics: values are never given back (a rolled-back
// nextval is lost), CACHE n hands each session n values at a time, and
// every function takes RowExclusiveLock on the sequence once per
// transaction (lock_and_open_sequence), held to the end of the
// transaction even if a subtransaction rolls back.

// seqElm is a session's SeqTableData: its currval state and cached values
// of one sequence.
type SeqElm struct {
	Oid       uint32
	Relfile   uint32           // the storage last seen; a new one drops the cache
	Data      *catalog.SeqData // storage of relfile
	Lxid      uint32           // the transaction that holds the lock
	LastValid bool             // last is currval's value
	Last      int64            // value last returned by nextval
	Cached    int64            // last value fetched into the cache; last != cached: values are cached
	Increment int64
}

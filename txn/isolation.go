package txn

import "errors"

// ErrSnapshotTaken is returned by SetIsolation once the transaction has
// taken its first snapshot.
var ErrSnapshotTaken = errors.New("txn: isolation level set after the first snapshot")

// SnapshotTaken reports whether the transaction has run a query (taken
// its first snapshot), after which its isolation level and read-write
// mode are fixed.
func (t *Txn) SnapshotTaken() bool { return t.haveSnap }

// SetIsolation changes the isolation level of a transaction that has not
// taken a snapshot yet (BEGIN ISOLATION LEVEL, SET TRANSACTION). As in
// PostgreSQL, it is refused after the first query of the transaction.
func (t *Txn) SetIsolation(iso Isolation) error {
	if t.haveSnap {
		return ErrSnapshotTaken
	}
	t.iso = iso
	return nil
}

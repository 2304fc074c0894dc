package analyze

import (
	"lockd/storage"
	"lockd/txn"
)

// lockSpec is one strength and wait policy of a FOR ... clause.
type LockSpec struct {
	Mode   txn.TupleLockMode
	Policy storage.WaitPolicy
	Word   string // FOR UPDATE, FOR SHARE, ... for messages
}

func (l *LockSpec) Merge(o *LockSpec) {
	if o.Mode > l.Mode {
		l.Mode, l.Word = o.Mode, o.Word
	}
	// NOWAIT beats SKIP LOCKED beats waiting
	if o.Policy == storage.WaitError || o.Policy == storage.WaitSkip && l.Policy == storage.WaitBlock {
		l.Policy = o.Policy
	}
}

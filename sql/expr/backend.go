package expr

import (
	"time"

	"lockd/guc"
	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"

	"lockd/sql/catalog"
	"lockd/sql/types"
)

// Backend is what the layers below the session use of the backend that
// runs a statement: who it is, its settings, its transaction and
// lock-manager Proc, its view of the catalog, the shared subsystems, and
// the notices it raises. A Session holds one; the analyzer, planner,
// executor, built-in functions and DDL reach the backend through it and
// never through the Session.
//
// A Backend belongs to its session's goroutine, except the Proc's fields
// that other backends read through atomics (wait events).
type Backend struct {
	Pid      int32
	User     string
	Database string
	Gucs     *guc.Session

	Proc *locks.Proc // this backend's lock-manager state
	Txn  txn.Txn     // the current transaction (reused)
	Tx   TxState     // whether a transaction or block is open (the session's state machine)
	Lxid uint32      // local transaction id of the virtual xid

	XactStart time.Time
	StmtStart time.Time

	PendingCat *catalog.CatalogState // this transaction's view of the catalog after its DDL
	CatOps     []*catalog.CatOp      // this transaction's DDL, replayed at commit

	Fc      types.FormatCtx
	tzName  string
	Notices []*pgerr.Error

	// the shared subsystems
	Locks   *locks.Manager
	Txns    *txn.Manager
	Store   *storage.Store
	Catalog *catalog.Catalog
	Seqs    *catalog.SeqStore
	DataDir string
	Host    Host
	Views   map[string]*View // the system views, by name
	Started time.Time        // when the server started

	SeqTab  map[uint32]*SeqElm // sequences used: currval and cached values (seqfuncs.go)
	LastSeq *SeqElm            // the sequence nextval last used (lastval)

	// foldedVolatile: analysis folded a clock- or zone-dependent constant
	// into the statement being analysed (its plan must not be cached)
	FoldedVolatile bool
}

func (s *Backend) Notice(severity, code, msg string) {
	s.Notices = append(s.Notices, &pgerr.Error{Severity: severity, Code: code, Message: msg})
}

func (s *Backend) RefreshFormat() {
	tz := s.Gucs.String("TimeZone")
	if tz == s.tzName && s.Fc.Loc != nil {
		return
	}
	s.tzName = tz
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	s.Fc.Loc = loc
}

package sql

import (
	"time"

	"lockd/guc"
	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
	"lockd/txn"
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
	pid      int32
	user     string
	database string
	gucs     *guc.Session

	proc *locks.Proc // this backend's lock-manager state
	txn  txn.Txn     // the current transaction (reused)
	tx   txState     // whether a transaction or block is open (the session's state machine)
	lxid uint32      // local transaction id of the virtual xid

	xactStart time.Time
	stmtStart time.Time

	pendingCat *catalogState // this transaction's view of the catalog after its DDL
	catOps     []*catOp      // this transaction's DDL, replayed at commit

	fc      formatCtx
	tzName  string
	notices []*pgerr.Error

	// the shared subsystems
	locks   *locks.Manager
	txns    *txn.Manager
	store   *storage.Store
	catalog *catalog
	seqs    *seqStore
	dataDir string
	host    Host
	views   map[string]*view // the system views, by name
	started time.Time        // when the server started

	seqTab  map[uint32]*seqElm // sequences used: currval and cached values (seqfuncs.go)
	lastSeq *seqElm            // the sequence nextval last used (lastval)

	// foldedVolatile: analysis folded a clock- or zone-dependent constant
	// into the statement being analysed (its plan must not be cached)
	foldedVolatile bool
}

func (s *Backend) notice(severity, code, msg string) {
	s.notices = append(s.notices, &pgerr.Error{Severity: severity, Code: code, Message: msg})
}

func (s *Backend) refreshFormat() {
	tz := s.gucs.String("TimeZone")
	if tz == s.tzName && s.fc.loc != nil {
		return
	}
	s.tzName = tz
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	s.fc.loc = loc
}

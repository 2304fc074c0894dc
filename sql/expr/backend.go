package expr

import (
	"net"
	"strings"
	"time"

	"lockd/guc"
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/stats"
	"lockd/sql/types"
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
	PID      int32
	User     string
	Database string
	Settings *guc.Session

	Proc     *locks.Proc // this backend's lock-manager state
	Txn      txn.Txn     // the current transaction (reused)
	Tx       TxState     // whether a transaction or block is open (the session's state machine)
	LocalXID uint32      // local transaction id of the virtual xid

	// the connection's ends (nil for a background worker)
	ClientAddr, ServerAddr net.Addr

	XactStart time.Time
	StmtStart time.Time

	PendingCat *catalog.CatalogState // this transaction's view of the catalog after its DDL
	CatOps     []*catalog.CatOp      // this transaction's DDL, replayed at commit
	// SubCatMark is len(CatOps) when the current subtransaction began (0
	// at the top level): CatOps[SubCatMark:] is its own DDL.
	SubCatMark int
	// ReadyPortals reports whether the session holds an open cursor or a
	// suspended protocol portal (PostgreSQL's !ThereAreNoReadyPortals);
	// nil where there are none (a background worker).
	ReadyPortals func() bool

	Format  types.FormatCtx
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

	SeqTab  map[uint32]*SeqElm // sequences used: currval and cached values (sql/funcs/sequence.go)
	LastSeq *SeqElm            // the sequence nextval last used (lastval)

	// foldedVolatile: analysis folded a clock- or zone-dependent constant
	// into the statement being analysed (its plan must not be cached)
	FoldedVolatile bool
	// SublinkRels are the relation locks of the subqueries in
	// expressions (sublinks) of the statement being analysed, which the
	// statement takes with its own (PostgreSQL's parser opens them)
	SublinkRels []RelLock

	// TabStats counts the rows this transaction inserts, updates and
	// deletes per table; at its end they go to Activity, this backend's
	// totals, which pg_stat_all_tables and autovacuum sum (sql/stats).
	TabStats stats.Xact
	Activity *stats.Backend
	// ResetStats resets the database's statistics counters
	// (pg_stat_reset; the facade's)
	ResetStats func()
	// ResetShared resets a server-wide view's counters
	// (pg_stat_reset_shared; the facade's)
	ResetShared func(target string) error
}

func (s *Backend) Notice(severity, code, msg string) {
	s.Notices = append(s.Notices, &pgerr.Error{Severity: severity, Code: code, Message: msg})
}

func (s *Backend) RefreshFormat() {
	s.Format.ByteaEscape = s.Settings.StringAt(gucByteaOutput) == "escape"
	tz := s.Settings.StringAt(gucTimeZone)
	if tz == s.tzName && s.Format.Loc != nil {
		return
	}
	s.tzName = tz
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC
	}
	s.Format.Loc = loc
}

// checkReadWrite is SET transaction_read_only = off's rule: a read-only
// transaction can become read-write only before its first query, and not
// inside a savepoint.
func (s *Backend) checkReadWrite() error {
	if s.Tx == TxNone || !s.Settings.BoolAt(gucTransactionReadOnly) {
		return nil
	}
	if s.Txn.NestLevel() > 1 { // IsSubTransaction
		return pgerr.New(pgerr.ActiveSQLTransaction, "cannot set transaction read-write mode inside a read-only transaction")
	}
	if s.Txn.SnapshotTaken() {
		return pgerr.New(pgerr.ActiveSQLTransaction, "transaction read-write mode must be set before any query")
	}
	return nil
}

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

// seqLogged gives the transaction an xid where PostgreSQL WAL-logs a
// sequence change (GetTopTransactionId in sequence.c): its commit then
// flushes the log. Unlogged sequences are not logged.
func (s *Backend) SeqLogged(def *catalog.SequenceDef) error {
	if def.Unlogged {
		return nil
	}
	_, err := s.Txn.AssignTopXid()
	return err
}

// Host is what the SQL layer needs from the server around it.
type Host interface {
	CancelBackend(pid int32) bool
	TerminateBackend(pid int32) bool
	ReloadConfig() bool
	// BackendUser is the user of the client backend pid (false: none).
	BackendUser(pid int32) (string, bool)
	// Checkpoint runs an immediate checkpoint and waits for it (CHECKPOINT).
	Checkpoint() error
}

type TxState uint8

const (
	TxNone     TxState = iota // no transaction
	TxImplicit                // an implicit transaction (statement or query string)
	TxBlock                   // BEGIN ...
	TxFailed                  // a block that saw an error
)

func (s *Backend) SignalBackend(pid int32, terminate bool) (types.Datum, error) {
	// pg_signal_backend's rules: only a superuser signals a superuser's
	// backend, and a role that is not one signals only its own (lockd has
	// no pg_signal_backend membership).
	if user, found := s.Host.BackendUser(pid); found && !s.Superuser() {
		target := s.Cat().Role(user)
		switch {
		case target != nil && target.Super && terminate:
			return types.Datum{}, pgerr.New(pgerr.InsufficientPrivilege, "must be a superuser to terminate superuser process")
		case target != nil && target.Super:
			return types.Datum{}, pgerr.New(pgerr.InsufficientPrivilege, "must be a superuser to cancel superuser query")
		case user != s.User && terminate:
			return types.Datum{}, pgerr.New(pgerr.InsufficientPrivilege, "must be a member of the role whose process is being terminated or member of pg_signal_backend")
		case user != s.User:
			return types.Datum{}, pgerr.New(pgerr.InsufficientPrivilege, "must be a member of the role whose query is being canceled or member of pg_signal_backend")
		}
	}
	var ok bool
	if terminate {
		ok = s.Host.TerminateBackend(pid)
	} else {
		ok = s.Host.CancelBackend(pid)
	}
	if !ok {
		s.Notice(pgerr.SeverityWarning, pgerr.Warning, "PID "+types.Itoa(int64(pid))+" is not a PostgreSQL backend process")
	}
	return types.BoolDatum(ok), nil
}

// checkSetPrivilege refuses a superuser setting to a role that is not
// one, as PostgreSQL's set_config_option does.
func (s *Backend) checkSetPrivilege(name string) error {
	if d, ok := guc.Lookup(name); ok && d.Context == guc.Superuser && !s.Superuser() {
		return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to set parameter \"%s\"", name)
	}
	return nil
}

// checkSessionAuthorization is SET SESSION AUTHORIZATION: only a
// superuser may, and lockd does not switch a session's identity, so it
// accepts only the session's own user (RESET goes back to it).
func (s *Backend) checkSessionAuthorization(name, value string) error {
	if !strings.EqualFold(name, "session_authorization") || value == s.User {
		return nil
	}
	if !s.Superuser() {
		return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to set session authorization")
	}
	return pgerr.NotSupported("SET SESSION AUTHORIZATION to another role is not supported by lockd")
}

func (s *Backend) Set(name, value string, local bool) error {
	if err := s.checkSetPrivilege(name); err != nil {
		return err
	}
	if err := s.checkSessionAuthorization(name, value); err != nil {
		return err
	}
	if strings.EqualFold(name, "role") {
		// SET ROLE: lockd has no membership, so a session can only be
		// its own role, which SET ROLE NONE and RESET ROLE return to.
		if value == "none" || value == s.User {
			return nil
		}
		if !s.Superuser() {
			return pgerr.New(pgerr.InsufficientPrivilege, "permission denied to set role \"%s\"", value)
		}
		return pgerr.NotSupported("SET ROLE to another role is not supported by lockd")
	}
	if strings.EqualFold(name, "transaction_read_only") {
		if d, ok := guc.Lookup(name); ok {
			if v, err := guc.ParseValue(d, value); err == nil && !v.Bool {
				if err := s.checkReadWrite(); err != nil {
					return err
				}
			}
		}
	}
	if strings.EqualFold(name, "transaction_isolation") && s.Tx != TxNone {
		// PostgreSQL: the level is fixed by the first query of a transaction.
		d, _, err := s.Settings.Show(name)
		if err == nil && d != value {
			if err := s.Txn.SetIsolation(IsolationOf(value)); err != nil {
				return pgerr.New(pgerr.ActiveSQLTransaction, "SET TRANSACTION ISOLATION LEVEL must be called before any query")
			}
		}
	}
	_, err := s.Settings.Set(name, value, local)
	if err == nil && (strings.EqualFold(name, "timezone") || strings.EqualFold(name, "bytea_output")) {
		s.RefreshFormat()
	}
	return err
}

// isolationOf maps a transaction_isolation value to the level lockd runs:
// SERIALIZABLE runs as REPEATABLE READ (documented), READ UNCOMMITTED as
// READ COMMITTED (as in PostgreSQL).
func IsolationOf(v string) txn.Isolation {
	switch strings.ToLower(v) {
	case "repeatable read", "serializable":
		return txn.RepeatableRead
	}
	return txn.ReadCommitted
}

func (s *Backend) SetDefault(name string, local bool) error {
	if err := s.checkSetPrivilege(name); err != nil {
		return err
	}
	if strings.EqualFold(name, "role") {
		return nil // RESET ROLE: back to the session's own role, which it is
	}
	_, err := s.Settings.SetDefault(name, local)
	if err == nil && (strings.EqualFold(name, "timezone") || strings.EqualFold(name, "bytea_output")) {
		s.RefreshFormat()
	}
	return err
}

// CurrentRole is the role the session runs as (nil if it has been
// dropped since the session began).
func (s *Backend) CurrentRole() *catalog.RoleDef { return s.Cat().Role(s.User) }

// Superuser reports whether the session's role is a superuser
// (PostgreSQL's superuser()).
func (s *Backend) Superuser() bool {
	r := s.CurrentRole()
	return r != nil && r.Super
}

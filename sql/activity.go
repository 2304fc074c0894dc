package sql

import (
	"net"
	"sync"
	"time"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/sysviews"
	"lockd/sql/types"
)

// activity is what pg_stat_activity shows of a session. It is written by
// the session's goroutine and read by others under mu.
type activity struct {
	mu           sync.Mutex
	state        string
	query        string
	queryStart   time.Time
	xactStart    time.Time
	stateChange  time.Time
	backendStart time.Time
	app          string
	clientAddr   net.Addr
	// time spent in the states pg_stat_database adds up, not counting
	// the current state (since stateChange)
	activeTime, idleInXactTime time.Duration
}

// leaveState adds the time spent in the current state to its total (mu
// held).
func (a *activity) leaveState(now time.Time) {
	switch a.state {
	case "active":
		a.activeTime += now.Sub(a.stateChange)
	case "idle in transaction", "idle in transaction (aborted)":
		a.idleInXactTime += now.Sub(a.stateChange)
	}
}

// times returns the session's total, active and idle-in-transaction
// times up to now (mu held).
func (a *activity) times(now time.Time) (total, active, idleInXact time.Duration) {
	active, idleInXact = a.activeTime, a.idleInXactTime
	switch a.state {
	case "active":
		active += now.Sub(a.stateChange)
	case "idle in transaction", "idle in transaction (aborted)":
		idleInXact += now.Sub(a.stateChange)
	}
	return now.Sub(a.backendStart), active, idleInXact
}

// startStatement records a running statement for pg_stat_activity.
func (s *Session) startStatement(text string, now time.Time) {
	a := &s.act
	a.mu.Lock()
	a.query = text
	a.queryStart = now
	a.xactStart = s.XactStart
	if a.state != "active" {
		a.leaveState(now)
		a.state = "active"
		a.stateChange = now
	}
	a.mu.Unlock()
}

// Idle records that the session waits for the client; the server calls
// it before each ReadyForQuery.
func (s *Session) Idle() {
	state := "idle"
	switch s.Tx {
	case expr.TxBlock:
		state = "idle in transaction"
	case expr.TxFailed:
		state = "idle in transaction (aborted)"
	}
	a := &s.act
	a.mu.Lock()
	if s.Tx == expr.TxNone {
		a.xactStart = time.Time{}
	}
	if a.state != state {
		now := time.Now()
		a.leaveState(now)
		a.state = state
		a.stateChange = now
	}
	a.mu.Unlock()
}

// workerActivity is the pg_stat_activity row of a background worker
// (autovacuum's): no user, client or application, its task as query.
func (s *Session) workerActivity() []types.Datum {
	a := &s.act
	a.mu.Lock()
	state, query := a.state, a.query
	qs, xs, sc, bs := a.queryStart, a.xactStart, a.stateChange, a.backendStart
	a.mu.Unlock()
	wt, wn := s.Proc.WaitEvent()
	return []types.Datum{
		types.IntDatum(catalog.DatabaseOID), types.TextDatum(s.Database), types.IntDatum(int64(s.PID)), types.NullDatum,
		types.NullDatum, types.NullDatum, types.TextDatum(""), types.NullDatum,
		types.NullDatum, types.NullDatum, funcs.TsDatum(bs),
		funcs.TsDatum(xs), funcs.TsDatum(qs), funcs.TsDatum(sc),
		funcs.TextOrNull(wt), funcs.TextOrNull(wn), funcs.TextOrNull(state), types.NullDatum,
		types.NullDatum, types.NullDatum, types.TextDatum(query), types.TextDatum(s.backendType),
	}
}

func (e *Engine) statActivityView() *expr.View {
	return &expr.View{
		Name: "pg_stat_activity",
		Oid:  sysviews.OidPgStatActivity,
		Cols: sysviews.Cols(sysviews.OidPgStatActivity,
			"datid", types.TypeOid, "datname", types.TypeName, "pid", types.TypeInt4, "leader_pid", types.TypeInt4,
			"usesysid", types.TypeOid, "usename", types.TypeName, "application_name", types.TypeText, "client_addr", types.TypeInet,
			"client_hostname", types.TypeText, "client_port", types.TypeInt4, "backend_start", types.TypeTimestamptz,
			"xact_start", types.TypeTimestamptz, "query_start", types.TypeTimestamptz, "state_change", types.TypeTimestamptz,
			"wait_event_type", types.TypeText, "wait_event", types.TypeText, "state", types.TypeText, "backend_xid", types.TypeXid,
			"backend_xmin", types.TypeXid, "query_id", types.TypeInt8, "query", types.TypeText, "backend_type", types.TypeText),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, s := range e.sessions() {
				if s.backendType != "" {
					if err := emit(s.workerActivity()); err != nil {
						return err
					}
					continue
				}
				a := &s.act
				a.mu.Lock()
				state, query := a.state, a.query
				qs, xs, sc, bs := a.queryStart, a.xactStart, a.stateChange, a.backendStart
				app, addr := s.Settings.String("application_name"), a.clientAddr
				if s.PID != ec.B.PID {
					app = a.app
				}
				a.mu.Unlock()
				wt, wn := s.Proc.WaitEvent()
				if wt == "" && (state == "idle" || state == "idle in transaction" || state == "idle in transaction (aborted)") {
					wt, wn = "Client", "ClientRead"
				}
				clientAddr, clientPort := types.NullDatum, types.NullDatum
				if ta, ok := addr.(*net.TCPAddr); ok {
					clientAddr = types.MakeInet(ta.AddrPort().Addr().Unmap())
					clientPort = types.IntDatum(int64(ta.Port))
				}
				row := []types.Datum{
					types.IntDatum(catalog.DatabaseOID), types.TextDatum(s.Database), types.IntDatum(int64(s.PID)), types.NullDatum,
					roleOID(ec, s.User), types.TextDatum(s.User), types.TextDatum(app), clientAddr,
					types.NullDatum, clientPort, funcs.TsDatum(bs),
					funcs.TsDatum(xs), funcs.TsDatum(qs), funcs.TsDatum(sc),
					funcs.TextOrNull(wt), funcs.TextOrNull(wn), funcs.TextOrNull(state), types.NullDatum,
					types.NullDatum, types.NullDatum, types.TextDatum(query), types.TextDatum("client backend"),
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// roleOID is the OID of the role named user (NULL if it has been
// dropped).
func roleOID(ec *expr.EvalCtx, user string) types.Datum {
	if r := ec.B.Cat().Role(user); r != nil {
		return types.OIDDatum(r.OID)
	}
	return types.NullDatum
}

// oidPgStatSSL is pg_stat_ssl's OID in lockd (PostgreSQL assigns view
// OIDs at initdb).
const oidPgStatSSL = 12150

// statSSLView is pg_stat_ssl: one row per client backend, whether its
// connection is encrypted and how.
func (e *Engine) statSSLView() *expr.View {
	return &expr.View{
		Name: "pg_stat_ssl", Oid: oidPgStatSSL,
		Cols: sysviews.Cols(oidPgStatSSL, "pid", types.TypeInt4, "ssl", types.TypeBool, "version", types.TypeText,
			"cipher", types.TypeText, "bits", types.TypeInt4, "client_dn", types.TypeText, "client_serial", types.TypeNumeric,
			"issuer_dn", types.TypeText),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, s := range e.sessions() {
				if s.backendType != "" {
					continue
				}
				n := types.NullDatum
				row := []types.Datum{types.IntDatum(int64(s.PID)), types.BoolDatum(s.ssl != nil), n, n, n, n, n, n}
				if x := s.ssl; x != nil {
					row[2], row[3], row[4] = types.TextDatum(x.Version), types.TextDatum(x.Cipher), types.IntDatum(int64(x.Bits))
					if x.ClientDN != "" {
						serial, err := types.ParseText(types.TypeNumeric, x.ClientSerial, nil)
						if err != nil {
							return err
						}
						row[5], row[6], row[7] = types.TextDatum(x.ClientDN), serial, types.TextDatum(x.IssuerDN)
					}
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

package sql

import (
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"lockd/locks"
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
}

// startStatement records a running statement for pg_stat_activity.
func (s *Session) startStatement(text string, now time.Time) {
	a := &s.act
	a.mu.Lock()
	a.query = text
	a.queryStart = now
	a.xactStart = s.xactStart
	if a.state != "active" {
		a.state = "active"
		a.stateChange = now
	}
	a.mu.Unlock()
}

// Idle records that the session waits for the client; the server calls
// it before each ReadyForQuery.
func (s *Session) Idle() {
	state := "idle"
	switch s.tx {
	case txBlock:
		state = "idle in transaction"
	case txFailed:
		state = "idle in transaction (aborted)"
	}
	a := &s.act
	a.mu.Lock()
	if s.tx == txNone {
		a.xactStart = time.Time{}
	}
	if a.state != state {
		a.state = state
		a.stateChange = time.Now()
	}
	a.mu.Unlock()
}

func tsDatum(t time.Time) Datum {
	if t.IsZero() {
		return NullDatum
	}
	return intDatum(t.UnixMicro())
}

func textOrNull(s string) Datum {
	if s == "" {
		return NullDatum
	}
	return textDatum(s)
}

func (e *Engine) statActivityView() *view {
	return &view{
		name: "pg_stat_activity",
		oid:  oidPgStatActivity,
		cols: cols(oidPgStatActivity,
			"datid", TypeOid, "datname", TypeName, "pid", TypeInt4, "leader_pid", TypeInt4,
			"usesysid", TypeOid, "usename", TypeName, "application_name", TypeText, "client_addr", TypeText,
			"client_hostname", TypeText, "client_port", TypeInt4, "backend_start", TypeTimestamptz,
			"xact_start", TypeTimestamptz, "query_start", TypeTimestamptz, "state_change", TypeTimestamptz,
			"wait_event_type", TypeText, "wait_event", TypeText, "state", TypeText, "backend_xid", TypeXid,
			"backend_xmin", TypeXid, "query_id", TypeInt8, "query", TypeText, "backend_type", TypeText),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, s := range e.sessions() {
				a := &s.act
				a.mu.Lock()
				state, query := a.state, a.query
				qs, xs, sc, bs := a.queryStart, a.xactStart, a.stateChange, a.backendStart
				app, addr := s.gucs.String("application_name"), a.clientAddr
				if s.pid != ec.s.pid {
					app = a.app
				}
				a.mu.Unlock()
				wt, wn := s.proc.WaitEvent()
				if wt == "" && (state == "idle" || state == "idle in transaction" || state == "idle in transaction (aborted)") {
					wt, wn = "Client", "ClientRead"
				}
				clientAddr, clientPort := NullDatum, NullDatum
				if ta, ok := addr.(*net.TCPAddr); ok {
					clientAddr = textDatum(ta.IP.String())
					clientPort = intDatum(int64(ta.Port))
				}
				row := []Datum{
					intDatum(DatabaseOID), textDatum(s.database), intDatum(int64(s.pid)), NullDatum,
					intDatum(10), textDatum(s.user), textDatum(app), clientAddr,
					NullDatum, clientPort, tsDatum(bs),
					tsDatum(xs), tsDatum(qs), tsDatum(sc),
					textOrNull(wt), textOrNull(wn), textOrNull(state), NullDatum,
					NullDatum, NullDatum, textDatum(query), textDatum("client backend"),
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgLocksView() *view {
	return &view{
		name: "pg_locks",
		oid:  oidPgLocks,
		cols: cols(oidPgLocks,
			"locktype", TypeText, "database", TypeOid, "relation", TypeOid, "page", TypeInt4,
			"tuple", TypeInt2, "virtualxid", TypeText, "transactionid", TypeXid, "classid", TypeOid,
			"objid", TypeOid, "objsubid", TypeInt2, "virtualtransaction", TypeText, "pid", TypeInt4,
			"mode", TypeText, "granted", TypeBool, "fastpath", TypeBool, "waitstart", TypeTimestamptz),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, st := range ec.s.locks.Status() {
				row := make([]Datum, 16)
				for i := range row {
					row[i] = NullDatum
				}
				t := st.Tag
				u := func(v uint32) Datum { return intDatum(int64(v)) }
				row[0] = textDatum(t.TypeName())
				switch t.Type {
				case locks.LockTagRelation, locks.LockTagRelationExtend:
					row[1], row[2] = u(t.Field1), u(t.Field2)
				case locks.LockTagDatabaseFrozenIDs:
					row[1] = u(t.Field1)
				case locks.LockTagPage:
					row[1], row[2], row[3] = u(t.Field1), u(t.Field2), u(t.Field3)
				case locks.LockTagTuple:
					row[1], row[2], row[3], row[4] = u(t.Field1), u(t.Field2), u(t.Field3), intDatum(int64(t.Field4))
				case locks.LockTagTransaction:
					row[6] = u(t.Field1)
				case locks.LockTagVirtualTransaction:
					row[5] = textDatum(strconv.FormatUint(uint64(t.Field1), 10) + "/" + strconv.FormatUint(uint64(t.Field2), 10))
				case locks.LockTagSpeculativeToken:
					row[6], row[8] = u(t.Field1), u(t.Field2)
				default: // object, userlock, advisory, applytransaction
					row[1], row[7], row[8], row[9] = u(t.Field1), u(t.Field2), u(t.Field3), intDatum(int64(t.Field4))
				}
				row[10] = textDatum(st.VXID)
				row[11] = intDatum(int64(st.PID))
				row[12] = textDatum(st.Mode.String())
				row[13] = boolDatum(st.Granted)
				row[14] = boolDatum(st.FastPath)
				if !st.Granted {
					row[15] = tsDatum(st.WaitStart)
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// sessions returns the live sessions ordered by pid.
func (e *Engine) sessions() []*Session {
	e.mu.Lock()
	out := make([]*Session, 0, len(e.live))
	for _, s := range e.live {
		out = append(out, s)
	}
	e.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].pid < out[j].pid })
	return out
}

// extensionView is pg_stat_lockd_extension: relation-extension counters
// per table (lockd's own view; PostgreSQL has none).
func extensionView() *view {
	return &view{
		name: "pg_stat_lockd_extension",
		oid:  oidPgStatExtension,
		cols: cols(oidPgStatExtension,
			"relid", TypeOid, "relname", TypeName, "extensions", TypeInt8, "pages_added", TypeInt8,
			"waits", TypeInt8, "wait_time", TypeFloat8),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			cat := ec.s.cat()
			byFile := map[uint32]*TableDef{}
			for _, t := range cat.Tables {
				byFile[t.RelFile] = t
			}
			for _, st := range ec.s.store.ExtensionStats() {
				t := byFile[uint32(st.Rel)]
				if t == nil {
					continue // an index, or a file of a dropped table
				}
				row := []Datum{intDatum(int64(t.OID)), textDatum(t.Name), intDatum(int64(st.Extensions)),
					intDatum(int64(st.PagesAdded)), intDatum(int64(st.Waits)), floatDatum(float64(st.WaitTime) / 1e6)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// session returns the live session with the given pid (the caller's own:
// views that show a session's private state ask for it by pid).
func (e *Engine) session(pid int32) *Session {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.live[pid]
}

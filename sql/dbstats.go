package sql

import (
	"time"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/sysviews"
	"lockd/sql/types"
)

// pg_stat_database: PostgreSQL 15's columns, one row per database plus the
// row of shared objects (datid 0, datname NULL). Every counter is summed
// when the view is read from counters each backend keeps for itself — the
// transaction manager's commits and aborts, the buffer pool's hits and
// reads, the lock manager's deadlocks, the table activity counts
// (sql/stats), the sessions' times — so nothing shared is written on the
// statement path. lockd has one database, so its row holds every count;
// it has no shared relations, so the shared row's counts are 0.

const oidPgStatDatabase = 12266

// sessionTotals are pg_stat_database's session counters of closed client
// sessions.
type sessionTotals struct {
	sessions                                int64
	sessionTime, activeTime, idleInXactTime time.Duration
	abandoned, fatal, killed                int64
}

// sessionStats sums the session counters of the closed and the live
// client sessions, and counts the live backends (workers included).
func (e *Engine) sessionStats() (t sessionTotals, backends int64) {
	e.mu.Lock()
	t = e.closedSessions
	live := make([]*Session, 0, len(e.live))
	for _, s := range e.live {
		live = append(live, s)
	}
	e.mu.Unlock()
	now := time.Now()
	for _, s := range live {
		backends++
		if s.backendType != "" {
			continue
		}
		s.act.mu.Lock()
		total, active, idle := s.act.times(now)
		s.act.mu.Unlock()
		t.sessions++
		t.sessionTime += total
		t.activeTime += active
		t.idleInXactTime += idle
	}
	return t, backends
}

// dbCounters are pg_stat_database's cumulative counters at one moment.
type dbCounters struct {
	at                                      time.Time // zero: never reset
	commits, aborts, reads, hits, deadlocks uint64
	sessions                                sessionTotals
}

// currentCounters reads the counters pg_stat_database shows of the
// database (the table activity counts are read from sql/stats).
func (e *Engine) currentCounters() dbCounters {
	xs := e.txns.Stats()
	bs := e.store.Stats()
	ls := e.locks.Stats()
	c := dbCounters{commits: xs.Commits, aborts: xs.Aborts, reads: bs.BufferReads, hits: bs.BufferHits}
	for t := range ls.Lock {
		for m := range ls.Lock[t] {
			c.deadlocks += ls.Lock[t][m].Deadlocks
		}
	}
	c.sessions, _ = e.sessionStats()
	return c
}

// resetStats is pg_stat_reset(): pg_stat_database's counters and every
// table's cumulative counts start again from zero, and stats_reset is now.
func (e *Engine) resetStats() {
	c := e.currentCounters()
	c.at = time.Now()
	e.cat.Stats().ResetCounters()
	e.store.ResetRelIO()
	e.mu.Lock()
	e.dbReset = c
	e.mu.Unlock()
}

func ms(d time.Duration) types.Datum { return types.FloatDatum(float64(d) / 1e6) }

func (e *Engine) statDatabaseView() *expr.View {
	return &expr.View{
		Name: "pg_stat_database", Oid: oidPgStatDatabase,
		Cols: sysviews.Cols(oidPgStatDatabase,
			"datid", types.TypeOid, "datname", types.TypeName, "numbackends", types.TypeInt4,
			"xact_commit", types.TypeInt8, "xact_rollback", types.TypeInt8, "blks_read", types.TypeInt8, "blks_hit", types.TypeInt8,
			"tup_returned", types.TypeInt8, "tup_fetched", types.TypeInt8, "tup_inserted", types.TypeInt8,
			"tup_updated", types.TypeInt8, "tup_deleted", types.TypeInt8, "conflicts", types.TypeInt8,
			"temp_files", types.TypeInt8, "temp_bytes", types.TypeInt8, "deadlocks", types.TypeInt8,
			"checksum_failures", types.TypeInt8, "checksum_last_failure", types.TypeTimestamptz,
			"blk_read_time", types.TypeFloat8, "blk_write_time", types.TypeFloat8,
			"session_time", types.TypeFloat8, "active_time", types.TypeFloat8, "idle_in_transaction_time", types.TypeFloat8,
			"sessions", types.TypeInt8, "sessions_abandoned", types.TypeInt8, "sessions_fatal", types.TypeInt8,
			"sessions_killed", types.TypeInt8, "stats_reset", types.TypeTimestamptz),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			i := func(v int64) types.Datum { return types.IntDatum(v) }
			z := i(0)
			// Shared objects: lockd has none.
			if err := emit([]types.Datum{i(0), types.NullDatum, z, z, z, z, z, z, z, z, z, z, z, z, z, z,
				types.NullDatum, types.NullDatum, types.FloatDatum(0), types.FloatDatum(0),
				types.FloatDatum(0), types.FloatDatum(0), types.FloatDatum(0), z, z, z, z, types.NullDatum}); err != nil {
				return err
			}
			c := e.currentCounters()
			_, backends := e.sessionStats()
			e.mu.Lock()
			r := e.dbReset
			e.mu.Unlock()
			d := func(now, then uint64) types.Datum { return types.IntDatum(int64(now - then)) }
			st, rs := c.sessions, r.sessions
			reset := types.NullDatum
			if !r.at.IsZero() {
				reset = types.IntDatum(r.at.UnixMicro())
			}
			// tup_returned: rows sequential scans returned and entries
			// index scans returned; tup_fetched: rows index scans fetched
			cat := ec.B.Cat()
			var ret, fetch, ins, upd, del int64
			for oid, a := range e.cat.Stats().Activity() {
				if cat.Indexes[oid] != nil {
					ret += a.IdxTupRead
					fetch += a.IdxTupFetch
					continue
				}
				ret += a.SeqTupRead
				ins += a.Inserted
				upd += a.Updated
				del += a.Deleted
			}
			// Checksums are off (data_checksums), so checksum_failures is
			// NULL; track_io_timing has no effect, so the block times
			// stay 0 as with PostgreSQL's default; lockd writes no
			// temporary files; conflicts happen only on standbys.
			return emit([]types.Datum{types.OIDDatum(catalog.DatabaseOID), types.TextDatum(ec.B.Database), i(backends),
				d(c.commits, r.commits), d(c.aborts, r.aborts), d(c.reads, r.reads), d(c.hits, r.hits),
				i(ret), i(fetch), i(ins), i(upd), i(del), z, z, z, d(c.deadlocks, r.deadlocks),
				types.NullDatum, types.NullDatum, types.FloatDatum(0), types.FloatDatum(0),
				ms(st.sessionTime - rs.sessionTime), ms(st.activeTime - rs.activeTime), ms(st.idleInXactTime - rs.idleInXactTime),
				i(st.sessions - rs.sessions), i(st.abandoned - rs.abandoned), i(st.fatal - rs.fatal), i(st.killed - rs.killed), reset})
		},
	}
}

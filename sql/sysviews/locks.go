package sysviews

import (
	"strconv"

	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

func PgLocksView() *expr.View {
	return &expr.View{
		Name: "pg_locks",
		Oid:  oidPgLocks,
		Cols: Cols(oidPgLocks,
			"locktype", types.TypeText, "database", types.TypeOid, "relation", types.TypeOid, "page", types.TypeInt4,
			"tuple", types.TypeInt2, "virtualxid", types.TypeText, "transactionid", types.TypeXid, "classid", types.TypeOid,
			"objid", types.TypeOid, "objsubid", types.TypeInt2, "virtualtransaction", types.TypeText, "pid", types.TypeInt4,
			"mode", types.TypeText, "granted", types.TypeBool, "fastpath", types.TypeBool, "waitstart", types.TypeTimestamptz),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, st := range ec.B.Locks.Status() {
				row := make([]types.Datum, 16)
				for i := range row {
					row[i] = types.NullDatum
				}
				t := st.Tag
				u := func(v uint32) types.Datum { return types.IntDatum(int64(v)) }
				row[0] = types.TextDatum(t.TypeName())
				switch t.Type {
				case locks.LockTagRelation, locks.LockTagRelationExtend:
					row[1], row[2] = u(t.Field1), u(t.Field2)
				case locks.LockTagDatabaseFrozenIDs:
					row[1] = u(t.Field1)
				case locks.LockTagPage:
					row[1], row[2], row[3] = u(t.Field1), u(t.Field2), u(t.Field3)
				case locks.LockTagTuple:
					row[1], row[2], row[3], row[4] = u(t.Field1), u(t.Field2), u(t.Field3), types.IntDatum(int64(t.Field4))
				case locks.LockTagTransaction:
					row[6] = u(t.Field1)
				case locks.LockTagVirtualTransaction:
					row[5] = types.TextDatum(strconv.FormatUint(uint64(t.Field1), 10) + "/" + strconv.FormatUint(uint64(t.Field2), 10))
				case locks.LockTagSpeculativeToken:
					row[6], row[8] = u(t.Field1), u(t.Field2)
				default: // object, userlock, advisory, applytransaction
					row[1], row[7], row[8], row[9] = u(t.Field1), u(t.Field2), u(t.Field3), types.IntDatum(int64(t.Field4))
				}
				row[10] = types.TextDatum(st.VXID)
				row[11] = types.IntDatum(int64(st.PID))
				row[12] = types.TextDatum(st.Mode.String())
				row[13] = types.BoolDatum(st.Granted)
				row[14] = types.BoolDatum(st.FastPath)
				if !st.Granted {
					row[15] = funcs.TsDatum(st.WaitStart)
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// extensionView is pg_stat_lockd_extension: relation-extension counters
// per table (lockd's own view; PostgreSQL has none).
func ExtensionView() *expr.View {
	return &expr.View{
		Name: "pg_stat_lockd_extension",
		Oid:  oidPgStatExtension,
		Cols: Cols(oidPgStatExtension,
			"relid", types.TypeOid, "relname", types.TypeName, "extensions", types.TypeInt8, "pages_added", types.TypeInt8,
			"waits", types.TypeInt8, "wait_time", types.TypeFloat8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			cat := ec.B.Cat()
			byFile := map[uint32]*catalog.TableDef{}
			for _, t := range cat.Tables {
				byFile[t.RelFile] = t
			}
			for _, st := range ec.B.Store.ExtensionStats() {
				t := byFile[uint32(st.Rel)]
				if t == nil {
					continue // an index, or a file of a dropped table
				}
				row := []types.Datum{types.IntDatum(int64(t.OID)), types.TextDatum(t.Name), types.IntDatum(int64(st.Extensions)),
					types.IntDatum(int64(st.PagesAdded)), types.IntDatum(int64(st.Waits)), types.FloatDatum(float64(st.WaitTime) / 1e6)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

const oidPgStatLock = 16001 // lockd's: PostgreSQL 19 adds the view

// StatLockView is PostgreSQL 19's pg_stat_lock: one row per lock type
// (pg_locks' locktype names). Its own columns keep PostgreSQL 19's meaning:
// waits and wait_time (milliseconds) count only the waits that ended with
// the lock granted after more than deadlock_timeout while log_lock_waits
// was on — the waits PostgreSQL logs as "acquired ... after"; and
// fastpath_exceeded counts relation locks that went to the shared lock
// table because the backend's fast-path slots were full. lockd's columns
// count every wait: lockd_waits, lockd_wait_time (milliseconds, while
// track_lock_timing is on), lockd_deadlocks and lockd_lock_timeouts. The
// counters are each backend's own, summed when the view is read;
// stats_reset is the server's start or the last
// pg_stat_reset_shared('lock') (PostgreSQL 19's target).
func StatLockView(r *SharedResets) *expr.View {
	return &expr.View{
		Name: "pg_stat_lock", Oid: oidPgStatLock,
		Cols: Cols(oidPgStatLock,
			"locktype", types.TypeText, "waits", types.TypeInt8, "wait_time", types.TypeInt8,
			"fastpath_exceeded", types.TypeInt8, "stats_reset", types.TypeTimestamptz,
			"lockd_waits", types.TypeInt8, "lockd_wait_time", types.TypeFloat8,
			"lockd_deadlocks", types.TypeInt8, "lockd_lock_timeouts", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			s := ec.B.Locks.Stats()
			base, resetAt := r.lockBase()
			i := func(v uint64) types.Datum { return types.IntDatum(int64(v)) }
			for t := range locks.NumLockTagTypes {
				var waits, waitMs, all, allNs, deadlocks, timeouts uint64
				for m := range s.Lock[t] {
					c, b := &s.Lock[t][m], &base.Lock[t][m]
					waits += c.LoggedWaits - b.LoggedWaits
					waitMs += c.LoggedWaitMs - b.LoggedWaitMs
					all += c.Waits - b.Waits
					allNs += c.WaitTimeNs - b.WaitTimeNs
					deadlocks += c.Deadlocks - b.Deadlocks
					timeouts += c.LockTimeouts - b.LockTimeouts
				}
				var exceeded uint64
				if locks.LockTagType(t) == locks.LockTagRelation {
					exceeded = s.FastPath.FallbacksFull - base.FastPath.FallbacksFull
				}
				if err := emit([]types.Datum{types.TextDatum(locks.LockTagType(t).String()), i(waits), i(waitMs), i(exceeded),
					types.IntDatum(at(resetAt, ec.B.Started).UnixMicro()), i(all), types.FloatDatum(float64(allNs) / 1e6), i(deadlocks), i(timeouts)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

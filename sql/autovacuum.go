package sql

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"time"

	"lockd/guc"
	"lockd/sql/commands"
	"lockd/sql/expr"
	"lockd/sql/stats"
)

// Autovacuum's analyze (PostgreSQL's autovacuum worker, as far as
// ANALYZE goes): each round, every table whose changes since its last
// ANALYZE exceed autovacuum_analyze_threshold +
// autovacuum_analyze_scale_factor × reltuples (relation_needs_vacanalyze;
// reltuples -1 counts as 0, a table never changed is left alone) is
// analysed by a worker backend of its own, which appears in pg_stat_activity
// and pg_locks while it works. The worker takes ShareUpdateExclusiveLock
// without waiting and passes over a table it cannot lock at once, and gives
// a table up when a backend comes to wait for one of its locks (PostgreSQL
// cancels an autovacuum that blocks someone after deadlock_timeout): it
// never holds up a user's session. Partitioned tables are not analysed
// (PostgreSQL 15 does not either); nothing is vacuumed. The server's
// instance owns the goroutine that runs rounds every autovacuum_naptime
// (server/instance.go).

// needsAnalyze lists the tables of the published catalog that autovacuum
// would analyse now, in OID order.
func (e *Engine) needsAnalyze(settings *guc.Session) []uint32 {
	cat := e.cat.State()
	act := e.cat.Stats().Activity()
	base := float64(settings.Int("autovacuum_analyze_threshold"))
	scale := settings.Real("autovacuum_analyze_scale_factor")
	var out []uint32
	for oid, t := range cat.Tables {
		a := act[oid]
		if t.Partitioned() || a == nil {
			continue
		}
		if needsAnalyze(a, cat.TableStats(oid), base, scale) {
			out = append(out, oid)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// needsAnalyze is relation_needs_vacanalyze's analyze test.
func needsAnalyze(a *stats.TableActivity, ts *stats.TableStats, base, scale float64) bool {
	reltuples := 0.0
	if ts != nil && ts.RelTuples > 0 {
		reltuples = ts.RelTuples
	}
	return float64(a.ModSinceAnalyze) > base+scale*reltuples
}

// AutoAnalyze runs one round of autovacuum's analyze, with settings
// (refreshed from the configuration first), and returns the tables it
// analysed. A worker backend, with a pid from newPID, exists only if
// some table needs it. Errors analysing one table are logged and the round goes on; ctx
// ends the round (shutdown).
func (e *Engine) AutoAnalyze(ctx context.Context, newPID func() int32, settings *guc.Session, log *slog.Logger) []string {
	settings.Refresh()
	todo := e.needsAnalyze(settings)
	if len(todo) == 0 {
		return nil
	}
	s, err := e.NewSession(SessionInfo{PID: newPID(), User: e.cat.State().OwnerName(), Database: "postgres", Settings: settings, BackendType: "autovacuum worker"})
	if err != nil {
		log.Warn("autovacuum: cannot start a worker", "err", err)
		return nil
	}
	defer s.Close()
	var done []string
	for _, oid := range todo {
		if ctx.Err() != nil {
			break
		}
		// table_recheck_autovac: another may have analysed it meanwhile
		cat := e.cat.State()
		t := cat.Tables[oid]
		a := e.cat.Stats().Activity()[oid]
		if t == nil || a == nil || !needsAnalyze(a, cat.TableStats(oid), float64(settings.Int("autovacuum_analyze_threshold")), settings.Real("autovacuum_analyze_scale_factor")) {
			continue
		}
		now := time.Now()
		s.beginTxn(now, expr.TxImplicit)
		s.startStatement("autovacuum: ANALYZE public."+t.Name, now)
		ec := expr.EvalCtx{B: &s.Backend, Exec: &s.Executor, Ctx: ctx, Run: expr.NewRun()}
		err := s.AutoAnalyzeTable(&ec, oid)
		s.endTxn(err == nil)
		s.Idle()
		switch {
		case err == nil:
			done = append(done, t.Name)
			log.Debug("automatic analyze", "table", t.Name, "duration", time.Since(now))
		case errors.Is(err, commands.ErrAutovacuumCanceled):
			log.Debug("canceling autovacuum task", "table", t.Name)
		case ctx.Err() != nil:
		default:
			log.Warn("automatic analyze failed", "table", t.Name, "err", err)
		}
	}
	return done
}

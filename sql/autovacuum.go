package sql

import (
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"time"

	"lockd/guc"
	"lockd/sql/commands"
	"lockd/sql/expr"
	"lockd/sql/stats"
)

// Autovacuum (PostgreSQL's autovacuum worker): each round, every table
// whose dead rows exceed autovacuum_vacuum_threshold +
// autovacuum_vacuum_scale_factor × reltuples, or whose rows inserted
// since its last VACUUM exceed autovacuum_vacuum_insert_threshold +
// autovacuum_vacuum_insert_scale_factor × reltuples (unless that
// threshold is -1), is vacuumed, and every table whose changes since its
// last ANALYZE exceed autovacuum_analyze_threshold +
// autovacuum_analyze_scale_factor × reltuples is analysed
// (relation_needs_vacanalyze; reltuples -1 counts as 0, a table never
// changed is left alone) — both in one go when both are due, by a worker
// backend of its own, which appears in pg_stat_activity and pg_locks
// while it works. The worker takes its locks without waiting and passes
// over a table it cannot lock at once, and gives a table up when a
// backend comes to wait for one of its locks (PostgreSQL cancels an
// autovacuum that blocks someone after deadlock_timeout): it never holds
// up a user's session. Partitioned tables are neither vacuumed nor
// analysed (PostgreSQL 15 does neither). The server's instance owns the
// goroutine that runs rounds every autovacuum_naptime
// (server/autovacuum.go).

// avThresholds are the autovacuum settings of one round.
type avThresholds struct {
	vacBase, vacScale float64
	insBase, insScale float64 // insBase < 0: no insert vacuums
	anlBase, anlScale float64
}

func thresholdsOf(settings *guc.Session) avThresholds {
	return avThresholds{
		vacBase: float64(settings.Int("autovacuum_vacuum_threshold")), vacScale: settings.Real("autovacuum_vacuum_scale_factor"),
		insBase: float64(settings.Int("autovacuum_vacuum_insert_threshold")), insScale: settings.Real("autovacuum_vacuum_insert_scale_factor"),
		anlBase: float64(settings.Int("autovacuum_analyze_threshold")), anlScale: settings.Real("autovacuum_analyze_scale_factor"),
	}
}

// avTask is one table's work in a round.
type avTask struct {
	oid             uint32
	vacuum, analyze bool
}

// needsWork lists the tables of the published catalog that autovacuum
// would vacuum or analyse now, in OID order.
func (e *Engine) needsWork(th avThresholds) []avTask {
	cat := e.cat.State()
	act := e.cat.Stats().Activity()
	var out []avTask
	for oid, t := range cat.Tables {
		a := act[oid]
		if t.Partitioned() || a == nil {
			continue
		}
		if vac, anl := th.due(a, cat.TableStats(oid)); vac || anl {
			out = append(out, avTask{oid, vac, anl})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].oid < out[j].oid })
	return out
}

// due is relation_needs_vacanalyze's two tests.
func (th avThresholds) due(a *stats.TableActivity, ts *stats.TableStats) (vacuum, analyze bool) {
	reltuples := 0.0
	if ts != nil && ts.RelTuples > 0 {
		reltuples = ts.RelTuples
	}
	vacuum = float64(a.Dead) > th.vacBase+th.vacScale*reltuples ||
		th.insBase >= 0 && float64(a.InsSinceVacuum) > th.insBase+th.insScale*reltuples
	analyze = float64(a.ModSinceAnalyze) > th.anlBase+th.anlScale*reltuples
	return vacuum, analyze
}

// Autovacuum runs one round of autovacuum, with settings (refreshed from
// the configuration first), and returns the tables it worked on. A worker
// backend, with a pid from newPID, exists only if some table needs it.
// Errors on one table are logged and the round goes on; ctx ends the
// round (shutdown).
func (e *Engine) Autovacuum(ctx context.Context, newPID func() int32, settings *guc.Session, log *slog.Logger) []string {
	settings.Refresh()
	th := thresholdsOf(settings)
	todo := e.needsWork(th)
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
	for _, task := range todo {
		if ctx.Err() != nil {
			break
		}
		// table_recheck_autovac: another may have done it meanwhile
		cat := e.cat.State()
		t := cat.Tables[task.oid]
		a := e.cat.Stats().Activity()[task.oid]
		if t == nil || a == nil {
			continue
		}
		vac, anl := th.due(a, cat.TableStats(task.oid))
		if !vac && !anl {
			continue
		}
		what := "VACUUM"
		switch {
		case vac && anl:
			what = "VACUUM ANALYZE"
		case anl:
			what = "ANALYZE"
		}
		now := time.Now()
		s.beginTxn(now, expr.TxImplicit)
		s.startStatement("autovacuum: "+what+" public."+t.Name, now)
		ec := expr.EvalCtx{B: &s.Backend, Exec: &s.Executor, Ctx: ctx, Run: expr.NewRun()}
		err := s.AutoVacuumTable(&ec, task.oid, vac, anl)
		s.endTxn(err == nil)
		s.Idle()
		switch {
		case err == nil:
			done = append(done, t.Name)
			log.Debug("automatic "+strings.ToLower(what), "table", t.Name, "duration", time.Since(now))
		case errors.Is(err, commands.ErrAutovacuumCanceled):
			log.Debug("canceling autovacuum task", "table", t.Name)
		case ctx.Err() != nil:
		default:
			log.Warn("automatic "+strings.ToLower(what)+" failed", "table", t.Name, "err", err)
		}
	}
	return done
}

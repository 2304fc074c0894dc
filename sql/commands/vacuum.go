package commands

import (
	"context"
	"math"
	"strings"
	"time"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/stats"
	"lockd/sql/types"
	"lockd/storage"
)

// VACUUM and ANALYZE (PostgreSQL's vacuum.c): the list of relations to
// process (a partitioned table named brings its partitions), the locks
// (ShareUpdateExclusiveLock on each relation, SKIP_LOCKED to pass over
// one that is locked), and, outside a transaction block, each relation
// in its own transaction as far as locks go: what was locked for one is
// released before the next (PostgreSQL commits a transaction per
// relation). VACUUM records the live rows it found (reltuples), ANALYZE
// computes statistics (analyze.go); both report to pg_stat_all_tables.

// vacuumOpts are a VACUUM or ANALYZE statement's options.
type vacuumOpts struct {
	vacuum, analyze, verbose, skipLocked bool
	// readAll: FREEZE or DISABLE_PAGE_SKIPPING, every heap page is read
	// (all-visible ones are passed over otherwise)
	readAll bool
	// auto: autovacuum runs it (skip what cannot be locked at once, give
	// a table up when someone waits for it, report as autoanalyze)
	auto bool
}

// vacuumRel is one relation to process and its ANALYZE column list.
type vacuumRel struct {
	t    *catalog.TableDef
	cols []string
}

func (s *Utility) CompileVacuum(v *pg.VacuumStmt, st *plan.Stmt) error {
	opts := vacuumOpts{vacuum: v.IsVacuumcmd, analyze: !v.IsVacuumcmd}
	for _, o := range v.Options {
		de := o.GetDefElem()
		on := true
		if de.Arg != nil {
			b, ok := types.ParseBool(analyze.DefString(de))
			if !ok {
				return pgerr.New(pgerr.SyntaxError, "%s requires a Boolean value", de.Defname)
			}
			on = b
		}
		switch de.Defname {
		case "full":
			if on {
				return pgerr.NotSupported("VACUUM FULL is not supported")
			}
		case "analyze":
			opts.analyze = opts.analyze || on
		case "verbose":
			opts.verbose = on
		case "skip_locked":
			opts.skipLocked = on
		case "freeze", "disable_page_skipping":
			opts.readAll = opts.readAll || on
		case "index_cleanup", "truncate", "process_toast", "parallel":
		}
	}
	type named struct {
		rv   *pg.RangeVar
		cols []string
	}
	var rels []named
	for _, r := range v.Rels {
		vr := r.GetVacuumRelation()
		n := named{rv: vr.Relation}
		for _, c := range vr.VaCols {
			n.cols = append(n.cols, c.GetString_().Sval)
		}
		if len(n.cols) > 0 && !opts.analyze {
			return pgerr.NotSupported("ANALYZE option must be specified when a column list is provided")
		}
		rels = append(rels, n)
	}
	tag := "VACUUM"
	if !opts.vacuum {
		tag = "ANALYZE"
	}
	st.Tag = tag
	if opts.vacuum {
		st.NoBlock = "VACUUM"
	}
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		var list []vacuumRel
		if len(rels) == 0 {
			cat := s.Cat()
			for _, n := range cat.TableNames() {
				list = append(list, vacuumRel{t: cat.Table(n)})
			}
		}
		for _, n := range rels {
			if analyze.SkipSequence(&s.Backend, n.rv, tag) { // sql/analyze/sequences.go
				continue
			}
			if s.skipNonTable(n.rv, opts) {
				continue
			}
			t, err := s.ResolveTable(n.rv)
			if err != nil {
				return "", NoPosition(err) // PostgreSQL reports no position here
			}
			list = append(list, vacuumRel{t: t, cols: n.cols})
			if t.Partitioned() {
				for _, k := range s.Cat().Inheritors(t) {
					list = append(list, vacuumRel{t: k, cols: n.cols})
				}
			}
		}
		return tag, s.Vacuum(ec, list, opts)
	}
	return nil
}

// skipNonTable warns about, and skips, an index named by VACUUM or
// ANALYZE; lockd's system catalogs (views) are passed over silently, as
// there is nothing in them to vacuum or analyse.
func (s *Utility) skipNonTable(rv *pg.RangeVar, opts vacuumOpts) bool {
	if _, ok := s.LookupView(rv); ok && s.Cat().Table(rv.Relname) == nil {
		return true
	}
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return false
	}
	oid, ok := s.Cat().ByName[rv.Relname]
	if !ok || s.Cat().Indexes[oid] == nil {
		return false
	}
	what := "vacuum"
	if !opts.vacuum {
		what = "analyze"
	}
	s.Notice(pgerr.SeverityWarning, pgerr.Warning, "skipping \""+rv.Relname+"\" --- cannot "+what+" non-tables or special system tables")
	return true
}

// AutoVacuumTable is autovacuum's VACUUM and/or ANALYZE of table oid
// (every column): locks taken only if free at once, the table given up
// (with ErrAutovacuumCanceled) when a backend comes to wait for one of
// them.
func (s *Utility) AutoVacuumTable(ec *expr.EvalCtx, oid uint32, vacuum, analyze bool) error {
	t := s.Cat().Tables[oid]
	if t == nil {
		return nil
	}
	return s.Vacuum(ec, []vacuumRel{{t: t}}, vacuumOpts{vacuum: vacuum, analyze: analyze, auto: true})
}

// autovacuumWaitPoll is how often an autovacuum's VACUUM looks for a
// backend waiting for one of its locks.
const autovacuumWaitPoll = 10 * time.Millisecond

// cancelOnWaiters returns ctx canceled with ErrAutovacuumCanceled as
// soon as a backend waits for a lock on t or one of its indexes (which
// PostgreSQL's deadlock check does to an autovacuum worker blocking
// someone), and the function that stops watching.
func (s *Utility) cancelOnWaiters(ctx context.Context, t *catalog.TableDef) (context.Context, func()) {
	tags := []locks.LockTag{locks.RelationTag(catalog.DatabaseOID, t.OID)}
	for _, ix := range s.Cat().TableIndexes(t) {
		tags = append(tags, locks.RelationTag(catalog.DatabaseOID, ix.OID))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(autovacuumWaitPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				for _, tag := range tags {
					if s.Locks.HasWaiters(tag) {
						cancel(ErrAutovacuumCanceled)
						return
					}
				}
			}
		}
	}()
	return ctx, func() { close(done); cancel(nil) }
}

// Vacuum runs VACUUM and/or ANALYZE over list, in order.
func (s *Utility) Vacuum(ec *expr.EvalCtx, list []vacuumRel, opts vacuumOpts) error {
	// PostgreSQL runs each relation in a transaction of its own unless
	// ANALYZE runs inside a transaction block or on a single relation.
	ownXacts := opts.vacuum || opts.auto || (s.Tx != expr.TxBlock && len(list) > 1)
	step := func(fn func() error) error {
		if !ownXacts {
			return fn()
		}
		mark := s.Locks.Mark(s.Proc)
		err := fn()
		s.Locks.ReleaseSince(s.Proc, mark)
		return err
	}
	for _, vr := range list {
		oid := vr.t.OID
		if opts.vacuum {
			skipped := false
			if err := step(func() (err error) { skipped, err = s.vacuumRel(ec, oid, opts); return err }); err != nil {
				return err
			}
			if skipped { // not analysed either
				continue
			}
		}
		if opts.analyze {
			if err := step(func() error { return s.analyzeRel(ec, oid, vr.cols, opts) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// openForVacuum locks table oid in ShareUpdateExclusiveLock and returns
// its definition then, nil to skip it (dropped meanwhile, or locked by
// another with SKIP_LOCKED: a warning, or for autovacuum silence) —
// vacuum_open_relation.
func (s *Utility) openForVacuum(ec *expr.EvalCtx, oid uint32, what string, opts vacuumOpts) (*catalog.TableDef, error) {
	t := s.Cat().Tables[oid]
	if t == nil {
		return nil, nil
	}
	tag := locks.RelationTag(catalog.DatabaseOID, oid)
	if opts.skipLocked || opts.auto {
		ok, err := s.Acquire(ec, tag, locks.ShareUpdateExclusiveLock, false, true)
		if err != nil {
			return nil, err
		}
		if !ok {
			if !opts.auto {
				s.Notice(pgerr.SeverityWarning, pgerr.LockNotAvailable, "skipping "+what+" of \""+t.Name+"\" --- lock not available")
			}
			return nil, nil
		}
	} else if err := s.LockNow(ec, oid, locks.ShareUpdateExclusiveLock); err != nil {
		return nil, err
	}
	return s.Cat().Tables[oid], nil
}

// lockIndexes takes mode on t's indexes (vac_open_indexes); autovacuum
// gives the table up rather than wait.
func (s *Utility) lockIndexes(ec *expr.EvalCtx, t *catalog.TableDef, mode locks.LockMode, opts vacuumOpts) (bool, error) {
	for _, ix := range s.Cat().TableIndexes(t) {
		ok, err := s.Acquire(ec, locks.RelationTag(catalog.DatabaseOID, ix.OID), mode, false, opts.auto)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// vacuumRel is lazy VACUUM of one table (a partitioned one has nothing
// to vacuum): dead rows go, pages whose rows all are visible to everyone
// are marked so in the visibility map, and reltuples, relpages,
// relallvisible and the table's activity counts get what it found (vac_update_relstats,
// pgstat_report_vacuum). Its indexes' counts change only when entries
// were removed from them, as btree's cleanup scans only then.
func (s *Utility) vacuumRel(ec *expr.EvalCtx, oid uint32, opts vacuumOpts) (skipped bool, err error) {
	t, err := s.openForVacuum(ec, oid, "vacuum", opts)
	if t == nil || err != nil {
		return t == nil, err
	}
	if t.Partitioned() {
		return false, nil
	}
	if ok, err := s.lockIndexes(ec, t, locks.RowExclusiveLock, opts); !ok || err != nil {
		return !ok, err
	}
	var idx []storage.RelID
	ixs := s.Cat().TableIndexes(t)
	for _, ix := range ixs {
		idx = append(idx, storage.RelID(ix.RelFile))
	}
	rel := storage.RelID(t.RelFile)
	multiAge := uint32(0) // read every page
	if !opts.readAll {
		multiAge = uint32(max(s.Settings.Int("vacuum_multixact_freeze_table_age"), 1))
	}
	ctx := ec.Ctx
	if opts.auto {
		var stop func()
		ctx, stop = s.cancelOnWaiters(ctx, t)
		defer stop()
	}
	vs, err := s.Store.VacuumSkipping(ctx, s.Proc, rel, s.Txns.OldestXmin(), idx, multiAge, s.vacuumCost(opts.auto))
	if err != nil {
		return false, err
	}
	pages, err := s.Store.RelationPages(rel)
	if err != nil {
		return false, err
	}
	allVisible, err := s.Store.AllVisiblePages(rel)
	if err != nil {
		return false, err
	}
	st := s.Catalog.Stats()
	tuples := estimateRelTuples(st.Table(oid), float64(pages), float64(vs.PagesScanned), float64(vs.TuplesLive))
	st.SetHeapSize(oid, tuples, float64(pages), float64(allVisible))
	if vs.IndexEntriesRemoved > 0 {
		for _, ix := range ixs {
			pages, _, n := s.IndexSize(ix)
			st.SetSize(ix.OID, n, pages)
		}
	}
	st.ReportVacuum(oid, int64(tuples), int64(vs.TuplesRecentlyDead), opts.auto, time.Now())
	return false, nil
}

// estimateRelTuples is vac_estimate_reltuples: the live rows VACUUM
// counted on the pages it scanned, with the old density for the pages it
// could not.
func estimateRelTuples(old *stats.TableStats, total, scanned, live float64) float64 {
	if scanned >= total {
		return live
	}
	oldTuples, oldPages := -1.0, 0.0
	if old != nil {
		oldTuples, oldPages = old.RelTuples, old.RelPages
	}
	if oldPages == total && scanned < total*0.02 {
		return oldTuples
	}
	if oldTuples < 0 || oldPages <= 0 {
		return math.Floor(live/scanned*total + 0.5)
	}
	return math.Floor(oldTuples/oldPages*(total-scanned) + live + 0.5)
}

// qualifiedName is "public.name", as VERBOSE messages print relations.
func qualifiedName(t *catalog.TableDef) string {
	return "public." + t.Name
}

// infoNotice sends an INFO message (VERBOSE).
func (s *Utility) infoNotice(msg string) {
	s.Notice(pgerr.SeverityInfo, pgerr.SuccessfulCompletion, strings.TrimSpace(msg))
}

// vacuumCost is the cost-based delay of a VACUUM (storage.VacuumCost):
// vacuum_cost_delay and vacuum_cost_limit for a manual one (a delay of 0,
// the default, turns it off), autovacuum_vacuum_cost_delay and
// autovacuum_vacuum_cost_limit for autovacuum's, each -1 meaning the
// manual setting. PostgreSQL divides autovacuum's limit among its
// running workers; lockd runs one.
func (s *Utility) vacuumCost(auto bool) storage.VacuumCost {
	delay, limit := s.Settings.Real("vacuum_cost_delay"), s.Settings.Int("vacuum_cost_limit")
	if auto {
		if d := s.Settings.Real("autovacuum_vacuum_cost_delay"); d >= 0 {
			delay = d
		}
		if l := s.Settings.Int("autovacuum_vacuum_cost_limit"); l > 0 {
			limit = l
		}
	}
	return storage.VacuumCost{
		Delay:     time.Duration(delay * float64(time.Millisecond)),
		Limit:     int(limit),
		PageHit:   int(s.Settings.Int("vacuum_cost_page_hit")),
		PageMiss:  int(s.Settings.Int("vacuum_cost_page_miss")),
		PageDirty: int(s.Settings.Int("vacuum_cost_page_dirty")),
	}
}

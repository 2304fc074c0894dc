package commands

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

func (s *Utility) CompileVacuum(v *pg.VacuumStmt, st *plan.Stmt) error {
	full, analyzeOnly := false, !v.IsVacuumcmd
	for _, o := range v.Options {
		de := o.GetDefElem()
		switch de.Defname {
		case "full":
			full = true
		case "analyze", "verbose", "freeze", "skip_locked", "disable_page_skipping", "index_cleanup", "truncate", "process_toast", "parallel":
		}
	}
	if full {
		return pgerr.NotSupported("VACUUM FULL is not supported")
	}
	var rvs []*pg.RangeVar
	for _, r := range v.Rels {
		rvs = append(rvs, r.GetVacuumRelation().Relation)
	}
	tag := "VACUUM"
	if analyzeOnly {
		tag = "ANALYZE"
	}
	st.Tag = tag
	if !analyzeOnly {
		st.NoBlock = "VACUUM"
	}
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		var tabs []*catalog.TableDef
		if len(rvs) == 0 {
			cat := s.Cat()
			for _, n := range cat.TableNames() {
				tabs = append(tabs, cat.Table(n))
			}
		}
		for _, rv := range rvs {
			if analyze.SkipSequence(&s.Backend, rv, tag) { // sql/analyze/sequences.go
				continue
			}
			t, err := s.ResolveTable(rv)
			if err != nil {
				return "", err
			}
			tabs = append(tabs, t)
		}
		tabs = s.vacuumTargets(tabs, len(rvs) > 0)
		for _, t := range tabs {
			if err := s.LockNow(ec, t.OID, locks.ShareUpdateExclusiveLock); err != nil {
				return "", err
			}
			if analyzeOnly {
				continue // lockd keeps no planner statistics
			}
			t = s.Cat().Tables[t.OID]
			if t == nil || t.Partitioned() {
				continue
			}
			var idx []storage.RelID
			for _, ix := range s.Cat().TableIndexes(t) {
				idx = append(idx, storage.RelID(ix.RelFile))
			}
			if _, err := s.Store.Vacuum(ec.Ctx, s.Proc, storage.RelID(t.RelFile), s.Txns.OldestXmin(), idx); err != nil {
				return "", err
			}
		}
		return tag, nil
	}
	return nil
}

// vacuumTargets expands partitioned tables named by VACUUM or ANALYZE into
// their partitions (a partitioned table has nothing to vacuum itself).
func (s *Utility) vacuumTargets(tabs []*catalog.TableDef, named bool) []*catalog.TableDef {
	if !named {
		return tabs
	}
	var out []*catalog.TableDef
	for _, t := range tabs {
		out = append(out, t)
		if t.Partitioned() {
			out = append(out, s.Cat().Inheritors(t)...)
		}
	}
	return out
}

package commands

import (
	"fmt"
	"slices"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// truncateKeys is heap_truncate_check_FKs for TRUNCATE of tabs, the
// leaves of rels (the tables named and, partitioned ones, everything under
// them, in ExecuteTruncate's order): a table of rels referenced by a
// foreign key of a table not truncated with it refuses; with CASCADE those
// tables are truncated too, locked AccessExclusiveLock, found round by
// round as heap_truncate_find_FKs finds them: each round's tables in OID
// order, a notice each — a partitioned referencing table's partitions
// included, which carry the foreign key too.
func (s *Utility) truncateKeys(ec *expr.EvalCtx, rels, tabs []*catalog.TableDef, cascade bool) ([]*catalog.TableDef, error) {
	cat := s.Cat()
	if len(cat.Constraints) == 0 {
		return tabs, nil
	}
	in := map[uint32]bool{}
	mark := func(t *catalog.TableDef) {
		in[t.OID] = true
		for _, a := range cat.Ancestors(t) {
			in[a.OID] = true
		}
	}
	for _, t := range rels {
		mark(t)
	}
	rels = append([]*catalog.TableDef(nil), rels...)
	for done := 0; done < len(rels); {
		var found []*catalog.TableDef
		seen := map[uint32]bool{}
		for ; done < len(rels); done++ {
			t := rels[done]
			for _, r := range append([]*catalog.TableDef{t}, cat.Ancestors(t)...) {
				for _, con := range cat.ReferencingKeys(r.OID) {
					owner := cat.Tables[con.Table]
					if in[con.Table] || owner == nil || seen[owner.OID] {
						continue
					}
					if !cascade {
						return nil, pgerr.NotSupported("cannot truncate a table referenced in a foreign key constraint").
							WithDetail(fmt.Sprintf("Table \"%s\" references \"%s\".", owner.Name, r.Name)).
							WithHint(fmt.Sprintf("Truncate table \"%s\" at the same time, or use TRUNCATE ... CASCADE.", owner.Name))
					}
					for _, k := range append([]*catalog.TableDef{owner}, cat.Inheritors(owner)...) {
						if !seen[k.OID] {
							seen[k.OID] = true
							found = append(found, k)
						}
					}
				}
			}
		}
		slices.SortFunc(found, func(a, b *catalog.TableDef) int { return int(a.OID) - int(b.OID) })
		for _, k := range found {
			s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("truncate cascades to table \"%s\"", k.Name))
			if err := s.LockNow(ec, k.OID, locks.AccessExclusiveLock); err != nil {
				return nil, err
			}
			mark(k)
			if !k.Partitioned() {
				tabs = append(tabs, k)
			}
			rels = append(rels, k)
		}
	}
	return tabs, nil
}

func (s *Utility) CompileTruncate(tr *pg.TruncateStmt, st *plan.Stmt) error {
	var rvs []*pg.RangeVar
	for _, r := range tr.Relations {
		rvs = append(rvs, r.GetRangeVar())
	}
	cascade := tr.Behavior == pg.DropBehavior_DROP_CASCADE
	restart := tr.RestartSeqs
	st.Tag = "TRUNCATE TABLE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		var tabs, rels []*catalog.TableDef
		for _, rv := range rvs {
			t, err := s.ResolveTable(rv)
			if err != nil {
				return "", err
			}
			if err := s.LockNow(ec, t.OID, locks.AccessExclusiveLock); err != nil {
				return "", err
			}
			leaves, err := s.truncateTargets(ec, t, rv.Inh)
			if err != nil {
				return "", err
			}
			tabs = append(tabs, leaves...)
			rels = append(rels, t)
			if rv.Inh && t.Partitioned() {
				rels = append(rels, s.Cat().Inheritors(t)...)
			}
		}
		tabs, err := s.truncateKeys(ec, rels, tabs, cascade) // foreign keys
		if err != nil {
			return "", err
		}
		for _, t := range tabs {
			// the new, empty storage is built as REINDEX builds it:
			// ShareLock on the table, AccessExclusiveLock on each index
			if err := s.LockNow(ec, t.OID, locks.ShareLock); err != nil {
				return "", err
			}
			for _, ix := range s.Cat().TableIndexes(t) {
				if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
					return "", err
				}
			}
			t = s.Cat().Tables[t.OID]
			op := &catalog.CatOp{Kind: "truncate", Oid: t.OID, OldFile: t.RelFile, OldIdx: map[uint32]uint32{}, NewIdx: map[uint32]uint32{}}
			op.Relfile = s.Catalog.AllocOID()
			if err := s.Store.CreateRelation(storage.RelID(op.Relfile)); err != nil {
				return "", err
			}
			for _, ix := range s.Cat().TableIndexes(t) {
				op.OldIdx[ix.OID] = ix.RelFile
				f := s.Catalog.AllocOID()
				if err := s.Store.CreateIndex(storage.RelID(f)); err != nil {
					return "", err
				}
				op.NewIdx[ix.OID] = f
			}
			s.AddCatOp(op)
			s.TabStats.Truncated(t.OID) // pgstat_count_truncate
		}
		if restart {
			if err := s.restartIdentity(ec, rvs, tabs); err != nil { // columnsequences.go
				return "", err
			}
		}
		return "TRUNCATE TABLE", nil
	}
	return nil
}

// truncateTargets is what TRUNCATE t empties: t, or every leaf partition
// of a partitioned t, all locked AccessExclusiveLock. inh is false for
// TRUNCATE ONLY.
func (s *Utility) truncateTargets(ec *expr.EvalCtx, t *catalog.TableDef, inh bool) ([]*catalog.TableDef, error) {
	if !t.Partitioned() {
		return []*catalog.TableDef{t}, nil
	}
	if !inh {
		return nil, pgerr.New(pgerr.WrongObjectType, "cannot truncate only a partitioned table").
			WithHint("Do not specify the ONLY keyword, or use TRUNCATE ONLY on the partitions directly.")
	}
	kids, err := s.lockInheritors(ec, t, locks.AccessExclusiveLock)
	if err != nil {
		return nil, err
	}
	var leaves []*catalog.TableDef
	for _, k := range kids {
		if !k.Partitioned() {
			leaves = append(leaves, k)
		}
	}
	return leaves, nil
}

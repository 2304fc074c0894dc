package exec

import (
	"strings"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// A table rewrite (ATRewriteTable + finish_heap_swap + reindex_relation):
// ALTER COLUMN TYPE that changes how values are stored, ADD COLUMN with a
// volatile default, SET LOGGED | UNLOGGED. The rows visible now — a
// snapshot taken after the AccessExclusiveLock was granted, so that rows
// committed while the ALTER waited are kept — are copied into new storage
// in the new definition, written by this transaction, and every index is
// rebuilt into a new file. pg_class.relfilenode changes; the old files go
// at commit, the new ones at rollback (the "rewrite" catalog operation).

// rewriteTable rewrites t (old: its definition now, which its storage
// holds) into definition nt, conv computing each new row from the old one.
func (s *Executor) RewriteTable(ec *expr.EvalCtx, old, nt *catalog.TableDef, conv func(ec *expr.EvalCtx, old, row []types.Datum) error) error {
	// reindex_relation's locks, on top of the ALTER's AccessExclusiveLock
	if err := s.LockNow(ec, old.OID, locks.ShareLock); err != nil {
		return err
	}
	idx := s.Cat().TableIndexes(old)
	for _, ix := range idx {
		if err := s.LockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	if _, err := s.Txn.AssignXid(); err != nil {
		return err
	}
	op := &catalog.CatOp{Kind: "rewrite", Oid: old.OID, OldFile: old.RelFile, OldIdx: map[uint32]uint32{}, NewIdx: map[uint32]uint32{}}
	op.Relfile = s.Catalog.AllocOID()
	if err := s.Store.CreateRelation(storage.RelID(op.Relfile)); err != nil {
		return err
	}
	for _, ix := range idx {
		f := s.Catalog.AllocOID()
		if err := s.Store.CreateIndex(storage.RelID(f)); err != nil {
			return err
		}
		op.OldIdx[ix.OID], op.NewIdx[ix.OID] = ix.RelFile, f
	}
	// the catalog first, so that a failure below removes the new files
	def := *nt
	def.RelFile, def.RowFormat = op.Relfile, 1
	def.Cols = append([]catalog.ColumnDef(nil), nt.Cols...)
	for i := range def.Cols {
		def.Cols[i].Missing = nil // every row has every attribute now
	}
	s.AddCatOp(&catalog.CatOp{Kind: "settable", Table: &def})
	s.AddCatOp(op)
	t := s.Cat().Tables[old.OID]
	idx = s.Cat().TableIndexes(t)

	s.Txn.CommandCounterIncrement() // this statement's earlier changes are read too
	restore := s.Txn.UseLatestSnapshot()
	defer restore()
	seen := make([]map[string]bool, len(idx))
	row := make([]types.Datum, len(t.Cols))
	var buf []byte
	err := s.ScanTable(ec, plan.NewTableSource(old, old.Name), func(oldRow []types.Datum) error {
		for i := range row {
			row[i] = types.NullDatum
		}
		if err := conv(ec, oldRow, row); err != nil {
			return err
		}
		for i := range t.Cols {
			if c := &t.Cols[i]; c.NotNull && row[i].Null {
				return pgerr.New(pgerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", c.Name, t.Name).OnColumn(t.Name, c.Name)
			}
		}
		buf = catalog.AppendRow(buf[:0], t, row)
		tid, err := s.Store.Insert(ec.Ctx, s.Proc, &s.Txn, storage.RelID(t.RelFile), buf, plan.Fillfactor(t))
		if err != nil {
			return err
		}
		for k, ix := range idx {
			key, null := s.IndexKey(t, ix, row)
			if ix.Unique && !null {
				if seen[k] == nil {
					seen[k] = map[string]bool{}
				}
				if seen[k][string(key)] {
					return pgerr.New(pgerr.UniqueViolation, "could not create unique index \"%s\"", ix.Name).
						WithDetail(strings.TrimSuffix(s.UniqueViolation(t, ix, row).(*pgerr.Error).Detail, " already exists.")+" is duplicated.").
						OnConstraint(t.Name, ix.Name)
				}
				seen[k][string(key)] = true
			}
			if err := s.Store.IndexInsert(s.Proc, storage.RelID(ix.RelFile), key, tid); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.Txn.CommandCounterIncrement() // the later subcommands read the new rows
	return nil
}

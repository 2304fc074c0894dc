package sql

import (
	"strings"

	"lockd/locks"
	"lockd/pgerr"
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
func (s *Executor) rewriteTable(ec *evalCtx, old, nt *TableDef, conv func(ec *evalCtx, old, row []Datum) error) error {
	// reindex_relation's locks, on top of the ALTER's AccessExclusiveLock
	if err := s.lockNow(ec, old.OID, locks.ShareLock); err != nil {
		return err
	}
	idx := s.cat().tableIndexes(old)
	for _, ix := range idx {
		if err := s.lockNow(ec, ix.OID, locks.AccessExclusiveLock); err != nil {
			return err
		}
	}
	if _, err := s.txn.AssignXid(); err != nil {
		return err
	}
	op := &catOp{kind: "rewrite", oid: old.OID, oldFile: old.RelFile, oldIdx: map[uint32]uint32{}, newIdx: map[uint32]uint32{}}
	op.relfile = s.catalog.allocOID()
	if err := s.store.CreateRelation(storage.RelID(op.relfile)); err != nil {
		return err
	}
	for _, ix := range idx {
		f := s.catalog.allocOID()
		if err := s.store.CreateIndex(storage.RelID(f)); err != nil {
			return err
		}
		op.oldIdx[ix.OID], op.newIdx[ix.OID] = ix.RelFile, f
	}
	// the catalog first, so that a failure below removes the new files
	def := *nt
	def.RelFile, def.RowFormat = op.relfile, 1
	def.Cols = append([]ColumnDef(nil), nt.Cols...)
	for i := range def.Cols {
		def.Cols[i].Missing = nil // every row has every attribute now
	}
	s.addCatOp(&catOp{kind: "settable", table: &def})
	s.addCatOp(op)
	t := s.cat().Tables[old.OID]
	idx = s.cat().tableIndexes(t)

	s.txn.CommandCounterIncrement() // this statement's earlier changes are read too
	restore := s.txn.UseLatestSnapshot()
	defer restore()
	seen := make([]map[string]bool, len(idx))
	row := make([]Datum, len(t.Cols))
	var buf []byte
	err := s.scanTable(ec, newTableSource(old, old.Name), func(oldRow []Datum) error {
		for i := range row {
			row[i] = NullDatum
		}
		if err := conv(ec, oldRow, row); err != nil {
			return err
		}
		for i := range t.Cols {
			if c := &t.Cols[i]; c.NotNull && row[i].Null {
				return pgerr.New(pgerr.NotNullViolation, "column \"%s\" of relation \"%s\" contains null values", c.Name, t.Name).OnColumn(t.Name, c.Name)
			}
		}
		buf = appendRow(buf[:0], t, row)
		tid, err := s.store.Insert(ec.ctx, s.proc, &s.txn, storage.RelID(t.RelFile), buf, fillfactor(t))
		if err != nil {
			return err
		}
		for k, ix := range idx {
			key := s.indexKey(t, ix, row)
			if key == nil {
				continue
			}
			if ix.Unique {
				if seen[k] == nil {
					seen[k] = map[string]bool{}
				}
				if seen[k][string(key)] {
					return pgerr.New(pgerr.UniqueViolation, "could not create unique index \"%s\"", ix.Name).
						WithDetail(strings.TrimSuffix(s.uniqueViolation(t, ix, row).(*pgerr.Error).Detail, " already exists.")+" is duplicated.").
						OnConstraint(t.Name, ix.Name)
				}
				seen[k][string(key)] = true
			}
			if err := s.store.IndexInsert(s.proc, storage.RelID(ix.RelFile), key, tid); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.txn.CommandCounterIncrement() // the later subcommands read the new rows
	return nil
}

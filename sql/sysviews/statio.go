package sysviews

import (
	"sort"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/storage"
)

// The block I/O views: pg_statio_all_tables, pg_statio_all_indexes and
// pg_statio_all_sequences, with their _user_ and _sys_ variants, with
// PostgreSQL 15's columns. The counts are the buffer pool's, per relation
// and per backend (storage/relio.go), summed when the view is read: a
// page found in the pool is a hit, one read from its file a read. Like
// pg_stat_all_tables, they list tables and partitions (not partitioned
// tables, which have no storage) and their indexes; lockd's system
// catalogs are views, so the _sys_ variants are empty.
//
// Where lockd differs, by having no such storage: it has no TOAST tables,
// so toast_blks_* and tidx_blks_* are NULL, as PostgreSQL shows for a
// table without one; its indexes are B+trees in memory, so an index's
// hits are the tree nodes its accesses visited and its reads stay 0; its
// sequences are kept outside the buffer pool (catalog/seqstore.go), so
// their counts stay 0.

const (
	oidPgStatioAllTables     = 12170
	oidPgStatioUserTables    = 12179
	oidPgStatioSysTables     = 12175
	oidPgStatioAllIndexes    = 12196
	oidPgStatioUserIndexes   = 12205
	oidPgStatioSysIndexes    = 12201
	oidPgStatioAllSequences  = 12209
	oidPgStatioUserSequences = 12218
	oidPgStatioSysSequences  = 12214
)

// StatioViews are the pg_statio_* views.
func StatioViews() []*expr.View {
	return []*expr.View{
		statioTablesView("pg_statio_all_tables", oidPgStatioAllTables), statioTablesView("pg_statio_user_tables", oidPgStatioUserTables),
		statioTablesView("pg_statio_sys_tables", oidPgStatioSysTables),
		statioIndexesView("pg_statio_all_indexes", oidPgStatioAllIndexes), statioIndexesView("pg_statio_user_indexes", oidPgStatioUserIndexes),
		statioIndexesView("pg_statio_sys_indexes", oidPgStatioSysIndexes),
		statioSequencesView("pg_statio_all_sequences", oidPgStatioAllSequences), statioSequencesView("pg_statio_user_sequences", oidPgStatioUserSequences),
		statioSequencesView("pg_statio_sys_sequences", oidPgStatioSysSequences),
	}
}

// storedTables are the tables with storage (relkind r: tables and
// partitions), by OID.
func storedTables(cat *catalog.CatalogState) []*catalog.TableDef {
	var out []*catalog.TableDef
	for _, t := range cat.Tables {
		if !t.Partitioned() {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

func statioTablesView(name string, oid uint32) *expr.View {
	return &expr.View{
		Name: name, Oid: oid,
		Cols: Cols(oid, "relid", types.TypeOid, "schemaname", types.TypeName, "relname", types.TypeName,
			"heap_blks_read", types.TypeInt8, "heap_blks_hit", types.TypeInt8, "idx_blks_read", types.TypeInt8,
			"idx_blks_hit", types.TypeInt8, "toast_blks_read", types.TypeInt8, "toast_blks_hit", types.TypeInt8,
			"tidx_blks_read", types.TypeInt8, "tidx_blks_hit", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if oid == oidPgStatioSysTables {
				return nil // lockd's system catalogs are views, not tables
			}
			cat := ec.B.Cat()
			io := ec.B.Store.RelIO()
			for _, t := range storedTables(cat) {
				heap := io[storage.RelID(t.RelFile)]
				// the sum over the table's indexes: NULL without one
				idxRead, idxHit := types.NullDatum, types.NullDatum
				for _, ix := range cat.TableIndexes(t) {
					v := io[storage.RelID(ix.RelFile)]
					if idxRead.Null {
						idxRead, idxHit = types.IntDatum(0), types.IntDatum(0)
					}
					idxRead.I += int64(v.Reads)
					idxHit.I += int64(v.Hits)
				}
				if err := emit([]types.Datum{types.OIDDatum(t.OID), types.TextDatum("public"), types.TextDatum(t.Name),
					types.IntDatum(int64(heap.Reads)), types.IntDatum(int64(heap.Hits)), idxRead, idxHit,
					types.NullDatum, types.NullDatum, types.NullDatum, types.NullDatum}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func statioIndexesView(name string, oid uint32) *expr.View {
	return &expr.View{
		Name: name, Oid: oid,
		Cols: Cols(oid, "relid", types.TypeOid, "indexrelid", types.TypeOid, "schemaname", types.TypeName,
			"relname", types.TypeName, "indexrelname", types.TypeName, "idx_blks_read", types.TypeInt8,
			"idx_blks_hit", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if oid == oidPgStatioSysIndexes {
				return nil
			}
			cat := ec.B.Cat()
			io := ec.B.Store.RelIO()
			for _, t := range storedTables(cat) {
				ixs := append([]*catalog.IndexDef(nil), cat.TableIndexes(t)...)
				sort.Slice(ixs, func(i, j int) bool { return ixs[i].OID < ixs[j].OID })
				for _, ix := range ixs {
					v := io[storage.RelID(ix.RelFile)]
					if err := emit([]types.Datum{types.OIDDatum(t.OID), types.OIDDatum(ix.OID), types.TextDatum("public"),
						types.TextDatum(t.Name), types.TextDatum(ix.Name), types.IntDatum(int64(v.Reads)),
						types.IntDatum(int64(v.Hits))}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
}

func statioSequencesView(name string, oid uint32) *expr.View {
	return &expr.View{
		Name: name, Oid: oid,
		Cols: Cols(oid, "relid", types.TypeOid, "schemaname", types.TypeName, "relname", types.TypeName,
			"blks_read", types.TypeInt8, "blks_hit", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if oid == oidPgStatioSysSequences {
				return nil
			}
			cat := ec.B.Cat()
			oids := make([]uint32, 0, len(cat.Sequences))
			for o := range cat.Sequences {
				oids = append(oids, o)
			}
			sort.Slice(oids, func(i, j int) bool { return oids[i] < oids[j] })
			for _, o := range oids {
				// lockd's sequences are not pages of the buffer pool
				if err := emit([]types.Datum{types.OIDDatum(o), types.TextDatum("public"), types.TextDatum(cat.Sequences[o].Name),
					types.IntDatum(0), types.IntDatum(0)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

package sysviews

import (
	"sort"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/stats"
	"lockd/sql/types"
)

// The planner statistics and table activity views: pg_statistic,
// pg_stats, pg_stat_all_tables and pg_stat_user_tables, with PostgreSQL
// 15's columns, computed from the instance's statistics store
// (sql/stats). anyarray columns print as PostgreSQL prints them: the
// array's text in the column's own type.

const (
	oidPgStatistic      = 2619
	oidPgStats          = 12053
	oidPgStatAllTables  = 12142
	oidPgStatUserTables = 12161
	oidPgStatSysTables  = 12152
)

var typeFloat4Array = types.Type{OID: 1021, Len: -1, Mod: -1, Name: "real[]"}

// StatisticsViews are the statistics views.
func StatisticsViews() []*expr.View {
	return []*expr.View{pgStatisticView(), pgStatsView(), statTablesView("pg_stat_all_tables", oidPgStatAllTables),
		statTablesView("pg_stat_user_tables", oidPgStatUserTables), statTablesView("pg_stat_sys_tables", oidPgStatSysTables),
		statIndexesView("pg_stat_all_indexes", oidPgStatAllIndexes), statIndexesView("pg_stat_user_indexes", oidPgStatUserIndexes),
		statIndexesView("pg_stat_sys_indexes", oidPgStatSysIndexes)}
}

// columnStat is one pg_statistic row: a column of a table and its
// statistics, when the column still exists with the type it was
// analysed with.
type columnStat struct {
	t   *catalog.TableDef
	pos int
	ts  *stats.TableStats
	cs  *stats.ColumnStats
}

func columnStats(cat *catalog.CatalogState) []columnStat {
	var out []columnStat
	oids := make([]uint32, 0, len(cat.Tables))
	for oid := range cat.Tables {
		oids = append(oids, oid)
	}
	sort.Slice(oids, func(i, j int) bool { return oids[i] < oids[j] })
	for _, oid := range oids {
		t := cat.Tables[oid]
		ts := cat.TableStats(oid)
		if ts == nil {
			continue
		}
		pos := make([]int, len(t.Cols))
		for i := range pos {
			pos[i] = i
		}
		sort.Slice(pos, func(i, j int) bool { return t.Attnum(pos[i]) < t.Attnum(pos[j]) })
		for _, i := range pos {
			if cs := cat.ColumnStats(t, i); cs != nil {
				out = append(out, columnStat{t, i, ts, cs})
			}
		}
	}
	return out
}

// anyArray is the anyarray value of vals in column c's type.
func anyArray(ec *expr.EvalCtx, c *catalog.ColumnDef, vals []types.Datum) types.Datum {
	if vals == nil {
		return types.NullDatum
	}
	return types.Datum{S: string(types.AppendArrayText(nil, c.Type(), vals, &ec.B.Format)), A: vals}
}

func float4Array(fs []float64) types.Datum {
	if fs == nil {
		return types.NullDatum
	}
	d := types.Datum{A: make([]types.Datum, len(fs))}
	for i, f := range fs {
		d.A[i] = types.FloatDatum(f)
	}
	return d
}

func pgStatisticView() *expr.View {
	spec := []any{"starelid", types.TypeOid, "staattnum", types.TypeInt2, "stainherit", types.TypeBool,
		"stanullfrac", types.TypeFloat4, "stawidth", types.TypeInt4, "stadistinct", types.TypeFloat4}
	for _, f := range []struct {
		name string
		t    types.Type
	}{{"stakind", types.TypeInt2}, {"staop", types.TypeOid}, {"stacoll", types.TypeOid}, {"stanumbers", typeFloat4Array}, {"stavalues", types.TypeAnyArray}} {
		for k := 1; k <= 5; k++ {
			spec = append(spec, f.name+types.Itoa(int64(k)), f.t)
		}
	}
	return &expr.View{
		Name: "pg_statistic", Oid: oidPgStatistic, Cols: Cols(oidPgStatistic, spec...),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, r := range columnStats(ec.B.Cat()) {
				c := &r.t.Cols[r.pos]
				row := make([]types.Datum, 31)
				row[0], row[1], row[2] = types.OIDDatum(r.t.OID), types.IntDatum(int64(r.t.Attnum(r.pos))), types.BoolDatum(r.ts.Inherited)
				row[3], row[4], row[5] = types.FloatDatum(r.cs.NullFrac), types.IntDatum(int64(r.cs.AvgWidth)), types.FloatDatum(r.cs.NDistinct)
				slots := r.cs.Slots()
				for k := range 5 {
					row[6+k], row[11+k], row[16+k] = types.IntDatum(0), types.OIDDatum(0), types.OIDDatum(0)
					row[21+k], row[26+k] = types.NullDatum, types.NullDatum
					if k < len(slots) {
						sl := slots[k]
						row[6+k], row[11+k], row[16+k] = types.IntDatum(int64(sl.Kind)), types.OIDDatum(sl.Op), types.OIDDatum(sl.Coll)
						row[21+k], row[26+k] = float4Array(sl.Numbers), anyArray(ec, c, sl.Values)
					}
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgStatsView() *expr.View {
	return &expr.View{
		Name: "pg_stats", Oid: oidPgStats,
		Cols: Cols(oidPgStats, "schemaname", types.TypeName, "tablename", types.TypeName, "attname", types.TypeName,
			"inherited", types.TypeBool, "null_frac", types.TypeFloat4, "avg_width", types.TypeInt4, "n_distinct", types.TypeFloat4,
			"most_common_vals", types.TypeAnyArray, "most_common_freqs", typeFloat4Array, "histogram_bounds", types.TypeAnyArray,
			"correlation", types.TypeFloat4, "most_common_elems", types.TypeAnyArray, "most_common_elem_freqs", typeFloat4Array,
			"elem_count_histogram", typeFloat4Array),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, r := range columnStats(ec.B.Cat()) {
				c := &r.t.Cols[r.pos]
				corr := types.NullDatum
				if r.cs.HasCorrelation {
					corr = types.FloatDatum(r.cs.Correlation)
				}
				row := []types.Datum{
					types.TextDatum("public"), types.TextDatum(r.t.Name), types.TextDatum(c.Name),
					types.BoolDatum(r.ts.Inherited), types.FloatDatum(r.cs.NullFrac), types.IntDatum(int64(r.cs.AvgWidth)), types.FloatDatum(r.cs.NDistinct),
					anyArray(ec, c, r.cs.MCV), float4Array(r.cs.MCVFreq), anyArray(ec, c, r.cs.Histogram),
					corr, types.NullDatum, types.NullDatum, types.NullDatum,
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// statTablesView is pg_stat_all_tables or pg_stat_user_tables: every
// table, partitioned ones included (lockd's system catalogs are views, so
// the two list the same tables; pg_stat_sys_tables is empty). Scans are
// counted by the executor per backend (sql/stats): seq_tup_read is the
// visible rows sequential scans returned, idx_tup_fetch those index scans
// fetched.
func statTablesView(name string, oid uint32) *expr.View {
	return &expr.View{
		Name: name, Oid: oid,
		Cols: Cols(oid, "relid", types.TypeOid, "schemaname", types.TypeName, "relname", types.TypeName,
			"seq_scan", types.TypeInt8, "seq_tup_read", types.TypeInt8, "idx_scan", types.TypeInt8, "idx_tup_fetch", types.TypeInt8,
			"n_tup_ins", types.TypeInt8, "n_tup_upd", types.TypeInt8, "n_tup_del", types.TypeInt8, "n_tup_hot_upd", types.TypeInt8,
			"n_live_tup", types.TypeInt8, "n_dead_tup", types.TypeInt8, "n_mod_since_analyze", types.TypeInt8, "n_ins_since_vacuum", types.TypeInt8,
			"last_vacuum", types.TypeTimestamptz, "last_autovacuum", types.TypeTimestamptz, "last_analyze", types.TypeTimestamptz,
			"last_autoanalyze", types.TypeTimestamptz, "vacuum_count", types.TypeInt8, "autovacuum_count", types.TypeInt8,
			"analyze_count", types.TypeInt8, "autoanalyze_count", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if oid == oidPgStatSysTables {
				return nil // lockd's system catalogs are views, not tables
			}
			cat := ec.B.Cat()
			act := ec.B.Catalog.Stats().Activity()
			oids := make([]uint32, 0, len(cat.Tables))
			for oid := range cat.Tables {
				oids = append(oids, oid)
			}
			sort.Slice(oids, func(i, j int) bool { return oids[i] < oids[j] })
			for _, oid := range oids {
				a := act[oid]
				if a == nil {
					a = &stats.TableActivity{}
				}
				i := func(v int64) types.Datum { return types.IntDatum(v) }
				row := []types.Datum{
					types.OIDDatum(oid), types.TextDatum("public"), types.TextDatum(cat.Tables[oid].Name),
					i(a.SeqScan), i(a.SeqTupRead), i(a.IdxScan), i(a.IdxTupFetch),
					i(a.Inserted), i(a.Updated), i(a.Deleted), i(a.HotUpdated),
					i(a.Live), i(a.Dead), i(a.ModSinceAnalyze), i(a.InsSinceVacuum),
					funcs.TsDatum(a.LastVacuum), funcs.TsDatum(a.LastAutoVacuum), funcs.TsDatum(a.LastAnalyze),
					funcs.TsDatum(a.LastAutoAnalyze), i(a.VacuumCount), i(a.AutoVacuumCount),
					i(a.AnalyzeCount), i(a.AutoAnalyzeCount),
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

const (
	oidPgStatAllIndexes  = 12183
	oidPgStatUserIndexes = 12192
	oidPgStatSysIndexes  = 12188
)

// statIndexesView is pg_stat_all_indexes, pg_stat_user_indexes or
// pg_stat_sys_indexes: every index, with the scans that used it, the
// entries they returned and the live rows they fetched, counted per
// backend by the executor. lockd's catalogs have no indexes, so
// pg_stat_sys_indexes is empty and the other two list the same indexes.
func statIndexesView(name string, oid uint32) *expr.View {
	return &expr.View{
		Name: name, Oid: oid,
		Cols: Cols(oid, "relid", types.TypeOid, "indexrelid", types.TypeOid, "schemaname", types.TypeName,
			"relname", types.TypeName, "indexrelname", types.TypeName, "idx_scan", types.TypeInt8,
			"idx_tup_read", types.TypeInt8, "idx_tup_fetch", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if oid == oidPgStatSysIndexes {
				return nil
			}
			cat := ec.B.Cat()
			act := ec.B.Catalog.Stats().Activity()
			oids := make([]uint32, 0, len(cat.Indexes))
			for o := range cat.Indexes {
				oids = append(oids, o)
			}
			sort.Slice(oids, func(i, j int) bool { return oids[i] < oids[j] })
			for _, o := range oids {
				ix := cat.Indexes[o]
				t := cat.Tables[ix.Table]
				if t == nil {
					continue
				}
				a := act[o]
				if a == nil {
					a = &stats.TableActivity{}
				}
				if err := emit([]types.Datum{types.OIDDatum(ix.Table), types.OIDDatum(o), types.TextDatum("public"),
					types.TextDatum(t.Name), types.TextDatum(ix.Name), types.IntDatum(a.IdxScan),
					types.IntDatum(a.IdxTupRead), types.IntDatum(a.IdxTupFetch)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

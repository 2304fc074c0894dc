package stats

import (
	"time"

	"lockd/sql/types"
)

// TableStats is what VACUUM, ANALYZE and CREATE INDEX last learnt about
// one relation: PostgreSQL's pg_class.reltuples and relpages, and, for a
// table ANALYZE has seen, its pg_statistic rows. A published TableStats
// is never modified (a new ANALYZE publishes a new one), so a planner may
// keep the pointer for as long as it plans.
type TableStats struct {
	// RelTuples is pg_class.reltuples: the estimated number of live rows
	// (index entries, for an index); -1 when unknown (never vacuumed or
	// analysed since it was made or truncated), as in PostgreSQL 14+.
	RelTuples float64
	// RelPages is pg_class.relpages: the size in 8 kB pages when
	// RelTuples was measured; -1 for a partitioned table ANALYZE has seen
	// (it has no storage). The planner scales RelTuples by the current
	// size (Store.RelationPages), as estimate_rel_size does.
	RelPages float64
	// RelAllVisible is pg_class.relallvisible: how many pages the
	// visibility map called all-visible when RelPages was measured (a
	// heap's; 0 for an index). The planner divides it by the current size
	// (estimate_rel_size's allvisfrac) to cost index-only scans.
	RelAllVisible float64
	// Inherited: Cols describe the whole partition tree (pg_statistic's
	// stainherit), as they do for a partitioned table.
	Inherited bool
	// Cols are the column statistics by attribute number - 1 (not by
	// column position, which DROP COLUMN shifts); nil where ANALYZE has
	// not looked. CatalogState.ColumnStats finds them by position.
	Cols []*ColumnStats
}

// Col returns the statistics of attribute number attnum, nil if none.
func (ts *TableStats) Col(attnum int) *ColumnStats {
	if ts == nil || attnum < 1 || attnum > len(ts.Cols) {
		return nil
	}
	return ts.Cols[attnum-1]
}

// ColumnStats is one column's pg_statistic row as compute_scalar_stats
// makes it. The fractions are rounded to float4, as pg_statistic stores
// them, so a cost model computes with PostgreSQL's very numbers.
type ColumnStats struct {
	// TypeOID is the column's type when it was analysed; the statistics
	// of a column whose type changed since are not used (PostgreSQL
	// removes them at ALTER COLUMN TYPE).
	TypeOID uint32
	// NullFrac is stanullfrac: the fraction of rows that are NULL.
	NullFrac float64
	// AvgWidth is stawidth: the average stored width of the non-NULL
	// values in bytes (a varlena's header included).
	AvgWidth int32
	// NDistinct is stadistinct in PostgreSQL's convention: > 0 the number
	// of distinct non-NULL values; < 0 minus that number divided by the
	// row count (it scales with the table); 0 unknown.
	NDistinct float64
	// MCV and MCVFreq are the most common values, most common first, and
	// their frequencies among all rows (slot kind 1); nil if none.
	MCV     []types.Datum
	MCVFreq []float64
	// Histogram is the bounds of equal-population bins over the values
	// not in MCV, ascending (slot kind 2); nil if none.
	Histogram []types.Datum
	// Correlation is the correlation between the values' order and their
	// physical order (slot kind 3); valid if HasCorrelation.
	Correlation    float64
	HasCorrelation bool
}

// Slot kinds (pg_statistic.stakindN), as PostgreSQL numbers them.
const (
	KindMCV         = 1
	KindHistogram   = 2
	KindCorrelation = 3
)

// Slot is one pg_statistic slot.
type Slot struct {
	Kind    int16
	Op      uint32 // staop: the type's "=" for MCV, "<" otherwise
	Coll    uint32 // stacoll
	Numbers []float64
	Values  []types.Datum
}

// Slots lays c out as pg_statistic's stakind/staop/stacoll/stanumbers/
// stavalues slots, in compute_scalar_stats's order: MCV, histogram,
// correlation, each only if present.
func (c *ColumnStats) Slots() []Slot {
	eq, lt, coll := Operators(c.TypeOID)
	var out []Slot
	if len(c.MCV) > 0 {
		out = append(out, Slot{Kind: KindMCV, Op: eq, Coll: coll, Numbers: c.MCVFreq, Values: c.MCV})
	}
	if len(c.Histogram) > 0 {
		out = append(out, Slot{Kind: KindHistogram, Op: lt, Coll: coll, Values: c.Histogram})
	}
	if c.HasCorrelation {
		out = append(out, Slot{Kind: KindCorrelation, Op: lt, Coll: coll, Numbers: []float64{c.Correlation}})
	}
	return out
}

// Operators returns the OIDs of a type's default "=" and "<" operators
// (pg_operator) and its collation (100, "default", for the string types),
// as std_typanalyze finds them. varchar uses text's operators.
func Operators(typ uint32) (eq, lt, coll uint32) {
	switch typ {
	case types.OIDBool:
		return 91, 58, 0
	case types.OIDInt2:
		return 94, 95, 0
	case types.OIDInt4:
		return 96, 97, 0
	case types.OIDInt8:
		return 410, 412, 0
	case types.OIDFloat4:
		return 620, 622, 0
	case types.OIDFloat8:
		return 670, 672, 0
	case types.OIDNumeric:
		return 1752, 1754, 0
	case types.OIDText, types.OIDVarchar:
		return 98, 664, 100
	case types.OIDBpchar:
		return 1054, 1058, 100
	case types.OIDDate:
		return 1093, 1095, 0
	case types.OIDTimestamp:
		return 2060, 2062, 0
	case types.OIDTimestamptz:
		return 1320, 1322, 0
	case types.OIDInterval:
		return 1330, 1332, 0
	case types.OIDOid:
		return 607, 609, 0
	}
	return 0, 0, 0
}

// TableActivity is one table's row of pg_stat_all_tables, as far as
// lockd counts it (activity.go).
type TableActivity struct {
	SeqScan, SeqTupRead        int64 // seq_scan, seq_tup_read
	IdxScan, IdxTupFetch       int64 // idx_scan, idx_tup_fetch
	IdxTupRead                 int64 // an index's idx_tup_read
	Inserted, Updated, Deleted int64 // n_tup_ins, n_tup_upd, n_tup_del
	HotUpdated                 int64 // n_tup_hot_upd
	Live, Dead                 int64 // n_live_tup, n_dead_tup
	ModSinceAnalyze            int64 // n_mod_since_analyze
	InsSinceVacuum             int64 // n_ins_since_vacuum
	LastVacuum, LastAnalyze    time.Time
	LastAutoVacuum             time.Time
	LastAutoAnalyze            time.Time
	VacuumCount, AnalyzeCount  int64
	AutoVacuumCount            int64
	AutoAnalyzeCount           int64
}

// round4 rounds to float4, pg_statistic's storage of fractions.
func round4(f float64) float64 { return float64(float32(f)) }

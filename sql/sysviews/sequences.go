package sysviews

import (
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// Sequences in the catalogs and in FROM: pg_class rows of relkind 'S',
// their pg_attribute rows, pg_sequence, the pg_sequences view, the
// pg_depend rows psql's \d reads (a sequence's namespace and owning
// column; lockd keeps no other dependencies), and SELECT * FROM a
// sequence (last_value, log_cnt, is_called).

const (
	oidPgSequence  = 2224
	oidPgDepend    = 2608
	oidPgSequences = 12048
)

func SequenceViews() []*expr.View {
	return []*expr.View{pgSequenceView(), pgSequencesView(), pgDependView()}
}

// seqClassRow fills the pg_class columns that differ for a sequence.
func seqClassRow(row []types.Datum, q *catalog.SequenceDef) {
	row[7] = types.OIDDatum(q.RelFile) // relfilenode
	row[9] = types.IntDatum(1)         // relpages
	row[10] = types.FloatDatum(1)      // reltuples
	if q.Unlogged {
		row[15] = charDatum('u')
	}
	row[17] = types.IntDatum(int64(len(catalog.SeqColumns))) // relnatts
	row[25] = charDatum('n')                                 // relreplident
}

// seqAttributes are a sequence's pg_attribute rows.
func seqAttributes(oid uint32) []catalog.AttrRow {
	var out []catalog.AttrRow
	for i, c := range catalog.SeqColumns {
		out = append(out, catalog.AttrRow{Rel: oid, Name: c.Name, T: c.Type, Num: int16(i + 1), NotNull: true})
	}
	return append(out,
		catalog.AttrRow{Rel: oid, Name: "tableoid", T: types.TypeOid, Num: -6, NotNull: true},
		catalog.AttrRow{Rel: oid, Name: "ctid", T: types.TypeTid, Num: -1, NotNull: true})
}

func pgSequenceView() *expr.View {
	return &expr.View{
		Name: "pg_sequence", Oid: oidPgSequence,
		Cols: Cols(oidPgSequence, "seqrelid", types.TypeOid, "seqtypid", types.TypeOid, "seqstart", types.TypeInt8, "seqincrement", types.TypeInt8,
			"seqmax", types.TypeInt8, "seqmin", types.TypeInt8, "seqcache", types.TypeInt8, "seqcycle", types.TypeBool),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, q := range ec.B.Cat().SequencesByOID() {
				row := []types.Datum{types.OIDDatum(q.OID), types.OIDDatum(q.TypeOID), types.IntDatum(q.Start), types.IntDatum(q.Increment),
					types.IntDatum(q.Max), types.IntDatum(q.Min), types.IntDatum(q.Cache), types.BoolDatum(q.Cycle)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgSequencesView() *expr.View {
	return &expr.View{
		Name: "pg_sequences", Oid: oidPgSequences,
		Cols: Cols(oidPgSequences, "schemaname", types.TypeName, "sequencename", types.TypeName, "sequenceowner", types.TypeName,
			"data_type", types.TypeRegtype, "start_value", types.TypeInt8, "min_value", types.TypeInt8, "max_value", types.TypeInt8,
			"increment_by", types.TypeInt8, "cycle", types.TypeBool, "cache_size", types.TypeInt8, "last_value", types.TypeInt8),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, q := range ec.B.Cat().SequencesByOID() {
				row := []types.Datum{types.TextDatum(catalog.SequenceNamespaceName), types.TextDatum(q.Name), types.TextDatum(ec.B.Cat().OwnerName()),
					types.OIDDatum(q.TypeOID), types.IntDatum(q.Start), types.IntDatum(q.Min), types.IntDatum(q.Max),
					types.IntDatum(q.Increment), types.BoolDatum(q.Cycle), types.IntDatum(q.Cache), funcs.SeqLastValue(ec.B, ec, q)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgDependView() *expr.View {
	return &expr.View{
		Name: "pg_depend", Oid: oidPgDepend,
		Cols: Cols(oidPgDepend, "classid", types.TypeOid, "objid", types.TypeOid, "objsubid", types.TypeInt4, "refclassid", types.TypeOid,
			"refobjid", types.TypeOid, "refobjsubid", types.TypeInt4, "deptype", types.TypeChar),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, q := range ec.B.Cat().SequencesByOID() {
				row := []types.Datum{types.OIDDatum(oidPgClass), types.OIDDatum(q.OID), types.IntDatum(0), types.OIDDatum(oidPgNamespace),
					types.OIDDatum(catalog.NspPublic), types.IntDatum(0), charDatum('n')}
				if err := emit(row); err != nil {
					return err
				}
				if q.OwnedTable == 0 {
					continue
				}
				kind := byte('a')
				if q.Identity {
					kind = 'i'
				}
				row = []types.Datum{types.OIDDatum(oidPgClass), types.OIDDatum(q.OID), types.IntDatum(0), types.OIDDatum(oidPgClass),
					types.OIDDatum(q.OwnedTable), types.IntDatum(int64(q.OwnedCol)), charDatum(kind)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

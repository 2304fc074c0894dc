package sql

import (
	"sort"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/storage"
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

func sequenceViews() []*view {
	return []*view{pgSequenceView(), pgSequencesView(), pgDependView()}
}

// sequencesByOID lists the session's sequences in OID order.
func (c *catalogState) sequencesByOID() []*SequenceDef {
	out := make([]*SequenceDef, 0, len(c.Sequences))
	for _, q := range c.Sequences {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// seqClassRow fills the pg_class columns that differ for a sequence.
func seqClassRow(row []Datum, q *SequenceDef) {
	row[7] = oidDatum(q.RelFile) // relfilenode
	row[9] = intDatum(1)         // relpages
	row[10] = floatDatum(1)      // reltuples
	if q.Unlogged {
		row[15] = charDatum('u')
	}
	row[17] = intDatum(int64(len(seqColumns))) // relnatts
	row[25] = charDatum('n')                   // relreplident
}

// seqColumns are a sequence relation's columns.
var seqColumns = []Column{{Name: "last_value", Type: TypeInt8}, {Name: "log_cnt", Type: TypeInt8}, {Name: "is_called", Type: TypeBool}}

// seqAttributes are a sequence's pg_attribute rows.
func seqAttributes(oid uint32) []attrRow {
	var out []attrRow
	for i, c := range seqColumns {
		out = append(out, attrRow{rel: oid, name: c.Name, t: c.Type, num: int16(i + 1), notNull: true})
	}
	return append(out,
		attrRow{rel: oid, name: "tableoid", t: TypeOid, num: -6, notNull: true},
		attrRow{rel: oid, name: "ctid", t: TypeTid, num: -1, notNull: true})
}

func pgSequenceView() *view {
	return &view{
		name: "pg_sequence", oid: oidPgSequence,
		cols: cols(oidPgSequence, "seqrelid", TypeOid, "seqtypid", TypeOid, "seqstart", TypeInt8, "seqincrement", TypeInt8,
			"seqmax", TypeInt8, "seqmin", TypeInt8, "seqcache", TypeInt8, "seqcycle", TypeBool),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, q := range ec.s.cat().sequencesByOID() {
				row := []Datum{oidDatum(q.OID), oidDatum(q.TypeOID), intDatum(q.Start), intDatum(q.Increment),
					intDatum(q.Max), intDatum(q.Min), intDatum(q.Cache), boolDatum(q.Cycle)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgSequencesView() *view {
	return &view{
		name: "pg_sequences", oid: oidPgSequences,
		cols: cols(oidPgSequences, "schemaname", TypeName, "sequencename", TypeName, "sequenceowner", TypeName,
			"data_type", TypeRegtype, "start_value", TypeInt8, "min_value", TypeInt8, "max_value", TypeInt8,
			"increment_by", TypeInt8, "cycle", TypeBool, "cache_size", TypeInt8, "last_value", TypeInt8),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, q := range ec.s.cat().sequencesByOID() {
				row := []Datum{textDatum(sequenceNamespaceName), textDatum(q.Name), textDatum(bootstrapRole),
					oidDatum(q.TypeOID), intDatum(q.Start), intDatum(q.Min), intDatum(q.Max),
					intDatum(q.Increment), boolDatum(q.Cycle), intDatum(q.Cache), seqLastValue(ec.s, ec, q)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgDependView() *view {
	return &view{
		name: "pg_depend", oid: oidPgDepend,
		cols: cols(oidPgDepend, "classid", TypeOid, "objid", TypeOid, "objsubid", TypeInt4, "refclassid", TypeOid,
			"refobjid", TypeOid, "refobjsubid", TypeInt4, "deptype", TypeChar),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, q := range ec.s.cat().sequencesByOID() {
				row := []Datum{oidDatum(oidPgClass), oidDatum(q.OID), intDatum(0), oidDatum(oidPgNamespace),
					oidDatum(nspPublic), intDatum(0), charDatum('n')}
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
				row = []Datum{oidDatum(oidPgClass), oidDatum(q.OID), intDatum(0), oidDatum(oidPgClass),
					oidDatum(q.OwnedTable), intDatum(int64(q.OwnedCol)), charDatum(kind)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// seqSource scans a sequence: its one row.
type seqSource struct {
	q     *SequenceDef
	alias string
	cols  []Column
}

func (q *seqSource) name() string      { return q.alias }
func (q *seqSource) columns() []Column { return q.cols }
func (x *Executor) scanSequence(ec *evalCtx, q *seqSource, fn func([]Datum) error) error {
	s := x
	def := s.cat().Sequences[q.q.OID]
	if def == nil {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", q.q.Name)
	}
	d := s.seqs.get(def.RelFile)
	if d == nil {
		return pgerr.New(pgerr.InternalError, "storage of sequence \"%s\" is missing", def.Name)
	}
	d.lw.Acquire(s.proc, locks.LWShared)
	st := d.st
	d.lw.Release(s.proc)
	return fn([]Datum{intDatum(st.LastValue), intDatum(st.LogCnt), boolDatum(st.IsCalled),
		tidDatum(storage.TID{Block: 0, Offset: 1}), oidDatum(q.q.OID)})
}

// rangeSequence finds the sequence a FROM item names, if it names one.
func (s *Backend) rangeSequence(rv *pg.RangeVar) *SequenceDef {
	if rv.Schemaname != "" && rv.Schemaname != sequenceNamespaceName {
		return nil
	}
	return s.cat().sequence(rv.Relname)
}

// sequenceLeaf adds a sequence to the FROM clause, read under
// AccessShareLock as a table is.
func (fb *fromBuilder) sequenceLeaf(q *SequenceDef, alias string, aliases []*pg.Node, loc int32) (planNode, error) {
	src := &seqSource{q: q, alias: alias}
	for i, c := range seqColumns {
		src.cols = append(src.cols, Column{Name: c.Name, Type: c.Type, TableOID: q.OID, Attnum: int16(i + 1)})
	}
	src.cols = append(src.cols, // its one tuple is (0,1)
		Column{Name: "ctid", Type: TypeTid, TableOID: q.OID, Attnum: -1},
		Column{Name: "tableoid", Type: TypeOid, TableOID: q.OID, Attnum: -6})
	fb.rels = append(fb.rels, relLock{oid: q.OID, mode: locks.AccessShareLock})
	return fb.addLeaf(src, alias, aliases, len(seqColumns), nil, loc)
}

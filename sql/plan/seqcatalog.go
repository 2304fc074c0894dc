package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// seqSource scans a sequence: its one row.
type SeqSource struct {
	Q     *catalog.SequenceDef
	alias string
	cols  []types.Column
}

func (q *SeqSource) name() string            { return q.alias }
func (q *SeqSource) columns() []types.Column { return q.cols }

// sequenceLeaf adds a sequence to the FROM clause, read under
// AccessShareLock as a table is.
func (fb *fromBuilder) sequenceLeaf(q *catalog.SequenceDef, alias string, aliases []*pg.Node, loc int32) (PlanNode, error) {
	src := &SeqSource{Q: q, alias: alias}
	for i, c := range catalog.SeqColumns {
		src.cols = append(src.cols, types.Column{Name: c.Name, Type: c.Type, TableOID: q.OID, Attnum: int16(i + 1)})
	}
	src.cols = append(src.cols, // its one tuple is (0,1)
		types.Column{Name: "ctid", Type: types.TypeTid, TableOID: q.OID, Attnum: -1},
		types.Column{Name: "tableoid", Type: types.TypeOid, TableOID: q.OID, Attnum: -6})
	fb.rels = append(fb.rels, expr.RelLock{Oid: q.OID, Mode: locks.AccessShareLock})
	return fb.addLeaf(src, alias, aliases, len(catalog.SeqColumns), nil, loc)
}

package expr

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/catalog"
)

// rangeSequence finds the sequence a FROM item names, if it names one.
func (s *Backend) RangeSequence(rv *pg.RangeVar) *catalog.SequenceDef {
	if rv.Schemaname != "" && rv.Schemaname != catalog.SequenceNamespaceName {
		return nil
	}
	return s.Cat().Sequence(rv.Relname)
}

package expr

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/catalog"
)

const BoolAnd = pg.BoolExprType_AND_EXPR

// resolveTable finds a table by RangeVar in the session's catalog view.
func (s *Backend) ResolveTable(rv *pg.RangeVar) (*catalog.TableDef, error) {
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return nil, TableNotFound(rv.Schemaname+"."+rv.Relname, rv.Location)
	}
	t := s.Cat().Table(rv.Relname)
	if t == nil {
		return nil, TableNotFound(rv.Relname, rv.Location)
	}
	return t, nil
}

package expr

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// lookupView finds a system view named by rv: unqualified or pg_catalog
// names only (pg_catalog is searched before public, as in PostgreSQL).
func (s *Backend) LookupView(rv *pg.RangeVar) (*View, bool) {
	if rv.Schemaname != "" && rv.Schemaname != "pg_catalog" {
		return nil, false
	}
	v, ok := s.Views[rv.Relname]
	return v, ok
}

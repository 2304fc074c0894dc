package plan

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/sql/catalog"
)

// checkDefsOf is pg_get_constraintdef's text of CHECK con, whose
// expression is now raw, on t.
func (s *Planner) CheckDefsOf(t *catalog.TableDef, raw *pg.Node, con *catalog.ConstraintDef) (def, pretty string) {
	def, pretty = s.CheckDefs(t, raw)
	if con.NoInherit {
		def += " NO INHERIT"
		pretty += " NO INHERIT"
	}
	if con.NotValid {
		def += " NOT VALID"
		pretty += " NOT VALID"
	}
	return def, pretty
}

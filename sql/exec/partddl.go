package exec

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/plan"
)

// copyPartitioned checks COPY against a partitioned table or a partition
// and sets up row routing for COPY FROM.
func (s *Executor) copyPartitioned(c *pg.CopyStmt, t *catalog.TableDef) (*plan.PartRouter, error) {
	if t.Partitioned() && !c.IsFrom {
		return nil, pgerr.New(pgerr.WrongObjectType, "cannot copy from partitioned table \"%s\"", t.Name).
			WithHint("Try the COPY (SELECT ...) TO variant.")
	}
	if !c.IsFrom || !t.Partitioned() && t.Parent == 0 {
		return nil, nil
	}
	for _, o := range c.Options {
		if de := o.GetDefElem(); de.Defname == "freeze" && t.Partitioned() && (de.Arg == nil || !strings.EqualFold(analyze.DefString(de), "false") && analyze.DefString(de) != "0") {
			return nil, pgerr.NotSupported("cannot perform COPY FREEZE on a partitioned table")
		}
	}
	return plan.NewPartRouter(t), nil
}

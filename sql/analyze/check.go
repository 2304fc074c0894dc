package analyze

import (
	pg "github.com/pganalyze/pg_query_go/v6"
)

// findSubLink reports where n contains a subquery.
func FindSubLink(n *pg.Node) (int32, bool) {
	loc, found := int32(-1), false
	WalkRawNodes(n, func(x *pg.Node) {
		if sl := x.GetSubLink(); sl != nil && !found {
			loc, found = sl.Location, true
		}
	})
	return loc, found
}

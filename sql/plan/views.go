package plan

import (
	"lockd/sql/expr"
	"lockd/sql/types"
)

type ViewSource struct {
	V     *expr.View
	s     *expr.Backend
	alias string
}

func (v *ViewSource) name() string            { return v.alias }
func (v *ViewSource) columns() []types.Column { return v.V.Cols }

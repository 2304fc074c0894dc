package plan

import (
	"lockd/sql/expr"
)

// The per-session state of each layer embeds the layer below, so a
// layer's code reaches what lies beneath it and nothing above.

// planner is the analyser and planner of one session.
type Planner struct {
	expr.Backend
}

package plan

import (
	"strings"

	"lockd/sql/expr"
)

// EXPLAIN of INSERT, UPDATE and DELETE: PostgreSQL's ModifyTable node
// ("Insert on t", "Update on t", "Delete on t") over the plan that finds
// the rows: the scan of the target (with its index conditions and
// filter) for UPDATE and DELETE, a Result, a Values Scan or the query for
// INSERT, with ON CONFLICT's resolution and arbiter indexes.

// ExplainModify returns the lines of an UPDATE's or DELETE's plan (of a
// table that is not partitioned).
func ExplainModify(b *expr.Backend, ec *expr.EvalCtx, p *ModifyPlan, opts ExplainOptions, stats map[any]*expr.NodeStats) []string {
	ex := &explainer{b: b, c: costsOf(b), ec: ec, opts: &opts, used: map[string]bool{}, subs: map[*expr.SublinkExpr]*exSub{}, stats: stats}
	ex.nrels = 1
	top := &exNode{typ: "Update", rel: p.T.Name, ref: p.Src.alias}
	if p.Delete {
		top.typ = "Delete"
	}
	ref := ex.refName(p.Src.alias)
	d := &deparser{fc: &b.Format}
	for _, c := range p.Src.cols {
		d.cols = append(d.cols, colName{rel: ref, col: c.Name})
	}
	var filters []expr.Expr
	if p.Where != nil {
		filters = conjuncts(p.Where)
	}
	leaf := &LeafNode{Src: p.Src, N: len(p.Src.cols), Filters: filters}
	scan := ex.tableScan(&level{d: d, widths: &levelWidths{ex: ex, all: true}}, leaf, p.Src, ref, d, nil)
	scan.stats = ex.stat(p.Src)
	// the scan hands ModifyTable the row's ctid and, for an UPDATE, the
	// new values of the columns it sets
	scan.width = 6
	for _, e := range p.Set {
		scan.width += typeWidth(e.Type())
		// computed per row by the scan (its path target's cost)
		scan.cost.total += ex.c.opCost(e) * scan.cost.rows
	}
	top.kids = []*exNode{scan}
	// ModifyTable charges nothing of its own (create_modifytable_path)
	top.cost = pathCost{startup: scan.cost.startup, total: scan.cost.total}
	top.stats = ex.stat(StatModify{p})
	if top.stats != nil {
		cp := *top.stats
		cp.Rows = 0 // PostgreSQL's ModifyTable returns rows only for RETURNING
		if p.Ret != nil {
			cp.Rows = top.stats.Rows
		}
		top.stats = &cp
	}
	return ex.render(top)
}

// ExplainInsert returns the lines of an INSERT's plan.
func ExplainInsert(b *expr.Backend, ec *expr.EvalCtx, p *InsertPlan, opts ExplainOptions, stats map[any]*expr.NodeStats) []string {
	ex := &explainer{b: b, c: costsOf(b), ec: ec, opts: &opts, used: map[string]bool{}, subs: map[*expr.SublinkExpr]*exSub{}, stats: stats}
	top := &exNode{typ: "Insert", rel: p.T.Name, ref: p.T.Name}
	ex.used[p.T.Name] = true
	var src *exNode
	switch {
	case p.Sel != nil:
		ex.nrels = 1 + ex.countRels(p.Sel)
		src = ex.query(p.Sel)
	case len(p.Rows) == 1:
		ex.nrels = 1
		src = &exNode{typ: "Result", cost: pathCost{total: ex.c.cpuTuple, rows: 1}}
	default:
		ex.nrels = 2
		src = &exNode{typ: "Values Scan on \"*VALUES*\"", cost: pathCost{total: ex.c.cpuOperator * float64(len(p.Rows)), rows: float64(len(p.Rows))}}
	}
	top.kids = []*exNode{src}
	top.cost = pathCost{startup: src.cost.startup, total: src.cost.total + ex.c.cpuTuple*src.cost.rows}
	if oc := p.Conflict; oc != nil {
		if oc.Update {
			top.prop("Conflict Resolution", "UPDATE")
		} else {
			top.prop("Conflict Resolution", "NOTHING")
		}
		if !oc.any { // DO NOTHING without a conflict target names none
			var names []string
			for _, ix := range oc.LeafArbiters(b.Cat(), p.Indexes) {
				names = append(names, ix.Name)
			}
			top.prop("Conflict Arbiter Indexes", strings.Join(names, ", "))
		}
	}
	top.stats = ex.stat(StatInsert{p})
	if top.stats != nil {
		cp := *top.stats
		cp.Rows = 0
		if p.Ret != nil {
			cp.Rows = top.stats.Rows
		}
		top.stats = &cp
	}
	return ex.render(top)
}

// render is the text or JSON of an explained tree.
func (ex *explainer) render(root *exNode) []string {
	if ex.opts.JSON {
		return []string{root.json(ex.opts)}
	}
	var out []string
	root.text(&out, 0, false, ex.opts)
	return out
}

// The keys of the counts of a ModifyTable node.
type (
	StatModify struct{ P *ModifyPlan }
	StatInsert struct{ P *InsertPlan }
)

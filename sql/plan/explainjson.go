package plan

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"lockd/sql/expr"
)

// EXPLAIN (FORMAT JSON): the same tree as the text format, with
// PostgreSQL's keys and their order.

func (n *exNode) json(opts *ExplainOptions) string {
	var b strings.Builder
	b.WriteString("[\n  {\n    \"Plan\": ")
	n.writeJSON(&b, 4, opts, "")
	if opts.Analyze {
		// the triggers a writing statement fired: lockd has none
		b.WriteString(",\n    \"Triggers\": [\n    ]")
	}
	b.WriteString("\n  }\n]")
	return b.String()
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func (n *exNode) writeJSON(b *strings.Builder, ind int, opts *ExplainOptions, parent string) {
	pad := strings.Repeat(" ", ind+2)
	var fields []string
	add := func(k, v string) { fields = append(fields, pad+jsonString(k)+": "+v) }
	typ := n.typ
	if i := strings.Index(typ, " on "); i >= 0 {
		typ = typ[:i]
	}
	add("Node Type", jsonString(typ))
	if n.strategy != "" {
		add("Strategy", jsonString(n.strategy))
		add("Partial Mode", jsonString("Simple"))
	}
	if parent != "" {
		add("Parent Relationship", jsonString(parent))
	}
	add("Parallel Aware", "false")
	add("Async Capable", "false")
	if n.joinType != "" {
		add("Join Type", jsonString(n.joinType))
		if n.innerUnique != nil {
			add("Inner Unique", strconv.FormatBool(*n.innerUnique))
		}
	}
	if n.bitmapIndex != "" {
		add("Index Name", jsonString(n.bitmapIndex))
	}
	if n.index != "" {
		dir := "Forward"
		if n.backward {
			dir = "Backward"
		}
		add("Scan Direction", jsonString(dir))
		add("Index Name", jsonString(n.index))
	}
	if n.rel != "" {
		add("Relation Name", jsonString(n.rel))
		add("Alias", jsonString(n.ref))
	}
	if opts.Costs {
		add("Startup Cost", fmt.Sprintf("%.2f", n.cost.startup))
		add("Total Cost", fmt.Sprintf("%.2f", n.cost.total))
		add("Plan Rows", fmt.Sprintf("%.0f", n.cost.rows))
		add("Plan Width", strconv.Itoa(n.width))
	}
	if opts.Analyze {
		st := n.stats
		if st == nil {
			st = &expr.NodeStats{}
		}
		loops := math.Max(st.Loops, 1)
		if opts.Timing {
			add("Actual Startup Time", fmt.Sprintf("%.3f", st.StartMs/loops))
			add("Actual Total Time", fmt.Sprintf("%.3f", st.TotalMs/loops))
		}
		add("Actual Rows", fmtRows(st.Rows/loops))
		add("Actual Loops", fmtRows(st.Loops))
	}
	for _, p := range n.props {
		if p.label == "Group Key" || p.label == "Sort Key" {
			var items []string
			for _, k := range strings.Split(p.value, ", ") {
				items = append(items, jsonString(k))
			}
			add(p.label, "["+strings.Join(items, ", ")+"]")
			continue
		}
		add(p.label, jsonString(p.value))
		if p.label == "Recheck Cond" && opts.Analyze {
			st := n.stats
			if st == nil {
				st = &expr.NodeStats{}
			}
			add("Rows Removed by Index Recheck", fmtRows(st.RecheckRemoved/math.Max(st.Loops, 1)))
		}
		if p.label == "Index Cond" && opts.Analyze && n.typ == "Index Only Scan" {
			// the index conditions an index-only scan rechecks (none are
			// lossy in a B-tree: always 0, printed in the structured
			// formats as PostgreSQL prints it)
			add("Rows Removed by Index Recheck", "0")
		}
	}
	if opts.Analyze && n.stats != nil && n.stats.Removed > 0 {
		add("Rows Removed by Filter", fmtRows(n.stats.Removed/math.Max(n.stats.Loops, 1)))
	}
	if opts.Analyze && n.typ == "Index Only Scan" {
		add("Heap Fetches", fmtRows(n.heapFetches()))
	}
	if opts.Analyze && n.typ == "Bitmap Heap Scan" {
		st := n.stats
		if st == nil {
			st = &expr.NodeStats{}
		}
		add("Exact Heap Blocks", fmtRows(st.ExactPages))
		add("Lossy Heap Blocks", fmtRows(st.LossyPages))
	}
	var kids []string
	kid := func(k *exNode, rel string) {
		var kb strings.Builder
		kb.WriteString(pad + "  ")
		k.writeJSON(&kb, ind+4, opts, rel)
		kids = append(kids, kb.String())
	}
	for _, s := range n.subs {
		if s.init {
			kid(s.root, "InitPlan")
		}
	}
	for i, k := range n.kids {
		rel := "Outer"
		switch {
		case n.typ == "Append", n.typ == "BitmapAnd", n.typ == "BitmapOr":
			rel = "Member"
		case i == 1:
			rel = "Inner"
		}
		kid(k, rel)
	}
	for _, s := range n.subs {
		if !s.init {
			kid(s.root, "SubPlan")
		}
	}
	if len(kids) > 0 {
		fields = append(fields, pad+"\"Plans\": [\n"+strings.Join(kids, ",\n")+"\n"+pad+"]")
	}
	b.WriteString("{\n" + strings.Join(fields, ",\n") + "\n" + strings.Repeat(" ", ind) + "}")
}

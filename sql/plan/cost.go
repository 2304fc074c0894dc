package plan

import (
	"math"

	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/storage"
)

// Costs in PostgreSQL's model and units (costsize.c, selfuncs.c), so that
// the planner picks the plans PostgreSQL picks and EXPLAIN shows numbers
// a PostgreSQL user can read: a sequential page costs seq_page_cost, a
// random one random_page_cost, each row cpu_tuple_cost, each index entry
// cpu_index_tuple_cost and each operator cpu_operator_cost; a plan's
// cost is the sum, before its first row (startup) and in all (total).
//
// The sizes are lockd's own: a relation's pages are its current block
// count, as PostgreSQL reads it when it plans; its rows are what ANALYZE
// or VACUUM last counted, scaled to the current size, or, for a table
// never counted, estimated from its pages and row width as PostgreSQL
// does (estimate_rel_size). Selectivities without statistics are
// PostgreSQL's defaults (utils/selfuncs.h).

// PostgreSQL's default selectivities and limits.
const (
	defaultEqSel        = 0.005
	defaultIneqSel      = 1.0 / 3
	defaultRangeIneqSel = 0.005
	defaultUnkSel       = 0.005
	defaultNumDistinct  = 200
	disableCost         = 1.0e10
	pageSize            = 8192
	pageHeader          = 24 // SizeOfPageHeaderData
	tupleOverhead       = 24 + 4
)

// costs are the cost settings of one planning.
type costs struct {
	seqPage, randomPage, cpuTuple, cpuIndexTuple, cpuOperator float64
	cacheSize                                                 float64 // effective_cache_size, pages
	workMem                                                   int64   // work_mem, bytes

	seqscan, indexscan, indexonly, bitmapscan, nestloop, hashjoin, pruning bool // enable_*
}

// costsOf reads the session's cost settings.
func costsOf(b *expr.Backend) *costs {
	get := b.Settings.Get
	return &costs{
		seqPage:       get("seq_page_cost").Real,
		randomPage:    get("random_page_cost").Real,
		cpuTuple:      get("cpu_tuple_cost").Real,
		cpuIndexTuple: get("cpu_index_tuple_cost").Real,
		cpuOperator:   get("cpu_operator_cost").Real,
		cacheSize:     float64(get("effective_cache_size").Int),
		seqscan:       get("enable_seqscan").Bool,
		indexscan:     get("enable_indexscan").Bool,
		indexonly:     get("enable_indexonlyscan").Bool,
		bitmapscan:    get("enable_bitmapscan").Bool,
		workMem:       int64(get("work_mem").Int) * 1024,
		nestloop:      get("enable_nestloop").Bool,
		hashjoin:      get("enable_hashjoin").Bool,
		pruning:       get("enable_partition_pruning").Bool,
	}
}

// pathCost is the cost of reading something: before the first row and in
// all, and how many rows it gives.
type pathCost struct {
	startup, total, rows float64
}

// clampRows is clamp_row_est: at least one row, a whole number.
func clampRows(n float64) float64 {
	if n <= 1 {
		return 1
	}
	return math.Round(n)
}

// relSize is what the planner knows of a table's or an index's size.
type relSize struct {
	pages, tuples float64
	// allVisible is the fraction of a table's pages the visibility map
	// calls all-visible (estimate_rel_size's allvisfrac), for index-only
	// scans
	allVisible float64
	// height is an index's tree height (the root's level), if hasHeight
	height    int
	hasHeight bool
}

// tableSize estimates t's pages and rows now (estimate_rel_size): its
// current pages at the row density VACUUM, ANALYZE or CREATE INDEX last
// measured; for a table never measured, at the density its row width
// gives, and at least 10 pages' worth (PostgreSQL's guard against
// planning for an empty table that is not empty by the time the plan
// runs). Its all-visible fraction is relallvisible over the current
// pages, as is (pages added since are most likely not all-visible).
func tableSize(b *expr.Backend, t *catalog.TableDef) relSize {
	pages := 0.0
	if b.Store != nil {
		if n, err := b.Store.RelationPages(storage.RelID(t.RelFile)); err == nil {
			pages = float64(n)
		}
	}
	ts := b.Cat().TableStats(t.OID)
	if ts == nil || ts.RelTuples < 0 {
		p := math.Max(pages, 10)
		density := math.Floor(float64(pageSize-pageHeader) / float64(rowWidth(t)+tupleOverhead))
		return relSize{pages: p, tuples: math.Floor(density * p)}
	}
	if pages == 0 {
		return relSize{}
	}
	allVisible := math.Min(1, ts.RelAllVisible/pages)
	if ts.RelPages > 0 {
		return relSize{pages: pages, tuples: math.Round(ts.RelTuples / ts.RelPages * pages), allVisible: allVisible}
	}
	density := math.Floor(float64(pageSize-pageHeader) / float64(rowWidth(t)+tupleOverhead))
	return relSize{pages: pages, tuples: math.Floor(density * pages), allVisible: allVisible}
}

// rowWidth is the estimated width of t's rows in bytes (get_typavgwidth
// summed: fixed-width types their width, strings by their declared
// length or 32).
func rowWidth(t *catalog.TableDef) int {
	w := 0
	for i := range t.Cols {
		w += typeWidth(t.Cols[i].Type())
	}
	return w
}

func typeWidth(t types.Type) int {
	switch t.OID {
	case types.OIDBool:
		return 1
	case types.OIDInt2:
		return 2
	case types.OIDInt4, types.OIDOid, types.OIDXid, types.OIDDate, types.OIDFloat4:
		return 4
	case types.OIDInt8, types.OIDFloat8, types.OIDTimestamp, types.OIDTimestamptz:
		return 8
	case types.OIDInterval:
		return 16
	case types.OIDVarchar, types.OIDBpchar:
		if t.Mod > 4 {
			// the longest value: its characters at UTF-8's four bytes
			// each, and the varlena header (type_maximum_size); char(n)
			// is taken as always that long, a longer varchar(n) as
			// half-way to it, the damping capped at 1000 bytes
			longest := (int(t.Mod)-4)*4 + 4
			switch {
			case t.OID == types.OIDBpchar, longest <= 32:
				return longest
			case longest < 1000:
				return 32 + (longest-32)/2
			}
			return 32 + (1000-32)/2
		}
	}
	return 32
}

// indexSize is an index's pages and height, as PostgreSQL's B-tree
// holding its entries would have them (expr.Backend.IndexSize), and its
// entries: the table's estimated rows, as get_relation_info sets them
// for an index that is not partial.
func indexSize(b *expr.Backend, ix *catalog.IndexDef, table relSize) relSize {
	pages, height, _ := b.IndexSize(ix)
	if pages == 0 {
		return relSize{pages: 1, tuples: table.tuples}
	}
	return relSize{pages: pages, tuples: table.tuples, height: height, hasHeight: true}
}

// opCost is the cost of evaluating e once: cpu_operator_cost per
// operator or function it calls, and for a correlated subquery the cost
// of running it (cost_qual_eval's SubPlan: an InitPlan's one run is not
// charged per row, and reading its result, a Param, costs nothing).
// IS [NOT] NULL and IS [NOT] TRUE are not function calls and cost
// nothing, as in cost_qual_eval.
func (c *costs) opCost(e expr.Expr) float64 {
	n := 0.0
	sub := 0.0
	expr.WalkExpr(e, func(x expr.Expr) bool {
		switch y := x.(type) {
		case *expr.BinopExpr, *expr.FuncExpr:
			n++
		case *expr.AnyExpr:
			k, hashable := 10, false // estimate_array_length of a non-constant
			if a, ok := y.Arr.(*expr.ConstExpr); ok && !a.D.Null {
				k = len(a.D.A)
				hashable = y.Op == "=" && !y.All || y.Op == "<>" && y.All
			}
			n += arrayOps(k, hashable)
		case *expr.InExpr:
			n += arrayOps(len(y.List), allConst(y.List))
		case *expr.SublinkExpr:
			if !y.Correlated && !(y.Kind == expr.SublinkAny && y.Hashable) {
				return false // an InitPlan's output parameter
			}
			n++
			if sp, ok := y.Plan.(*SelectPlan); ok && y.Correlated && sp.From != nil {
				sub += estTotal(sp.From)
			}
			return false
		}
		return true
	})
	return n*c.cpuOperator + sub
}

// arrayOps is the operators x = ANY (array of k values) costs per
// evaluation (cost_qual_eval's ScalarArrayOpExpr): half the values are
// compared before the answer is known; a constant array of at least
// nine values (MIN_ARRAY_SIZE_FOR_HASHED_SAOP) is looked up in a hash
// table, one hash and one comparison (building the table is start-up
// cost, qualStartup).
func arrayOps(k int, hashable bool) float64 {
	if hashable && k >= minHashedArray {
		return 2
	}
	return 0.5 * float64(k)
}

// minHashedArray is MIN_ARRAY_SIZE_FOR_HASHED_SAOP.
const minHashedArray = 9

// allConst reports whether every expression of es is a constant.
func allConst(es []expr.Expr) bool {
	for _, e := range es {
		if _, ok := e.(*expr.ConstExpr); !ok {
			return false
		}
	}
	return true
}

// estTotal is about what reading a FROM tree node once costs, from the
// estimates its leaves got: a join adds its sides, a nested loop's inner
// side once per outer row (its joining work itself is left out).
func estTotal(n PlanNode) float64 {
	switch x := n.(type) {
	case *LeafNode:
		return x.Est.total
	case *JoinNode:
		l, r := estTotal(x.Left), estTotal(x.Right)
		if x.Rescan {
			if lx, ok := x.Left.(*LeafNode); ok {
				return l + lx.Est.rows*r
			}
			if lx, ok := x.Left.(*JoinNode); ok {
				return l + lx.Est.rows*r
			}
		}
		return l + r
	}
	return 0
}

// qualCost is the per-row cost of a list of conditions.
func (c *costs) qualCost(es []expr.Expr) float64 {
	s := 0.0
	for _, e := range es {
		s += c.opCost(e)
	}
	return s
}

// qualStartup is the one-time cost of a list of conditions: the hash
// tables of the constant arrays they look values up in, a hash of each
// value (cost_qual_eval's hashed ScalarArrayOpExpr).
func (c *costs) qualStartup(es []expr.Expr) float64 {
	n := 0
	for _, e := range es {
		expr.WalkExpr(e, func(x expr.Expr) bool {
			switch y := x.(type) {
			case *expr.AnyExpr:
				if a, ok := y.Arr.(*expr.ConstExpr); ok && !a.D.Null && (y.Op == "=" && !y.All || y.Op == "<>" && y.All) && len(a.D.A) >= minHashedArray {
					n += len(a.D.A)
				}
			case *expr.InExpr:
				if len(y.List) >= minHashedArray && allConst(y.List) {
					n += len(y.List)
				}
			case *expr.SublinkExpr:
				return false
			}
			return true
		})
	}
	return float64(n) * c.cpuOperator
}

// seqScanCost is cost_seqscan for a table of size sz with conditions
// quals, giving rows rows.
func (c *costs) seqScanCost(sz relSize, quals []expr.Expr, rows float64) pathCost {
	qs := c.qualStartup(quals)
	pc := pathCost{startup: qs, total: qs + c.seqPage*sz.pages + (c.cpuTuple+c.qualCost(quals))*sz.tuples, rows: rows}
	if !c.seqscan {
		pc.startup += disableCost
		pc.total += disableCost
	}
	return pc
}

// pagesFetched is index_pages_fetched (Mackert and Lohman): how many
// distinct pages of a table of pages pages reading tuples tuples in
// random order touches, given a cache of the planner's assumed size
// shared in proportion with the other relations of the query (here the
// table and its index, totalPages).
func (c *costs) pagesFetched(tuples, pages, totalPages float64) float64 {
	T := math.Max(pages, 1)
	b := math.Ceil(c.cacheSize * T / math.Max(totalPages, T))
	var n float64
	switch {
	case T <= b:
		n = math.Min(2*T*tuples/(2*T+tuples), T)
	case tuples <= 2*T*b/(2*T-b):
		n = 2 * T * tuples / (2*T + tuples)
	default:
		lim := 2 * T * b / (2*T - b)
		n = b + (tuples-lim)*(T-b)/T
	}
	return math.Ceil(n)
}

// indexScanCost is cost_index with btcostestimate for an index of size
// isz over a table of size sz: the index conditions select indexSel of
// the index entries (nquals of them evaluated per entry), the other
// conditions quals are checked on each heap row, rows rows come out;
// loops is how often the scan runs (the inner side of a nested loop) and
// the cost is that of one run. corr is the correlation of the index order
// with the heap's (0 without statistics). An index-only scan (indexOnly)
// reads only the heap pages that are not all-visible.
func (c *costs) indexScanCost(sz, isz relSize, indexSel float64, nquals int, quals []expr.Expr, rows, loops, nsa, corr float64, exactUnique, indexOnly bool) pathCost {
	ic := c.btreeCost(sz, isz, indexSel, nquals, loops, nsa, exactUnique)
	startup, numIdx := ic.startup, ic.rows
	// the heap: random page reads, fewer when the index order follows
	// the heap's, and for an index-only scan only on the pages that are
	// not all-visible
	fetched := numIdx
	heapPages := func(pages float64) float64 {
		if indexOnly {
			return math.Ceil(pages * (1 - sz.allVisible))
		}
		return pages
	}
	var maxIO, minIO float64
	if loops > 1 {
		pages := heapPages(c.pagesFetched(fetched*loops, sz.pages, sz.pages+isz.pages))
		maxIO = pages * c.randomPage / loops
		// perfectly correlated, each loop reads its share of the pages;
		// the cache saves some across loops
		pages = heapPages(c.pagesFetched(math.Ceil(indexSel*sz.pages)*loops, sz.pages, sz.pages+isz.pages))
		minIO = pages * c.randomPage / loops
	} else {
		pages := heapPages(c.pagesFetched(fetched, sz.pages, sz.pages+isz.pages))
		maxIO = pages * c.randomPage
		if pages := heapPages(math.Ceil(indexSel * sz.pages)); pages > 0 {
			minIO = c.randomPage + (pages-1)*c.seqPage
		}
	}
	heapIO := maxIO + corr*corr*(minIO-maxIO)
	heapCPU := (c.cpuTuple + c.qualCost(quals)) * fetched
	qs := c.qualStartup(quals)
	pc := pathCost{startup: startup + qs, total: qs + ic.total + heapIO + heapCPU, rows: rows}
	if !c.indexscan {
		pc.startup += disableCost
		pc.total += disableCost
	}
	return pc
}

// btreeCost is btcostestimate's cost of reading a B-tree index of size
// isz over a table of size sz for one of loops runs: descending the tree
// (startup), then the index pages and entries the conditions select
// (indexSel of the entries, nquals conditions evaluated per entry). Its
// rows are the entries read. It is what an index scan costs before the
// heap, and all a Bitmap Index Scan costs.
func (c *costs) btreeCost(sz, isz relSize, indexSel float64, nquals int, loops, nsa float64, exactUnique bool) pathCost {
	idxTuples := math.Max(isz.tuples, 1)
	numIdx := clampRows(indexSel * idxTuples)
	if exactUnique {
		numIdx = 1
	}
	// an IN list or = ANY (array) scans once per value: the entries,
	// pages and descents are per scan (genericcostestimate's
	// num_sa_scans)
	nsa = math.Max(nsa, 1)
	perScan := numIdx
	if nsa > 1 {
		perScan = clampRows(indexSel * idxTuples / nsa)
	}
	// btcostestimate: descending the tree, then reading the entries
	height := isz.height
	if !isz.hasHeight {
		height = treeHeight(isz.pages)
	}
	descent := math.Ceil(math.Log2(idxTuples))*c.cpuOperator + float64(height+1)*50*c.cpuOperator
	idxPages := math.Ceil(perScan * isz.pages / idxTuples)
	idxIO := idxPages * c.randomPage
	if loops > 1 || nsa > 1 {
		// genericcostestimate: the pages of all the scans, fewer for the
		// cache (one "tuple" per page), shared out over the loops (a
		// loop's scans of its array values are its own)
		idxIO = c.pagesFetched(idxPages*nsa*math.Max(loops, 1), isz.pages, sz.pages+isz.pages) * c.randomPage / math.Max(loops, 1)
	}
	idxCPU := perScan * nsa * (c.cpuIndexTuple + c.cpuOperator*float64(nquals))
	return pathCost{startup: descent, total: nsa*descent + idxIO + idxCPU, rows: numIdx}
}

// saScans is num_sa_scans for index path ch: the values of the IN list or
// array it scans for (estimate_array_length: an array not known when
// planning counts 10).
func saScans(ch indexChoice, cs condSet) float64 {
	if !ch.in {
		return 1
	}
	cc := cs[ch.ix.Cols[ch.neq]]
	switch {
	case cc == nil:
		return 1
	case cc.in != nil:
		return float64(len(cc.in))
	case cc.inArr != nil:
		if k, ok := cc.inArr.(*expr.ConstExpr); ok {
			if k.D.Null {
				return 1
			}
			return float64(len(k.D.A))
		}
		return 10
	}
	return 1
}

// treeHeight guesses a B-tree's height from its pages.
func treeHeight(pages float64) int {
	h := 0
	for n := pages; n > 1; n /= 256 {
		h++
	}
	return h
}

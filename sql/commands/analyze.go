package commands

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/stats"
	"lockd/sql/types"
	"lockd/storage"
)

// ANALYZE of one relation (PostgreSQL's analyze_rel and do_analyze_rel):
// a sample of its rows (acquire_sample_rows; for a partitioned table,
// samples of its leaf partitions in proportion to their sizes,
// acquire_inherited_sample_rows), statistics per column
// (stats.ComputeColumn), and the relation's reltuples, relpages and
// relallvisible and its indexes' counts. Package stats describes what is
// computed and how it differs from PostgreSQL.

// ErrAutovacuumCanceled: autovacuum gave a table up because a backend
// waits for a lock on it (PostgreSQL's "canceling autovacuum task").
var ErrAutovacuumCanceled = errors.New("canceling autovacuum task")

// SampleBlockHook, when set (by tests, before the server starts), is
// called before ANALYZE reads each sampled block.
var SampleBlockHook func()

// analyzeCol is one column to analyse: its position and target.
type analyzeCol struct {
	pos, target int
}

// sampleRow is one sampled row, its data copied off the page.
// sampleChunk is the size of the chunks a sample's tuples are copied
// into.
const sampleChunk = 64 << 10

type sampleRow struct {
	tid  storage.TID
	data []byte
}

// analyzeColumns resolves ANALYZE's column list against t (all columns
// when empty), with each column's statistics target; columns whose
// target is 0 are left out (examine_attribute).
func (s *Utility) analyzeColumns(t *catalog.TableDef, names []string) ([]analyzeCol, error) {
	def := int(s.Settings.Int("default_statistics_target"))
	target := func(i int) int {
		if st := t.Cols[i].StatTarget; st != nil && *st >= 0 {
			return int(*st)
		}
		return def
	}
	var out []analyzeCol
	if len(names) == 0 {
		for i := range t.Cols {
			if tg := target(i); tg > 0 {
				out = append(out, analyzeCol{i, tg})
			}
		}
		return out, nil
	}
	seen := map[int]bool{}
	for _, n := range names {
		i := t.ColIndex(n)
		if i < 0 {
			return nil, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", n, t.Name)
		}
		if seen[i] {
			return nil, pgerr.New(pgerr.DuplicateColumn, "column \"%s\" of relation \"%s\" appears more than once", n, t.Name)
		}
		seen[i] = true
		if tg := target(i); tg > 0 {
			out = append(out, analyzeCol{i, tg})
		}
	}
	return out, nil
}

// analyzeRel analyses table oid: its own rows, or for a partitioned
// table those of its partition tree.
func (s *Utility) analyzeRel(ec *expr.EvalCtx, oid uint32, names []string, opts vacuumOpts) error {
	t, err := s.openForVacuum(ec, oid, "analyze", opts)
	if t == nil || err != nil {
		return err
	}
	if t.Partitioned() && opts.auto {
		return nil // autovacuum does not analyse partitioned tables (PostgreSQL 15)
	}
	cols, err := s.analyzeColumns(t, names)
	if err != nil {
		return err
	}
	targRows := 100
	for _, c := range cols {
		targRows = max(targRows, stats.SampleRows(c.target))
	}
	start := time.Now()
	st := s.Catalog.Stats()
	if t.Partitioned() {
		return s.analyzeTree(ec, t, cols, targRows, len(names) == 0, opts, start)
	}
	if ok, err := s.lockIndexes(ec, t, locks.AccessShareLock, opts); !ok || err != nil {
		return err
	}
	if opts.verbose {
		s.infoNotice(fmt.Sprintf("analyzing \"%s\"", qualifiedName(t)))
	}
	smp, err := s.sampleTable(ec, t, targRows, opts)
	if err != nil {
		return err
	}
	rows, err := decodeSample(t, smp.rows)
	if err != nil {
		return err
	}
	allVisible, err := s.Store.AllVisiblePages(storage.RelID(t.RelFile))
	if err != nil {
		return err
	}
	ts := &stats.TableStats{RelTuples: smp.totalRows, RelPages: float64(smp.pages), RelAllVisible: float64(min(allVisible, smp.pages))}
	if old := st.Table(oid); old != nil {
		ts.Cols = old.Cols
	}
	if len(rows) > 0 {
		ts.Cols = computeColumns(t, cols, rows, smp.totalRows, ts.Cols)
	}
	st.Publish(oid, ts)
	for _, ix := range s.Cat().TableIndexes(t) {
		pages, _, _ := s.IndexSize(ix)
		st.SetSize(ix.OID, math.Ceil(smp.totalRows), pages)
	}
	live, dead := s.TabStats.Pending(oid)
	st.ReportAnalyze(oid, int64(smp.totalRows)-live, int64(smp.totalDead)-dead, len(names) == 0, opts.auto, start)
	return nil
}

// analyzeTree computes the inherited statistics of partitioned table t
// from samples of its leaf partitions, each locked AccessShareLock
// (find_all_inheritors), sampled in proportion to its pages.
func (s *Utility) analyzeTree(ec *expr.EvalCtx, t *catalog.TableDef, cols []analyzeCol, targRows int, resetMod bool, opts vacuumOpts, start time.Time) error {
	var leaves []*catalog.TableDef
	for _, k := range s.Cat().Inheritors(t) {
		if err := s.LockNow(ec, k.OID, locks.AccessShareLock); err != nil {
			return err
		}
		if k = s.Cat().Tables[k.OID]; k != nil && !k.Partitioned() {
			leaves = append(leaves, k)
		}
	}
	if len(leaves) == 0 {
		return nil // relhassubclass is false: nothing to do
	}
	if opts.verbose {
		s.infoNotice(fmt.Sprintf("analyzing \"%s\" inheritance tree", qualifiedName(t)))
	}
	pages := make([]float64, len(leaves))
	totalPages := 0.0
	for i, k := range leaves {
		n, err := s.Store.RelationPages(storage.RelID(k.RelFile))
		if err != nil {
			return err
		}
		pages[i] = float64(n)
		totalPages += pages[i]
	}
	var rows [][]types.Datum
	var totalRows, totalDead float64
	for i, k := range leaves {
		if pages[i] == 0 {
			continue
		}
		n := min(int(math.RoundToEven(float64(targRows)*pages[i]/totalPages)), targRows-len(rows))
		if n <= 0 {
			continue
		}
		smp, err := s.sampleTable(ec, k, n, opts)
		if err != nil {
			return err
		}
		krows, err := decodeSample(k, smp.rows)
		if err != nil {
			return err
		}
		rows = append(rows, mapColumns(t, k, krows)...)
		totalRows += smp.totalRows
		totalDead += smp.totalDead
	}
	st := s.Catalog.Stats()
	ts := &stats.TableStats{RelTuples: totalRows, RelPages: -1, Inherited: true}
	if old := st.Table(t.OID); old != nil {
		ts.Cols = old.Cols
	}
	if len(rows) > 0 {
		ts.Cols = computeColumns(t, cols, rows, totalRows, ts.Cols)
	}
	st.Publish(t.OID, ts)
	st.ReportAnalyze(t.OID, 0, 0, resetMod, opts.auto, start)
	return nil
}

// computeColumns computes the statistics of cols over rows (in t's
// column positions) into a copy of old (by attnum); a column whose
// sample is empty keeps its old statistics.
func computeColumns(t *catalog.TableDef, cols []analyzeCol, rows [][]types.Datum, totalRows float64, old []*stats.ColumnStats) []*stats.ColumnStats {
	out := slices.Clone(old)
	vals := make([]types.Datum, len(rows))
	for _, c := range cols {
		for i, r := range rows {
			vals[i] = r[c.pos]
		}
		cs := stats.ComputeColumn(vals, t.Cols[c.pos].Type(), c.target, totalRows)
		if cs == nil {
			continue
		}
		a := int(t.Attnum(c.pos))
		for len(out) < a {
			out = append(out, nil)
		}
		out[a-1] = cs
	}
	return out
}

// mapColumns turns rows of partition k into rows of its root t, column
// by column name (a partition may order or number its columns
// differently).
func mapColumns(t, k *catalog.TableDef, rows [][]types.Datum) [][]types.Datum {
	m := make([]int, len(t.Cols))
	same := len(t.Cols) == len(k.Cols)
	for i := range t.Cols {
		m[i] = k.ColIndex(t.Cols[i].Name)
		same = same && m[i] == i
	}
	if same {
		return rows
	}
	out := make([][]types.Datum, len(rows))
	for j, r := range rows {
		nr := make([]types.Datum, len(t.Cols))
		for i, p := range m {
			nr[i] = types.NullDatum
			if p >= 0 {
				nr[i] = r[p]
			}
		}
		out[j] = nr
	}
	return out
}

// tableSample is what sampleTable found.
type tableSample struct {
	rows                 []sampleRow // in physical order
	pages                uint32      // the table's size
	totalRows, totalDead float64     // estimated live and dead rows
}

// sampleTable samples up to targRows live rows of leaf table t
// (acquire_sample_rows): up to targRows random blocks, and a uniform
// sample of the live rows on them. For autovacuum, it gives the table up
// when someone waits for a lock on it.
func (s *Utility) sampleTable(ec *expr.EvalCtx, t *catalog.TableDef, targRows int, opts vacuumOpts) (*tableSample, error) {
	rel := storage.RelID(t.RelFile)
	nblocks, err := s.Store.RelationPages(rel)
	if err != nil {
		return nil, err
	}
	out := &tableSample{pages: nblocks}
	random := rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	bs := stats.NewBlockSampler(int(nblocks), targRows, random)
	res := stats.NewReservoir(targRows, random)
	oldestXmin := s.Txns.OldestXmin()
	tag := locks.RelationTag(catalog.DatabaseOID, t.OID)
	var live, dead int
	// The sample's rows are known to be at most targRows (and at most
	// what the table's pages can hold): one allocation for them, and
	// their tuples copied into shared chunks rather than one each.
	out.rows = make([]sampleRow, 0, min(uint64(targRows), uint64(nblocks)*storage.MaxTuplesPerPage))
	var chunk []byte
	for {
		blk, ok := bs.Next()
		if !ok {
			break
		}
		if err := ec.Ctx.Err(); err != nil {
			return nil, context.Cause(ec.Ctx)
		}
		if opts.auto && bs.Chosen()%32 == 0 && s.Locks.HasWaiters(tag) {
			return nil, ErrAutovacuumCanceled
		}
		if SampleBlockHook != nil {
			SampleBlockHook()
		}
		l, d, err := s.Store.AnalyzeBlock(s.Proc, &s.Txn, rel, uint32(blk), oldestXmin, func(tid storage.TID, data []byte) {
			k := res.Offer()
			if k < 0 {
				return
			}
			if len(chunk)+len(data) > cap(chunk) {
				chunk = make([]byte, 0, max(sampleChunk, len(data)))
			}
			start := len(chunk)
			chunk = append(chunk, data...)
			r := sampleRow{tid: tid, data: chunk[start:len(chunk):len(chunk)]}
			if k < len(out.rows) {
				out.rows[k] = r
			} else {
				out.rows = append(out.rows, r)
			}
		})
		if err != nil {
			return nil, err
		}
		live += l
		dead += d
	}
	if len(out.rows) == targRows { // replacements broke the physical order
		slices.SortFunc(out.rows, func(a, b sampleRow) int {
			if a.tid.Block != b.tid.Block {
				return cmpUint(a.tid.Block, b.tid.Block)
			}
			return int(a.tid.Offset) - int(b.tid.Offset)
		})
	}
	if m := bs.Chosen(); m > 0 {
		out.totalRows = math.Floor(float64(live)/float64(m)*float64(nblocks) + 0.5)
		out.totalDead = math.Floor(float64(dead)/float64(m)*float64(nblocks) + 0.5)
	}
	if opts.verbose {
		s.infoNotice(fmt.Sprintf("\"%s\": scanned %d of %d pages, containing %d live rows and %d dead rows; %d rows in sample, %.0f estimated total rows",
			t.Name, bs.Chosen(), nblocks, live, dead, len(out.rows), out.totalRows))
	}
	return out, nil
}

func cmpUint(a, b uint32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// decodeSample decodes the sampled rows of t.
func decodeSample(t *catalog.TableDef, smp []sampleRow) ([][]types.Datum, error) {
	out := make([][]types.Datum, len(smp))
	buf := make([]types.Datum, len(smp)*len(t.Cols))
	for i, r := range smp {
		out[i] = buf[i*len(t.Cols) : (i+1)*len(t.Cols) : (i+1)*len(t.Cols)]
		if err := catalog.DecodeRow(r.data, t, out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// indexBuilt records what CREATE INDEX learnt while building index ix of
// table t from tuples rows (index_update_stats): the index's row count
// and size, and the table's — unless the table is empty and its count
// still unknown, which an index made with the table must not make look
// vacuumed.
func (s *Utility) indexBuilt(t *catalog.TableDef, ix *catalog.IndexDef, tuples int) {
	st := s.Catalog.Stats()
	ixPages, _, _ := s.IndexSize(ix)
	st.SetSize(ix.OID, float64(tuples), ixPages)
	old := st.Table(t.OID)
	if tuples == 0 && (old == nil || old.RelTuples < 0) {
		return
	}
	rel := storage.RelID(t.RelFile)
	pages, err := s.Store.RelationPages(rel)
	if err != nil {
		return
	}
	allVisible, err := s.Store.AllVisiblePages(rel)
	if err == nil {
		st.SetHeapSize(t.OID, float64(tuples), float64(pages), float64(allVisible))
	}
}

package difftest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Config is what a run does.
type Config struct {
	Seed     uint64
	N        int // queries
	PerRound int // queries on one schema before the next round makes a new one
	// Only runs query number Only alone (on its round's schema); -1 runs all.
	Only       int
	Minimize   bool // shrink a differing query by dropping clauses
	MaxDiffs   int  // stop after this many differences; 0 for no limit
	Exclusions Exclusions
	// Logf reports progress and differences as they are found.
	Logf func(format string, args ...any)
	// Timeout bounds each statement on each server.
	Timeout time.Duration
	// Verbose logs every statement with both outcomes.
	Verbose bool
	// DumpDir, if set, receives each round's schema as an SQL script
	// (seed-S-round-R.sql), to load into psql when studying a difference.
	DumpDir string
}

// slowQuery is how long a query may take on a server before the run
// names it (it is not an error).
const slowQuery = 5 * time.Second

// Executions of each prepared statement: more than PostgreSQL's five
// custom plans, so the plan cache decides on a generic plan and uses it.
const preparedExecutions = 8

// Report is what a run found.
type Report struct {
	Seed        uint64
	Rounds      int
	Queries     int
	Prepared    int            // queries run as prepared statements
	Executions  int            // statements compared (prepared ones count once per execution)
	Same        int            // executions with the same outcome
	Rows        int            // rows compared
	Empty       int            // executions that returned no rows on both servers
	BothFailed  map[string]int // SQLSTATE: executions where both failed with it
	Unsupported map[string]int // lockd's 0A000 messages: executions refused
	Diffs       []*Diff
	// SettingsLockdLacks are planner settings the run set in PostgreSQL
	// only, because lockd has no such setting.
	SettingsLockdLacks []string
	LockdTime, PGTime  time.Duration
	// Slowest are the steps that took lockd longest, slowest first.
	Slowest []Slow
}

// Slow is one step's time on both servers.
type Slow struct {
	SQL       string
	Lockd, PG time.Duration
}

// slowestKept is how many of the slowest steps a report keeps.
const slowestKept = 5

func (r *Report) noteSlow(s Slow) {
	i := len(r.Slowest)
	for i > 0 && r.Slowest[i-1].Lockd < s.Lockd {
		i--
	}
	if i >= slowestKept {
		return
	}
	r.Slowest = append(r.Slowest, Slow{})
	copy(r.Slowest[i+1:], r.Slowest[i:])
	r.Slowest[i] = s
	r.Slowest = r.Slowest[:min(len(r.Slowest), slowestKept)]
}

// Diff is one difference, with what reproduces it.
type Diff struct {
	Seed      uint64
	Round     int
	Query     int // -1: a statement that creates or fills the schema
	SQL       string
	Params    []string // the values of the differing execution
	Execution int      // of a prepared statement, 1-based
	Detail    string
	Minimized string
}

func (d *Diff) String() string {
	var b strings.Builder
	if d.Query < 0 {
		fmt.Fprintf(&b, "difference in the schema of round %d (seed %d)\n", d.Round, d.Seed)
	} else {
		fmt.Fprintf(&b, "difference in query %d (seed %d, round %d)\n", d.Query, d.Seed, d.Round)
	}
	fmt.Fprintf(&b, "  query:  %s\n", d.SQL)
	if d.Params != nil {
		fmt.Fprintf(&b, "  params: %s (execution %d of %d of the prepared statement)\n", strings.Join(d.Params, ", "), d.Execution, preparedExecutions)
	}
	for _, l := range strings.Split(d.Detail, "\n") {
		b.WriteString("  " + l + "\n")
	}
	if d.Minimized != "" {
		fmt.Fprintf(&b, "  minimized: %s\n", d.Minimized)
	}
	if d.Query >= 0 {
		fmt.Fprintf(&b, "  reproduce: go test ./internal/difftest -run TestDifferential -difftest.seed=%d -difftest.query=%d -v\n", d.Seed, d.Query)
	}
	return b.String()
}

// Summary describes the counts of a report.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d: %d queries (%d prepared) over %d schemas, %d executions, %d rows compared: %d same (%d of them no rows), %d unsupported, %d differences\n",
		r.Seed, r.Queries, r.Prepared, r.Rounds, r.Executions, r.Rows, r.Same, r.Empty, sum(r.Unsupported), len(r.Diffs))
	fmt.Fprintf(&b, "time in lockd %v, in PostgreSQL %v\n", r.LockdTime.Round(time.Millisecond), r.PGTime.Round(time.Millisecond))
	if len(r.Slowest) > 0 {
		b.WriteString("slowest in lockd (lockd / PostgreSQL):\n")
		for _, s := range r.Slowest {
			q := s.SQL
			if len(q) > 300 {
				q = q[:300] + "..."
			}
			fmt.Fprintf(&b, "  %v / %v  %s\n", s.Lockd.Round(time.Millisecond), s.PG.Round(time.Millisecond), q)
		}
	}
	if len(r.BothFailed) > 0 {
		fmt.Fprintf(&b, "both failed alike: %s\n", counts(r.BothFailed))
	}
	if len(r.Unsupported) > 0 {
		b.WriteString("unsupported in lockd (0A000), by message:\n")
		for _, kv := range sorted(r.Unsupported) {
			fmt.Fprintf(&b, "  %5d  %s\n", kv.n, kv.k)
		}
	}
	if len(r.SettingsLockdLacks) > 0 {
		fmt.Fprintf(&b, "settings set in PostgreSQL only (lockd has none): %s\n", strings.Join(r.SettingsLockdLacks, ", "))
	}
	return b.String()
}

type kv struct {
	k string
	n int
}

func sorted(m map[string]int) []kv {
	var out []kv
	for k, n := range m {
		out = append(out, kv{k, n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].n > out[j].n || (out[i].n == out[j].n && out[i].k < out[j].k) })
	return out
}

func counts(m map[string]int) string {
	var f []string
	for _, kv := range sorted(m) {
		f = append(f, fmt.Sprintf("%s ×%d", kv.k, kv.n))
	}
	return strings.Join(f, ", ")
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// The random streams of a run: one per round's schema and settings, one
// per query, one per execution of a prepared query.
const (
	streamSchema   = 1 << 60
	streamSettings = 2 << 60
	streamQuery    = 3 << 60
	streamExec     = 4 << 60
)

// errStop ends a run early (MaxDiffs reached, or a server broke).
var errStop = errors.New("difftest: run stopped")

type runner struct {
	cfg       Config
	lockd, pg *pgconn.PgConn
	rep       *Report
	round     int
}

// Run runs cfg on the two servers, each with a connection of its own,
// and reports what it found. Its error is for what stopped the run
// (a broken connection); differences are in the report.
func Run(ctx context.Context, cfg Config, lockd, pg *pgconn.PgConn) (*Report, error) {
	if cfg.PerRound <= 0 {
		cfg.PerRound = 150
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	r := &runner{cfg: cfg, lockd: lockd, pg: pg, rep: &Report{
		Seed: cfg.Seed, BothFailed: map[string]int{}, Unsupported: map[string]int{},
	}}
	for _, c := range []*pgconn.PgConn{lockd, pg} {
		// the statement timeout is the servers' own, so a slow query
		// fails with 57014 on one side rather than hanging the run
		if _, err := c.Exec(ctx, fmt.Sprintf("set statement_timeout = %d", cfg.Timeout.Milliseconds())).ReadAll(); err != nil {
			return r.rep, err
		}
	}
	first, last := 0, cfg.N
	if cfg.Only >= 0 {
		first, last = cfg.Only, cfg.Only+1
	}
	for round := first / cfg.PerRound; round*cfg.PerRound < last; round++ {
		lo, hi := max(first, round*cfg.PerRound), min(last, (round+1)*cfg.PerRound)
		if err := r.runRound(ctx, round, lo, hi); err != nil {
			if errors.Is(err, errStop) {
				return r.rep, nil
			}
			return r.rep, err
		}
	}
	return r.rep, nil
}

func (r *runner) runRound(ctx context.Context, round, lo, hi int) error {
	r.round = round
	r.rep.Rounds++
	s := genSchema(rand.New(rand.NewPCG(r.cfg.Seed, streamSchema|uint64(round))))
	stmts := append([]string{dropAll}, s.setupSQL()...)
	if r.cfg.DumpDir != "" {
		name := filepath.Join(r.cfg.DumpDir, fmt.Sprintf("seed-%d-round-%d.sql", r.cfg.Seed, round))
		if err := os.WriteFile(name, []byte(strings.Join(stmts, ";\n")+";\n"), 0o644); err != nil {
			return err
		}
		r.cfg.Logf("round %d: schema written to %s", round, name)
	}
	for _, sql := range stmts {
		l, p := r.exec(ctx, sql)
		if l.other != nil || p.other != nil {
			return r.broken(-1, sql, l, p)
		}
		if l.err != nil && l.err.Code == "0A000" && !p.failed() {
			// PostgreSQL has what lockd refused (an index, say): the
			// queries still compare, on different plans
			r.rep.Unsupported[l.err.Message]++
			continue
		}
		if l.failed() || p.failed() || l.tag != p.tag {
			r.addDiff(&Diff{Query: -1, SQL: sql, Detail: fmt.Sprintf("lockd: %s %s\nPostgreSQL: %s %s", l, l.tag, p, p.tag)})
			return r.checkStop()
		}
	}
	reset, err := r.roundSettings(ctx, round)
	if err != nil {
		return err
	}
	for i := lo; i < hi; i++ {
		if err := r.runQuery(ctx, s, i); err != nil {
			return err
		}
		if (i+1)%500 == 0 {
			r.cfg.Logf("%d queries, %d differences", i+1, len(r.rep.Diffs))
		}
	}
	for _, sql := range reset {
		r.exec(ctx, sql)
	}
	return nil
}

// dropAll drops every table a schema may have.
const dropAll = "drop table if exists ta, tb, tc, pr, pl"

// planSettings are PostgreSQL's planner switches. A round turns a few of
// them off (in both servers, or in PostgreSQL alone where lockd does not
// have the setting), so both servers' other plans get their turn, and
// sometimes forces custom or generic plans for prepared statements.
var planSettings = []string{
	"enable_seqscan", "enable_indexscan", "enable_indexonlyscan", "enable_bitmapscan",
	"enable_nestloop", "enable_hashjoin", "enable_mergejoin", "enable_sort", "enable_hashagg",
	"enable_partition_pruning",
}

func (r *runner) roundSettings(ctx context.Context, round int) ([]string, error) {
	rng := rand.New(rand.NewPCG(r.cfg.Seed, streamSettings|uint64(round)))
	var set []string
	if rng.IntN(2) == 0 {
		for _, i := range rng.Perm(len(planSettings))[:1+rng.IntN(3)] {
			set = append(set, planSettings[i]+" = off")
		}
	}
	// a quarter of the rounds hash neither joins nor groups, so that merge
	// joins (FULL JOINs too) and sorted aggregation get their turn
	if rng.IntN(4) == 0 {
		for _, s := range []string{"enable_hashjoin = off", "enable_hashagg = off"} {
			if !slices.Contains(set, s) {
				set = append(set, s)
			}
		}
	}
	switch rng.IntN(6) {
	case 0:
		set = append(set, "plan_cache_mode = force_generic_plan")
	case 1:
		set = append(set, "plan_cache_mode = force_custom_plan")
	}
	var reset []string
	for _, s := range set {
		name, _, _ := strings.Cut(s, " ")
		reset = append(reset, "reset "+name)
		if _, err := r.pg.Exec(ctx, "set "+s).ReadAll(); err != nil {
			return nil, fmt.Errorf("PostgreSQL: set %s: %w", s, err)
		}
		if _, err := r.lockd.Exec(ctx, "set "+s).ReadAll(); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "42704" {
				if !slices.Contains(r.rep.SettingsLockdLacks, name) {
					r.rep.SettingsLockdLacks = append(r.rep.SettingsLockdLacks, name)
				}
				continue
			}
			return nil, fmt.Errorf("lockd: set %s: %w", s, err)
		}
	}
	if len(set) > 0 {
		r.cfg.Logf("round %d: set %s", round, strings.Join(set, ", "))
	}
	return reset, nil
}

// genQueryN generates query number i of the run over s.
func genQueryN(seed uint64, s *schema, ex Exclusions, i int) *query {
	rng := rand.New(rand.NewPCG(seed, streamQuery|uint64(i)))
	g := &gen{r: rng, s: s, ex: ex}
	prepared := rng.IntN(100) < 15
	return g.genQuery(i, prepared)
}

func (r *runner) runQuery(ctx context.Context, s *schema, i int) error {
	q := genQueryN(r.cfg.Seed, s, r.cfg.Exclusions, i)
	lt, pt := r.rep.LockdTime, r.rep.PGTime
	defer func() {
		if l, p := r.rep.LockdTime-lt, r.rep.PGTime-pt; max(l, p) > slowQuery {
			r.cfg.Logf("query %d took %v in lockd, %v in PostgreSQL: %s", i, l.Round(time.Millisecond), p.Round(time.Millisecond), q.sql())
		}
	}()
	r.rep.Queries++
	if q.params != nil {
		r.rep.Prepared++
		return r.runPrepared(ctx, q)
	}
	sql := q.sql()
	extended := i%3 == 2
	var l, p *result
	if extended {
		l, p = r.execParams(ctx, sql)
	} else {
		l, p = r.exec(ctx, sql)
	}
	if l.other != nil || p.other != nil {
		return r.broken(i, sql, l, p)
	}
	if r.cfg.Verbose {
		r.cfg.Logf("query %d: %s\n  lockd %s, PostgreSQL %s", i, sql, l, p)
	}
	switch o, detail := r.judge(q.meta(), l, p); o {
	case different:
		d := &Diff{Query: i, SQL: sql, Detail: detail}
		if extended {
			d.Detail = "(extended protocol) " + d.Detail
		}
		if r.cfg.Minimize {
			d.Minimized = r.minimize(ctx, q, extended)
		}
		r.addDiff(d)
		return r.checkStop()
	}
	return nil
}

// judge compares and counts one execution.
func (r *runner) judge(m meta, l, p *result) (outcome, string) {
	r.rep.Executions++
	o, detail := compare(m, l, p)
	switch o {
	case same:
		r.rep.Same++
		r.rep.Rows += len(p.rows)
		if p.err == nil && len(p.rows) == 0 {
			r.rep.Empty++
		}
		if p.err != nil {
			r.rep.BothFailed[p.err.Code]++
		}
	case unsupported:
		r.rep.Unsupported[l.err.Message]++
	}
	return o, detail
}

func (r *runner) runPrepared(ctx context.Context, q *query) error {
	sql := q.sql()
	if r.cfg.Verbose {
		r.cfg.Logf("query %d (prepared): %s", q.num, sql)
	}
	const name = "difftest"
	var lDesc, pDesc *pgconn.StatementDescription
	var lErr, pErr error
	r.timed(ctx, sql, func(ctx context.Context) { lDesc, lErr = r.lockd.Prepare(ctx, name, sql, nil) },
		func(ctx context.Context) { pDesc, pErr = r.pg.Prepare(ctx, name, sql, nil) })
	defer func() {
		c, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
		defer cancel()
		if lDesc != nil {
			r.lockd.Deallocate(c, name)
		}
		if pDesc != nil {
			r.pg.Deallocate(c, name)
		}
	}()
	if lErr != nil || pErr != nil {
		l, p := newResult(nil, nil, pgconn.CommandTag{}, lErr), newResult(nil, nil, pgconn.CommandTag{}, pErr)
		if l.other != nil || p.other != nil {
			return r.broken(q.num, sql, l, p)
		}
		if lErr == nil {
			l = &result{}
		}
		if pErr == nil {
			p = &result{}
		}
		if o, detail := r.judge(q.meta(), l, p); o == different {
			r.addDiff(&Diff{Query: q.num, SQL: sql, Detail: "Parse: " + detail})
			return r.checkStop()
		}
		return nil
	}
	if !slices.Equal(lDesc.ParamOIDs, pDesc.ParamOIDs) {
		r.rep.Executions++
		r.addDiff(&Diff{Query: q.num, SQL: sql, Detail: fmt.Sprintf("parameter types: lockd %v, PostgreSQL %v", lDesc.ParamOIDs, pDesc.ParamOIDs)})
		return r.checkStop()
	}
	binaryParams := rand.New(rand.NewPCG(r.cfg.Seed, streamExec|uint64(q.num)<<8)).IntN(2) == 0
	for k := range preparedExecutions {
		vals, shown := paramValues(r.cfg.Seed, q, k)
		args, formats := encodeParams(vals, pDesc.ParamOIDs, binaryParams)
		var l, p *result
		r.timed(ctx, sql, func(ctx context.Context) {
			rr := r.lockd.ExecPrepared(ctx, name, args, formats, nil).Read()
			l = newResult(rr.FieldDescriptions, rr.Rows, rr.CommandTag, rr.Err)
		}, func(ctx context.Context) {
			rr := r.pg.ExecPrepared(ctx, name, args, formats, nil).Read()
			p = newResult(rr.FieldDescriptions, rr.Rows, rr.CommandTag, rr.Err)
		})
		if r.cfg.Verbose {
			r.cfg.Logf("query %d, execution %d (%s): lockd %s, PostgreSQL %s", q.num, k+1, strings.Join(shown, ", "), l, p)
		}
		if l.other != nil || p.other != nil {
			return r.broken(q.num, sql, l, p)
		}
		if o, detail := r.judge(q.meta(), l, p); o == different {
			if binaryParams {
				detail = "(binary parameters where their type allows) " + detail
			}
			r.addDiff(&Diff{Query: q.num, SQL: sql, Params: shown, Execution: k + 1, Detail: detail})
			return r.checkStop()
		}
	}
	return nil
}

// paramValues are the values of execution k of q's parameters (nil for
// NULL), and how to print them.
func paramValues(seed uint64, q *query, k int) ([]*string, []string) {
	g := &gen{r: rand.New(rand.NewPCG(seed, streamExec|uint64(q.num)<<8|uint64(k+1)))}
	var vals []*string
	var shown []string
	for i, p := range q.params {
		var v *string
		switch {
		case p.count:
			s := strconv.Itoa(g.intn(12))
			v = &s
		case p.array:
			var els []string
			for range g.intn(5) {
				if g.chance(0.1) {
					els = append(els, "NULL")
				} else {
					els = append(els, arrayElem(g.value(p.col).text))
				}
			}
			s := "{" + strings.Join(els, ",") + "}"
			v = &s
		case g.chance(0.05):
		default:
			s := g.value(p.col).text
			v = &s
		}
		vals = append(vals, v)
		if v == nil {
			shown = append(shown, fmt.Sprintf("$%d = NULL", i+1))
		} else {
			shown = append(shown, fmt.Sprintf("$%d = %s", i+1, quote(*v)))
		}
	}
	return vals, shown
}

// arrayElem quotes an element of an array's text form.
func arrayElem(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// encodeParams encodes parameter values: as text, or in the binary format
// for integers, booleans and text when binary is set.
func encodeParams(vals []*string, oids []uint32, binaryFmt bool) ([][]byte, []int16) {
	args := make([][]byte, len(vals))
	formats := make([]int16, len(vals))
	for i, v := range vals {
		if v == nil {
			continue
		}
		args[i] = []byte(*v)
		if !binaryFmt || i >= len(oids) {
			continue
		}
		switch oids[i] {
		case 23:
			if n, err := strconv.ParseInt(*v, 10, 32); err == nil {
				args[i], formats[i] = binary.BigEndian.AppendUint32(nil, uint32(n)), 1
			}
		case 20:
			if n, err := strconv.ParseInt(*v, 10, 64); err == nil {
				args[i], formats[i] = binary.BigEndian.AppendUint64(nil, uint64(n)), 1
			}
		case 16:
			if *v == "t" || *v == "f" {
				args[i], formats[i] = []byte{map[bool]byte{true: 1, false: 0}[*v == "t"]}, 1
			}
		case 25:
			formats[i] = 1 // text's binary form is its bytes
		}
	}
	return args, formats
}

// exec runs sql on both servers with the simple protocol.
func (r *runner) exec(ctx context.Context, sql string) (l, p *result) {
	read := func(c *pgconn.PgConn, ctx context.Context) *result {
		rs, err := c.Exec(ctx, sql).ReadAll()
		if err != nil || len(rs) == 0 {
			return newResult(nil, nil, pgconn.CommandTag{}, err)
		}
		last := rs[len(rs)-1]
		return newResult(last.FieldDescriptions, last.Rows, last.CommandTag, last.Err)
	}
	r.timed(ctx, sql, func(ctx context.Context) { l = read(r.lockd, ctx) }, func(ctx context.Context) { p = read(r.pg, ctx) })
	return l, p
}

// execParams runs sql on both servers with the extended protocol (an
// unnamed statement without parameters).
func (r *runner) execParams(ctx context.Context, sql string) (l, p *result) {
	read := func(c *pgconn.PgConn, ctx context.Context) *result {
		rr := c.ExecParams(ctx, sql, nil, nil, nil, nil).Read()
		return newResult(rr.FieldDescriptions, rr.Rows, rr.CommandTag, rr.Err)
	}
	r.timed(ctx, sql, func(ctx context.Context) { l = read(r.lockd, ctx) }, func(ctx context.Context) { p = read(r.pg, ctx) })
	return l, p
}

// timed runs the lockd and the PostgreSQL side of a step, one after the
// other, each under the statement timeout (and a margin), and adds up
// their times.
func (r *runner) timed(ctx context.Context, sql string, lockd, pg func(context.Context)) {
	var took [2]time.Duration
	for i, f := range []func(context.Context){lockd, pg} {
		c, cancel := context.WithTimeout(ctx, r.cfg.Timeout+30*time.Second)
		start := time.Now()
		f(c)
		took[i] = time.Since(start)
		cancel()
	}
	r.rep.LockdTime += took[0]
	r.rep.PGTime += took[1]
	r.rep.noteSlow(Slow{SQL: sql, Lockd: took[0], PG: took[1]})
}

func (r *runner) addDiff(d *Diff) {
	d.Seed, d.Round = r.cfg.Seed, r.round
	r.rep.Diffs = append(r.rep.Diffs, d)
	r.cfg.Logf("%s", d)
}

func (r *runner) checkStop() error {
	if r.cfg.MaxDiffs > 0 && len(r.rep.Diffs) >= r.cfg.MaxDiffs {
		return errStop
	}
	return nil
}

// broken reports a connection that failed without an SQLSTATE (a server
// that crashed, a timeout of the client) and stops the run.
func (r *runner) broken(num int, sql string, l, p *result) error {
	r.addDiff(&Diff{Query: num, SQL: sql, Detail: fmt.Sprintf("lockd: %s\nPostgreSQL: %s", l, p)})
	return fmt.Errorf("query %d: a connection failed: lockd: %v; PostgreSQL: %v", num, l, p)
}

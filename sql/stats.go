package sql

import (
	"sync/atomic"
	"time"
)

// Statement counters for /metrics. Each session counts the statements it
// executes in its own atomics (one writer: the session's goroutine);
// Engine.StatementStats sums the live sessions and the totals of closed
// ones when somebody asks, so no shared counter sits on the statement
// path. A closed session's counters are folded into the Engine's totals
// under Engine.mu in the same critical section that removes it from the
// live set, so sums never go backwards and nothing is counted twice.

type stmtKind uint8

const (
	kindSelect stmtKind = iota
	kindInsert
	kindUpdate
	kindDelete
	kindCopy
	kindTransaction // BEGIN, START TRANSACTION, COMMIT, ROLLBACK
	kindDDL         // CREATE, ALTER, DROP, TRUNCATE
	kindUtility     // SET, RESET, SHOW, ALTER SYSTEM, LOCK, VACUUM, ...
	numStmtKinds
)

var stmtKindNames = [numStmtKinds]string{
	"select", "insert", "update", "delete", "copy", "transaction", "ddl", "utility",
}

// kindOf classifies a statement by its command tag.
func kindOf(tag string) stmtKind {
	switch tag {
	case "SELECT":
		return kindSelect
	case "INSERT":
		return kindInsert
	case "UPDATE":
		return kindUpdate
	case "DELETE":
		return kindDelete
	case "COPY":
		return kindCopy
	case "BEGIN", "START TRANSACTION", "COMMIT", "ROLLBACK":
		return kindTransaction
	case "CREATE TABLE", "ALTER TABLE", "DROP TABLE", "TRUNCATE TABLE", "CREATE INDEX", "DROP INDEX":
		return kindDDL
	}
	return kindUtility
}

// stmtBounds are the upper bounds of the statement duration buckets; a
// last bucket counts the statements slower than the largest bound.
var stmtBounds = [...]time.Duration{
	50 * time.Microsecond, 100 * time.Microsecond, 250 * time.Microsecond, 500 * time.Microsecond,
	time.Millisecond, 2500 * time.Microsecond, 5 * time.Millisecond, 10 * time.Millisecond,
	25 * time.Millisecond, 50 * time.Millisecond, 100 * time.Millisecond, 250 * time.Millisecond,
	500 * time.Millisecond, time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second,
}

const numStmtBuckets = len(stmtBounds) + 1

// stmtCounters are one session's counters for one statement kind.
type stmtCounters struct {
	count   atomic.Uint64
	timeNs  atomic.Uint64
	buckets [numStmtBuckets]atomic.Uint64 // not cumulative
}

// sessionStats are a session's statement counters. Written only by the
// session's goroutine; read by anyone.
type sessionStats struct {
	kinds [numStmtKinds]stmtCounters
}

// statementDone counts a statement that started at start. Called (deferred)
// by Execute; it costs a clock read and three uncontended atomic adds.
func (ss *sessionStats) statementDone(tag string, start time.Time) {
	d := time.Since(start)
	c := &ss.kinds[kindOf(tag)]
	i := 0
	for i < len(stmtBounds) && d > stmtBounds[i] {
		i++
	}
	c.count.Add(1)
	c.timeNs.Add(uint64(d))
	c.buckets[i].Add(1)
}

// stmtTotals are plain sums of sessionStats.
type stmtTotals struct {
	kinds [numStmtKinds]struct {
		count, timeNs uint64
		buckets       [numStmtBuckets]uint64
	}
}

func (ss *sessionStats) addTo(t *stmtTotals) {
	for k := range ss.kinds {
		c, d := &ss.kinds[k], &t.kinds[k]
		d.count += c.count.Load()
		d.timeNs += c.timeNs.Load()
		for b := range c.buckets {
			d.buckets[b] += c.buckets[b].Load()
		}
	}
}

// StatementStats are statement counters summed over every session, live
// and closed. A statement is counted when Execute returns (errors
// included); its duration runs from the start of execution (lock
// acquisition included; parsing and planning excluded) to its end.
type StatementStats struct {
	// Bounds are the upper bounds, in seconds, of the finite duration
	// buckets, ascending.
	Bounds []float64
	// Kinds has one entry per statement kind, in a fixed order.
	Kinds []StatementKindStats
}

// StatementKindStats are the counters of one statement kind.
type StatementKindStats struct {
	Kind    string   // "select", "insert", "update", "delete", "copy", "transaction", "ddl", "utility"
	Count   uint64   // statements executed
	Seconds float64  // their total duration
	Buckets []uint64 // per-bucket counts (not cumulative), len(Bounds)+1; the last counts longer statements
}

// StatementStats returns the statement counters. Safe from any goroutine.
func (e *Engine) StatementStats() StatementStats {
	var t stmtTotals
	e.mu.Lock()
	t = e.closedStmts
	for _, s := range e.live {
		s.stats.addTo(&t)
	}
	e.mu.Unlock()
	out := StatementStats{Bounds: make([]float64, len(stmtBounds)), Kinds: make([]StatementKindStats, numStmtKinds)}
	for i, b := range stmtBounds {
		out.Bounds[i] = b.Seconds()
	}
	for k := range out.Kinds {
		tk := &t.kinds[k]
		out.Kinds[k] = StatementKindStats{Kind: stmtKindNames[k], Count: tk.count,
			Seconds: float64(tk.timeNs) / 1e9, Buckets: append([]uint64(nil), tk.buckets[:]...)}
	}
	return out
}

// SessionStates returns the pg_stat_activity states of the live sessions
// and how many sessions are in each. The four states of a client backend
// ("active", "idle", "idle in transaction", "idle in transaction
// (aborted)") are always present. Safe from any goroutine.
func (e *Engine) SessionStates() map[string]int {
	out := map[string]int{"active": 0, "idle": 0, "idle in transaction": 0, "idle in transaction (aborted)": 0}
	for _, s := range e.sessions() {
		s.act.mu.Lock()
		out[s.act.state]++
		s.act.mu.Unlock()
	}
	return out
}

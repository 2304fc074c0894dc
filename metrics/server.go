package metrics

import (
	"sort"

	"github.com/prometheus/client_golang/prometheus"

	"lockd/server"
)

// serverCollector exports the sessions and their statements.
type serverCollector struct {
	srv *server.Server

	sessions, stmtDuration *prometheus.Desc
}

func newServerCollector(srv *server.Server) *serverCollector {
	return &serverCollector{
		srv: srv,
		sessions: newDesc("", "sessions",
			"Client sessions by pg_stat_activity state (active, idle, idle in transaction, idle in transaction (aborted)).",
			"state"),
		stmtDuration: newDesc("statement", "duration_seconds",
			"Statement execution time by kind (select, insert, update, delete, copy, transaction, ddl, utility), from the start of execution (lock waits included, parsing excluded) to its end.",
			"kind"),
	}
}

func (c *serverCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, c.sessions, c.stmtDuration)
}

func (c *serverCollector) Collect(ch chan<- prometheus.Metric) {
	states := c.srv.SessionStates()
	names := make([]string, 0, len(states))
	for st := range states {
		names = append(names, st)
	}
	sort.Strings(names)
	for _, st := range names {
		gauge(ch, c.sessions, float64(states[st]), st)
	}

	ss := c.srv.StatementStats()
	for _, k := range ss.Kinds {
		buckets := make(map[float64]uint64, len(ss.Bounds))
		var cum uint64
		for i, b := range ss.Bounds {
			cum += k.Buckets[i]
			buckets[b] = cum
		}
		ch <- prometheus.MustNewConstHistogram(c.stmtDuration, k.Count, k.Seconds, buckets, k.Kind)
	}
}

package bench

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// sampleInterval is how often the sampler reads pg_stat_activity (four
// times a second).
const sampleInterval = 250 * time.Millisecond

// waitSampler counts, four times a second, what each pgbench backend is
// doing: its wait event ("LWLock:LockManager"), "CPU" when it is active
// with no wait event, or "Client:ClientRead" when it is idle between
// statements or transactions (waiting for pgbench, think time included).
// The same query runs against lockd and PostgreSQL, so both give the share
// of backend time per wait event.
type waitSampler struct {
	counts  map[string]int
	samples int // backend observations
	ticks   int
	err     error
	done    chan struct{}
}

const sampleQuery = `select state, coalesce(wait_event_type, ''), coalesce(wait_event, '')
from pg_stat_activity where application_name = 'pgbench' and pid <> pg_backend_pid()`

// startSampler connects and samples until stop is called. A failure to
// connect or query ends sampling and is reported by stop.
func startSampler(ctx context.Context, conninfo string) (stop func() *waitSampler) {
	s := &waitSampler{counts: map[string]int{}, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		defer close(s.done)
		cfg, err := pgx.ParseConfig(conninfo)
		if err != nil {
			s.err = err
			return
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		cfg.RuntimeParams["application_name"] = "lockd bench sampler"
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			s.err = err
			return
		}
		defer conn.Close(context.Background())
		t := time.NewTicker(sampleInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rows, err := conn.Query(ctx, sampleQuery)
			if err != nil {
				if ctx.Err() == nil {
					s.err = err
				}
				return
			}
			for rows.Next() {
				var state, typ, ev string
				if rows.Scan(&state, &typ, &ev) != nil {
					continue
				}
				s.counts[classify(state, typ, ev)]++
				s.samples++
			}
			rows.Close()
			s.ticks++
		}
	}()
	return func() *waitSampler {
		cancel()
		<-s.done
		return s
	}
}

func classify(state, typ, ev string) string {
	switch {
	case state == "idle" || state == "idle in transaction" || state == "idle in transaction (aborted)":
		return "Client:ClientRead"
	case typ == "":
		return "CPU"
	case ev == "":
		return typ
	}
	return typ + ":" + ev
}

// shares are the fraction of backend observations per wait event.
func (s *waitSampler) shares() map[string]float64 {
	out := map[string]float64{}
	if s.samples == 0 {
		return out
	}
	for k, n := range s.counts {
		out[k] = float64(n) / float64(s.samples)
	}
	return out
}

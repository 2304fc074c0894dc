package exec

import (
	"time"

	"lockd/sql/expr"
)

// EXPLAIN ANALYZE's counts. A node's time is PostgreSQL's: from when it
// starts until it has given its last row, its children's time included
// and the time its rows spend in the nodes above it (the continuation it
// calls with each row) left out.

// timed runs run (which calls emit once per row it gives) counting st:
// one loop, the rows, the time to the first row and in all.
func timed(st *expr.NodeStats, run func(emit func(func() error) error) error) error {
	start := time.Now()
	var cont time.Duration
	first := true
	st.Loops++
	err := run(func(fn func() error) error {
		t := time.Now()
		if first {
			st.StartMs += ms(t.Sub(start) - cont)
			first = false
		}
		st.Rows++
		err := fn()
		cont += time.Since(t)
		return err
	})
	total := time.Since(start) - cont
	if first {
		st.StartMs += ms(total)
	}
	st.TotalMs += ms(total)
	return err
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Package bench runs an experiment spec: it starts lockd (and, beside it,
// a PostgreSQL for comparison), sets each variant's settings, drives
// pgbench over clients × variants in interleaved order with warm-up runs
// and repetitions, and writes what it measured — one row per run with
// tps, latency percentiles, CPU, the deltas of lockd's /metrics counters
// and a sampled share of backend time per wait event — as results.csv,
// results.json, table.txt (the mailing-list layout) and plots (PNG and
// SVG). `lockd bench FILE.toml` is its command line (cmd/lockd/bench.go);
// docs/experiments/README.md describes the spec format and every column.
//
// # What it owns
//
// spec.go and tomlpos.go read and check a spec (every error names the
// file, the line and the field; settings are checked against guc.Table
// before anything runs); target.go, lockd.go and postgres.go start, set
// up, reconfigure and stop the servers; pgbench.go builds pgbench's
// command lines and reads its output and transaction logs; scrape.go reads
// /metrics and derives the named metrics (derived.go); sample.go samples
// pg_stat_activity; cpu.go accounts CPU from /proc; runner.go orders and
// runs the sweep, run.go is one run's record; table.go, output.go and
// plot.go turn runs into results (and Replot draws them again from
// results.json); progress.go reports on a terminal or a log.
//
// # What it must not do
//
// Import the server or SQL packages: lockd runs as a child process (the
// lockd binary itself, re-executed), so its CPU is measured apart from
// pgbench's and from the runner's, and the runner talks to it only as a
// client (pgbench, psql, pgx, /metrics), exactly as it talks to
// PostgreSQL. It may import guc, the settings table it checks specs
// against.
//
// # Concurrency
//
// One sweep runs at a time, on the caller's goroutine; a pg_stat_activity
// sampler goroutine runs during each measured run and is joined before the
// run's result is built. Cancelling the context stops the current run and
// the servers the runner started; Run then writes what it measured so far,
// flagged partial.
package bench

// Package metrics serves Prometheus metrics on metrics_listen_address. Every
// value is read at scrape time from the per-backend statistics that the
// locks, txn, storage and sql packages keep (reached through server), plus
// the settings in force; docs/metrics.md lists each metric and what it means.
//
// What it owns: the collectors (one per source, each implementing
// prometheus.Collector with constant metrics built from one snapshot per
// scrape), the registry lockd serves (those collectors plus the Go runtime
// and process collectors), and the HTTP endpoint.
//
// What it must not do: sit on a hot path. Nothing here is incremented
// while a lock is taken or a statement runs; backends count in their own
// atomics and a scrape sums them, so a lock experiment never measures the
// contention of its own counters. The package keeps no globals and
// registers nothing in init: New registers into the Registerer it is given.
//
// Wait times: each backend counts its timed lock waits in the buckets of
// locks.WaitBucketBounds, so LWLock and heavyweight lock waits are
// histograms (lockd_lwlock_wait_seconds, lockd_lock_wait_seconds), as are
// statement durations, ProcArray group sizes and pages per extension.
//
// Concurrency: collectors are safe for concurrent scrapes; each Collect
// reads its source's counters with atomic loads (the sums are not a
// consistent cut across counters, but never go backwards).
package metrics

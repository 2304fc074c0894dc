// Package metrics will serve Prometheus metrics on metrics_listen_address,
// read at scrape time from the per-backend statistics that the locks,
// txn, storage and server packages keep. It never sits on a hot path:
// nothing increments a Prometheus object while a lock is taken.
//
// Status: the collectors arrive with the metrics issue; until then the
// setting metrics_listen_address is registered but nothing listens.
package metrics

package metrics

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"lockd/guc"
	"lockd/locks"
	"lockd/server"
	"lockd/storage"
	"lockd/txn"
	"lockd/wal"
)

const namespace = "lockd"

// Sources are what the collectors read. A nil field leaves its metrics
// out, so a test can collect from a bare lock manager.
type Sources struct {
	Locks    *locks.Manager // LWLock, heavyweight lock and fast-path counters; procs
	Txns     *txn.Manager   // commits, aborts, snapshots, ProcArray group clears
	Store    *storage.Store // buffer and relation-extension counters
	WAL      *wal.WAL       // the write-ahead log, group commit, checkpoints
	Server   *server.Server // sessions by state, statements by kind and duration
	Settings *guc.Registry  // lockd_setting
	// Version is the value of lockd_build_info's version label; empty
	// leaves lockd_build_info out.
	Version string
}

// ServerSources returns the sources of a running server.
func ServerSources(srv *server.Server, version string) Sources {
	return Sources{Locks: srv.Locks(), Txns: srv.Txns(), Store: srv.Store(), WAL: srv.WAL(), Server: srv,
		Settings: srv.Settings(), Version: version}
}

// Metrics is lockd's set of collectors, registered by New.
type Metrics struct {
	collectors []prometheus.Collector
}

// New builds a collector for each non-nil source and registers it with reg.
// It fails if registration fails (for example, when registered twice).
func New(reg prometheus.Registerer, src Sources) (*Metrics, error) {
	if reg == nil {
		return nil, errors.New("metrics: nil Registerer")
	}
	m := &Metrics{}
	if src.Locks != nil {
		m.collectors = append(m.collectors, newLocksCollector(src.Locks))
	}
	if src.Txns != nil {
		m.collectors = append(m.collectors, newTxnCollector(src.Txns))
	}
	if src.Store != nil {
		m.collectors = append(m.collectors, newStorageCollector(src.Store))
	}
	if src.WAL != nil {
		var rec func() wal.RecoveryResult
		if src.Server != nil {
			rec = src.Server.Recovery
		}
		m.collectors = append(m.collectors, newWALCollector(src.WAL, rec))
	}
	if src.Server != nil {
		m.collectors = append(m.collectors, newServerCollector(src.Server))
	}
	if src.Settings != nil || src.Version != "" {
		m.collectors = append(m.collectors, newSettingsCollector(src.Settings, src.Version))
	}
	for i, c := range m.collectors {
		if err := reg.Register(c); err != nil {
			for _, r := range m.collectors[:i] {
				reg.Unregister(r)
			}
			return nil, err
		}
	}
	return m, nil
}

// Unregister removes the collectors from reg.
func (m *Metrics) Unregister(reg prometheus.Registerer) {
	for _, c := range m.collectors {
		reg.Unregister(c)
	}
}

// NewRegistry returns the registry lockd serves: empty but for the Go
// runtime and process collectors (go_*, process_*).
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// counter and gauge send constant metrics; desc and labels are the
// caller's responsibility (MustNewConstMetric panics on a mismatch, which
// is a programmer bug the tests catch).
func counter(ch chan<- prometheus.Metric, d *prometheus.Desc, v uint64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
}

func gauge(ch chan<- prometheus.Metric, d *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

func newDesc(subsystem, name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, name), help, labels, nil)
}

// describe sends every desc of ds.
func describe(ch chan<- *prometheus.Desc, ds ...*prometheus.Desc) {
	for _, d := range ds {
		ch <- d
	}
}

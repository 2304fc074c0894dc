package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"lockd/storage"
)

// storageCollector exports the buffer pool and relation extension counters.
type storageCollector struct {
	s *storage.Store

	hits, reads, writes, evictions, extensions, pages, extWaits *prometheus.Desc
	extSize, extWaitSeconds, fsm                                *prometheus.Desc
}

func newStorageCollector(s *storage.Store) *storageCollector {
	return &storageCollector{
		s:         s,
		hits:      newDesc("buffer", "hits_total", "Page requests found in the buffer pool."),
		reads:     newDesc("buffer", "reads_total", "Pages read from relation files into the buffer pool."),
		writes:    newDesc("buffer", "writes_total", "Dirty pages written back (eviction or checkpoint)."),
		evictions: newDesc("buffer", "evictions_total", "Valid pages replaced by the clock sweep."),
		extensions: newDesc("relation_extension", "extensions_total",
			"Relation extensions (an insert that found no room and extended the relation)."),
		pages: newDesc("relation_extension", "pages_total",
			"Pages added by relation extensions (relation_extension_mode decides how many per extension)."),
		extWaits: newDesc("relation_extension", "lock_waits_total",
			"Extensions whose conditional acquisition of the relation extension lock failed, so the backend waited."),
		extSize: newDesc("relation_extension", "pages_per_extension",
			"Pages added by one relation extension (1 in single mode; blocks in fixed; up to max_blocks+1 in group)."),
		extWaitSeconds: newDesc("relation_extension", "lock_wait_seconds_total",
			"Time spent waiting for relation extension locks."),
		fsm: newDesc("relation_extension", "page_choices_total",
			"Where inserts found a page: target (the backend's last page), fsm (the free space map), extend (no room: the relation had to grow).", "source"),
	}
}

func (c *storageCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, c.hits, c.reads, c.writes, c.evictions, c.extensions, c.pages, c.extWaits,
		c.extSize, c.extWaitSeconds, c.fsm)
}

func (c *storageCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s.Stats()
	counter(ch, c.hits, s.BufferHits)
	counter(ch, c.reads, s.BufferReads)
	counter(ch, c.writes, s.BufferWrites)
	counter(ch, c.evictions, s.BufferEvictions)
	counter(ch, c.extensions, s.Extensions)
	counter(ch, c.pages, s.PagesAdded)
	counter(ch, c.extWaits, s.ExtensionLockWaits)
	buckets := make(map[float64]uint64, len(storage.ExtensionSizeBounds))
	var cum, sum uint64
	for i, b := range storage.ExtensionSizeBounds {
		cum += s.ExtensionSizes[i]
		buckets[float64(b)] = cum
	}
	cum += s.ExtensionSizes[len(storage.ExtensionSizeBounds)]
	sum = s.PagesAdded
	ch <- prometheus.MustNewConstHistogram(c.extSize, cum, float64(sum), buckets)
	ch <- prometheus.MustNewConstMetric(c.extWaitSeconds, prometheus.CounterValue, s.ExtensionLockWaitTime.Seconds())
	counter(ch, c.fsm, s.TargetBlockHits, "target")
	counter(ch, c.fsm, s.FSMHits, "fsm")
	counter(ch, c.fsm, s.FSMMisses, "extend")
}

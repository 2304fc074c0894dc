package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// A sample is one series of lockd's /metrics: name{labels} value.
type series struct {
	Name   string
	Labels map[string]string
}

// scrape is one reading of /metrics: every lockd_* counter, histogram sum
// and count, by its series text (`lockd_lwlock_waits_total{mode="shared",tranche="ProcArray"}`).
type scrape map[string]float64

// fetchMetrics reads http://addr/metrics.
func fetchMetrics(ctx context.Context, addr string) (scrape, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads the Prometheus text format and keeps the lockd_
// counters: series ending in _total, and histograms' _sum and _count
// (buckets are left out; gauges are readings, not deltas).
func parseMetrics(r io.Reader) (scrape, error) {
	out := scrape{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || !strings.HasPrefix(line, "lockd_") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		key, val := line[:i], line[i+1:]
		name := key
		if j := strings.IndexByte(key, '{'); j >= 0 {
			name = key[:j]
		}
		if !strings.HasSuffix(name, "_total") && !strings.HasSuffix(name, "_sum") && !strings.HasSuffix(name, "_count") {
			continue
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return nil, fmt.Errorf("/metrics: bad value in %q", line)
		}
		out[key] = v
	}
	return out, sc.Err()
}

// delta is after - before for every series in after.
func (after scrape) delta(before scrape) scrape {
	out := scrape{}
	for k, v := range after {
		out[k] = v - before[k]
	}
	return out
}

// parseSeries splits `name{a="x",b="y"}`.
func parseSeries(key string) series {
	s := series{Labels: map[string]string{}}
	j := strings.IndexByte(key, '{')
	if j < 0 {
		s.Name = key
		return s
	}
	s.Name = key[:j]
	rest := strings.TrimSuffix(key[j+1:], "}")
	for rest != "" {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 || eq+1 >= len(rest) || rest[eq+1] != '"' {
			break
		}
		name := rest[:eq]
		k := eq + 2
		var b strings.Builder
		for k < len(rest) && rest[k] != '"' {
			if rest[k] == '\\' && k+1 < len(rest) {
				k++
				switch rest[k] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(rest[k])
				}
			} else {
				b.WriteByte(rest[k])
			}
			k++
		}
		s.Labels[name] = b.String()
		rest = strings.TrimPrefix(rest[min(k+1, len(rest)):], ",")
	}
	return s
}

// sum adds the series of name whose labels match want (a label absent
// from want matches anything), grouped by the label by ("" = one group).
func (sc scrape) sum(name string, want map[string]string, by string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range sc {
		s := parseSeries(k)
		if s.Name != name {
			continue
		}
		ok := true
		for l, w := range want {
			if s.Labels[l] != w {
				ok = false
				break
			}
		}
		if ok {
			out[s.Labels[by]] += v
		}
	}
	return out
}

// keys returns the series in a stable order.
func (sc scrape) keys() []string {
	ks := make([]string, 0, len(sc))
	for k := range sc {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

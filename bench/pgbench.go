package bench

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// pgbenchArgs is the command line of one run (without the program name).
func (s *Spec) pgbenchArgs(w *Workload, clients int, dur time.Duration, scale int, logPrefix, conninfo string) []string {
	args := []string{"-n", "-c", strconv.Itoa(clients), "-j", strconv.Itoa(min(s.Threads, clients)),
		"-T", strconv.Itoa(max(1, int(dur.Round(time.Second)/time.Second))), "-M", w.Mode}
	for _, b := range w.Builtin {
		args = append(args, "-b", b)
	}
	for _, f := range w.File {
		name, weight, _ := splitWeight(f)
		p := s.Path(name)
		if strings.Contains(f, "@") {
			p += "@" + strconv.Itoa(weight)
		}
		args = append(args, "-f", p)
	}
	if len(w.File) > 0 && scale > 0 {
		// custom scripts read :scale from -s (builtins count pgbench_branches)
		args = append(args, "-s", strconv.Itoa(scale))
	}
	if logPrefix != "" {
		args = append(args, "-l", "--log-prefix="+logPrefix)
	}
	args = append(args, w.Options...)
	return append(args, conninfo)
}

// pgbenchReport is what pgbench prints at the end of a run.
type pgbenchReport struct {
	TPS          float64
	Transactions int64
	Failed       int64
	Retried      int64
	LatencyAvgMs float64
}

var (
	reProcessed = regexp.MustCompile(`(?m)^number of transactions actually processed: (\d+)`)
	reFailed    = regexp.MustCompile(`(?m)^number of failed transactions: (\d+)`)
	reRetried   = regexp.MustCompile(`(?m)^number of transactions retried: (\d+)`)
	reTPS       = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)
	reLatency   = regexp.MustCompile(`(?m)^latency average = ([0-9.]+) ms`)
)

func parsePgbench(out string) (pgbenchReport, error) {
	var r pgbenchReport
	m := reTPS.FindStringSubmatch(out)
	if m == nil {
		return r, fmt.Errorf("pgbench printed no tps line")
	}
	r.TPS, _ = strconv.ParseFloat(m[1], 64)
	if m := reProcessed.FindStringSubmatch(out); m != nil {
		r.Transactions, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := reFailed.FindStringSubmatch(out); m != nil {
		r.Failed, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := reRetried.FindStringSubmatch(out); m != nil {
		r.Retried, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m := reLatency.FindStringSubmatch(out); m != nil {
		r.LatencyAvgMs, _ = strconv.ParseFloat(m[1], 64)
	}
	return r, nil
}

// latencies are the per-transaction latencies of a run, from pgbench's
// transaction logs (-l): "client_id transaction_no time script_no
// time_epoch time_us ...", time in microseconds, or "failed" / "skipped".
type latencies struct {
	ms     []float64 // sorted
	failed int64
}

func readTxLogs(prefix string, think time.Duration) (latencies, error) {
	var l latencies
	files, err := filepath.Glob(prefix + ".*")
	if err != nil {
		return l, err
	}
	thinkUs := float64(think.Microseconds())
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return l, err
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 3 {
				continue
			}
			us, err := strconv.ParseFloat(fields[2], 64)
			if err != nil {
				l.failed++ // "failed" or "skipped"
				continue
			}
			l.ms = append(l.ms, math.Max(0, us-thinkUs)/1000)
		}
		fh.Close()
		if err := sc.Err(); err != nil {
			return l, err
		}
		os.Remove(f)
	}
	slices.Sort(l.ms)
	return l, nil
}

// quantile of sorted values (nearest rank); NaN when there are none.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func mean(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

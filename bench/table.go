package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// cell is one (workload, arm, clients) of a metric over its repetitions.
type cell struct {
	n                int
	median, min, max float64
}

// cellOf summarizes metric over the successful runs of a cell.
func (res *Results) cellOf(workload, variant string, clients int, metric string) cell {
	var vals []float64
	for _, r := range res.Runs {
		if r.Workload == workload && r.Variant == variant && r.Clients == clients && r.Status == StatusOK {
			if v := r.metricValue(metric); !math.IsNaN(v) {
				vals = append(vals, v)
			}
		}
	}
	if len(vals) == 0 {
		return cell{median: nan, min: nan, max: nan}
	}
	slices.Sort(vals)
	c := cell{n: len(vals), min: vals[0], max: vals[len(vals)-1]}
	if len(vals)%2 == 1 {
		c.median = vals[len(vals)/2]
	} else {
		c.median = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
	}
	return c
}

// overlaps reports whether two cells' min–max ranges overlap (both need
// two or more runs for a range to mean anything).
func (c cell) overlaps(o cell) bool {
	return c.n > 1 && o.n > 1 && c.min <= o.max && o.min <= c.max
}

// Table renders table.txt: per workload, tps in the mailing-list layout —
// rows are clients, columns the arms, each cell the median with its
// min–max and the ratio to the first arm, "within noise" when the ranges
// overlap — then p99 latency and the spec's table_metrics (medians).
func (res *Results) Table() string {
	var b strings.Builder
	s := res.Spec
	fmt.Fprintf(&b, "%s\n%s\n", s.Title, strings.Repeat("=", utf8.RuneCountInString(s.Title)))
	fmt.Fprintf(&b, "Reproduces: %s\n", oneLine(s.Reproduces))
	fmt.Fprintf(&b, "%d repetition(s) of %s after a %s warm-up, order %s", s.Repetitions, s.Duration, s.Warmup, s.Order)
	if res.Quick {
		b.WriteString(" (--quick)")
	}
	if res.Partial {
		b.WriteString("; PARTIAL: interrupted before the sweep ended")
	}
	fmt.Fprintf(&b, "; %s CPUs; %s", res.Machine["cpus"], res.Versions["lockd"])
	if v := res.Versions["postgres_server"]; v != "" {
		fmt.Fprintf(&b, ", PostgreSQL %s", v)
	}
	b.WriteString("\n\nColumns:\n")
	for _, a := range res.Arms {
		fmt.Fprintf(&b, "  %-14s %s\n", a, res.armTitles[a])
	}
	for _, w := range s.Workloads {
		title := w.Name
		if w.Title != "" {
			title += " — " + w.Title
		}
		fmt.Fprintf(&b, "\n## %s (pgbench -M %s)\n\n", title, w.Mode)
		fmt.Fprintf(&b, "tps: median (min–max) over the repetitions, ratio to %s\n\n", res.Arms[0])
		b.WriteString(res.metricTable(w.Name, "tps", true))
		b.WriteString("\nlatency p99 (ms), median over the repetitions\n\n")
		b.WriteString(res.metricTable(w.Name, "latency_p99_ms", false))
		for _, m := range s.TableMetrics {
			fmt.Fprintf(&b, "\n%s, median over the repetitions\n\n", m)
			b.WriteString(res.metricTable(w.Name, m, false))
		}
	}
	failed := 0
	for _, r := range res.Runs {
		if r.Status != StatusOK {
			failed++
		}
	}
	if failed > 0 {
		fmt.Fprintf(&b, "\n%d run(s) failed or were interrupted; see results.csv (status, error, log).\n", failed)
	}
	noisy := 0
	var others []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "other processes used") {
			noisy++
		} else {
			others = append(others, w)
		}
	}
	if noisy > 0 || len(others) > 0 {
		b.WriteString("\nWarnings:\n")
	}
	if noisy > 0 {
		var shares []float64
		for _, r := range res.Runs {
			if !math.IsNaN(r.OtherCPUShare) {
				shares = append(shares, r.OtherCPUShare)
			}
		}
		slices.Sort(shares)
		fmt.Fprintf(&b, "  %d of %d runs: other processes used more than %.0f%% of the machine's CPU (median over all runs %.0f%%, highest %.0f%%); those figures are noisy (results.csv: warning, other_cpu_share)\n",
			noisy, len(res.Runs), 100*noiseShare, 100*quantile(shares, 0.5), 100*shares[len(shares)-1])
	}
	for _, w := range others {
		fmt.Fprintf(&b, "  %s\n", oneLine(w))
	}
	return b.String()
}

func (res *Results) metricTable(workload, metric string, full bool) string {
	header := append([]string{"clients"}, res.Arms...)
	rows := [][]string{header}
	for _, c := range res.Spec.Clients {
		row := []string{fmt.Sprint(c)}
		base := res.cellOf(workload, res.Arms[0], c, metric)
		for i, a := range res.Arms {
			x := res.cellOf(workload, a, c, metric)
			switch {
			case x.n == 0 && res.cellOf(workload, a, c, "tps").n > 0:
				row = append(row, "—") // not measured on this target
			case x.n == 0:
				row = append(row, "failed")
			case !full:
				row = append(row, fmtNum(x.median))
			default:
				txt := fmtNum(x.median)
				if x.n > 1 {
					txt += " (" + fmtNum(x.min) + "–" + fmtNum(x.max) + ")"
				}
				if i > 0 && base.n > 0 && base.median > 0 {
					txt += fmt.Sprintf(" ×%.2f", x.median/base.median)
					if x.overlaps(base) {
						txt += " within noise"
					}
				}
				row = append(row, txt)
			}
		}
		rows = append(rows, row)
	}
	return alignRows(rows)
}

// alignRows right-aligns columns separated by two spaces, with a rule
// under the header.
func alignRows(rows [][]string) string {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for k, r := range rows {
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)))
			b.WriteString(c)
		}
		b.WriteString("\n")
		if k == 0 {
			for i, w := range widths {
				if i > 0 {
					b.WriteString("  ")
				}
				b.WriteString(strings.Repeat("-", w))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

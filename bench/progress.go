package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
	"time"
)

// progress reports the sweep: on a terminal a bar with the runs done, an
// ETA and the current run, redrawn every second; elsewhere one plain line
// per run.
type progress struct {
	w        io.Writer
	terminal bool

	mu       sync.Mutex
	total    int
	done     int
	perRun   time.Duration // planned length of a run (warm-up + duration)
	started  time.Time
	current  string
	stopTick chan struct{} // closed by finish; set and read by the caller's goroutine only
	tickDone chan struct{} // closed when the redrawing goroutine has returned
}

func newProgress(w io.Writer, terminal bool) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w, terminal: terminal}
}

func (p *progress) status(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s ...", msg)
	} else {
		fmt.Fprintf(p.w, "%s\n", msg)
	}
}

func (p *progress) warn(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintf(p.w, "warning: %s\n", msg)
	if p.terminal && p.total > 0 {
		p.drawLocked()
	}
}

func (p *progress) start(total int, perRun time.Duration) {
	p.mu.Lock()
	p.total, p.perRun, p.started = total, perRun, time.Now()
	p.mu.Unlock()
	if !p.terminal {
		fmt.Fprintf(p.w, "%d runs planned, about %s\n", total, fmtDur(time.Duration(total)*(perRun+2*time.Second)))
		return
	}
	stop, done := make(chan struct{}), make(chan struct{})
	p.stopTick, p.tickDone = stop, done
	go func() {
		defer close(done)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.mu.Lock()
				p.drawLocked()
				p.mu.Unlock()
			}
		}
	}()
}

func describe(r *Run) string {
	return fmt.Sprintf("%s %s clients=%d rep %d", r.Workload, r.Variant, r.Clients, r.Repetition)
}

func (p *progress) runStart(r *Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.current = describe(r)
	if p.terminal {
		p.drawLocked()
	}
}

func (p *progress) runEnd(r *Run) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	line := fmt.Sprintf("[%d/%d] %s: ", p.done, p.total, describe(r))
	switch r.Status {
	case StatusOK:
		line += fmt.Sprintf("%.0f tps, p99 %s ms", r.TPS, fmtNum(r.LatP99Ms))
		if r.Warning != "" {
			line += " (warning: " + r.Warning + ")"
		}
	default:
		first, _, _ := strings.Cut(r.Error, "\n")
		line += r.Status + ": " + first + " (log: " + r.Log + ")"
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s\n", line)
		p.drawLocked()
	} else {
		fmt.Fprintln(p.w, line)
	}
}

// drawLocked draws the bar line; p.mu is held.
func (p *progress) drawLocked() {
	if !p.terminal || p.total == 0 {
		return
	}
	const width = 30
	filled := width * p.done / p.total
	bar := strings.Repeat("█", filled) + strings.Repeat("░", width-filled)
	fmt.Fprintf(p.w, "\r\033[K%s %d/%d  ETA %s  %s", bar, p.done, p.total, fmtDur(p.etaLocked()), p.current)
}

func (p *progress) etaLocked() time.Duration {
	left := p.total - p.done
	if p.done == 0 {
		return time.Duration(left) * (p.perRun + 2*time.Second)
	}
	per := time.Since(p.started) / time.Duration(p.done)
	return time.Duration(left) * per
}

func (p *progress) finish() {
	if p.stopTick != nil {
		close(p.stopTick)
		<-p.tickDone
		p.stopTick = nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func fmtDur(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= time.Hour {
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	if d >= time.Minute {
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// fmtNum prints a figure with three significant digits (at least the
// integer part), thousands separated; "—" for NaN.
func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "—"
	case math.Abs(v) >= 1000:
		return groupThousands(fmt.Sprintf("%.0f", v))
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	case math.Abs(v) >= 1:
		return fmt.Sprintf("%.2f", v)
	case v == 0:
		return "0"
	}
	return fmt.Sprintf("%.3g", v)
}

func groupThousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

package locks

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite scenario files in testdata/ with the actual results")

// Scenario files (testdata/*.txt) script grant/wait/release/deadlock
// sequences. Each command line is "<command> -> <result>"; a result longer
// than one line continues on lines starting with "  | ". Lines starting
// with '#' and blank lines are kept as they are. Run with -rewrite to
// regenerate the results after an intended change, then read the diff.
//
// Commands (pN is backend N, pid 100+N, created on first use):
//
//	config slots=N partitions=N max_locks=N max_conn=N deadlock_timeout=D log=on
//	pN lock TAG MODE [nowait] [session] [timeout=D]  -> granted | waits | not available | error ...
//	pN unlock TAG MODE [session]                     -> true | false
//	pN wait          result of pN's pending lock request (waits up to 10s)
//	pN poll          "waits" if still waiting, else the result
//	pN check-deadlock  run pN's deadlock check now, then poll
//	pN release-all | release-session [advisory] | begin-vxact LXID | close
//	pN holds TAG MODE  -> tx=N session=N
//	pN stats          fast-path counters
//	status | blocking pN | log | set-slots N
//
// TAG is one of: relation REL | relation DB/REL | extend REL | page REL/BLK |
// tuple REL/BLK/OFF | xid XID | vxid pN | vxid N/LXID | advisory KEY |
// advisory K1,K2 | object CLASS/OBJ/SUB (database 1 unless given).
//
// LWLock commands (wakeup, lwacquire, lwrelease, lwwait-for-var, ...) are
// listed in lwscenario_test.go.
func TestScenarios(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenario files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) {
			runScenarioFile(t, f)
		})
	}
}

type scenarioLine struct {
	text     string // command, or verbatim comment/blank
	isCmd    bool
	expected []string
	lineNo   int
}

func parseScenario(t *testing.T, data string) []scenarioLine {
	var out []scenarioLine
	for i, raw := range strings.Split(strings.TrimRight(data, "\n"), "\n") {
		switch {
		case strings.HasPrefix(raw, "  | "):
			if len(out) == 0 || !out[len(out)-1].isCmd {
				t.Fatalf("line %d: continuation without a command", i+1)
			}
			out[len(out)-1].expected = append(out[len(out)-1].expected, strings.TrimPrefix(raw, "  | "))
		case strings.TrimSpace(raw) == "" || strings.HasPrefix(raw, "#"):
			out = append(out, scenarioLine{text: raw, lineNo: i + 1})
		default:
			cmd, res, _ := strings.Cut(raw, " ->")
			l := scenarioLine{text: strings.TrimSpace(cmd), isCmd: true, lineNo: i + 1}
			l.expected = []string{strings.TrimSpace(res)}
			out = append(out, l)
		}
	}
	return out
}

func runScenarioFile(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := parseScenario(t, string(data))
	s := newScenario(t)
	defer s.closeAll()
	var buf strings.Builder
	for _, l := range lines {
		if !l.isCmd {
			buf.WriteString(l.text + "\n")
			continue
		}
		got := s.run(l.text)
		buf.WriteString(l.text + " -> " + got[0] + "\n")
		for _, g := range got[1:] {
			buf.WriteString("  | " + g + "\n")
		}
		if !*rewrite && strings.Join(got, "\n") != strings.Join(l.expected, "\n") {
			t.Errorf("%s:%d: %s\n got: %s\nwant: %s", path, l.lineNo, l.text,
				strings.Join(got, "\n      "), strings.Join(l.expected, "\n      "))
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(buf.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type pending struct {
	done   chan struct{}
	err    error
	waits0 uint64 // the proc's heavyweight wait count before the request
}

// totalWaits is the number of heavyweight waits p has finished.
func totalWaits(p *Proc) uint64 {
	var n uint64
	for t := range p.stats.lock {
		for m := range p.stats.lock[t] {
			n += p.stats.lock[t][m].waits.Load()
		}
	}
	return n
}

type scenario struct {
	t       *testing.T
	m       *Manager
	procs   map[int]*Proc
	pending map[int]*pending
	logBuf  *syncBuffer

	lws       map[string]*scenLW // named LWLocks
	lwPending map[int]*lwPend    // LWLock calls in flight, by backend
	lwDone    map[int]*lwPend    // finished LWLock calls not yet polled
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.b.String()
	b.b.Reset()
	return s
}

func newScenario(t *testing.T) *scenario {
	s := &scenario{t: t}
	t.Cleanup(saveWakePolicy())
	SetWakeupRule(WakePG95)
	SetWakePolicy(false, 0)
	s.configure(nil)
	return s
}

func (s *scenario) configure(args []string) []string {
	s.closeAll()
	cfg := Config{MaxConnections: 10, MaxLocksPerTransaction: 64}
	dl := time.Hour
	slots := -1
	logOn := false
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "slots":
			slots = atoi(s.t, v)
		case "partitions":
			cfg.Partitions = atoi(s.t, v)
		case "max_locks":
			cfg.MaxLocksPerTransaction = atoi(s.t, v)
		case "max_conn":
			cfg.MaxConnections = atoi(s.t, v)
		case "deadlock_timeout":
			d, err := time.ParseDuration(v)
			if err != nil {
				s.t.Fatal(err)
			}
			dl = d
		case "log":
			logOn = v == "on"
		default:
			s.t.Fatalf("unknown config key %q", k)
		}
	}
	s.logBuf = &syncBuffer{}
	cfg.Logger = slog.New(slog.NewTextHandler(s.logBuf, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
				return slog.Attr{}
			}
			return a
		}}))
	m, err := NewManager(cfg)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	m.SetFastPathSlots(slots)
	m.SetDeadlockTimeout(dl)
	m.SetLogLockWaits(logOn)
	s.m = m
	s.procs = map[int]*Proc{}
	s.pending = map[int]*pending{}
	return []string{"ok"}
}

func (s *scenario) closeAll() {
	if s.m == nil {
		return
	}
	s.lwCloseAll()
	// Release everything held by backends that are not waiting, until the
	// waiters have all been granted or have given up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		for n, p := range s.procs {
			if pd := s.pending[n]; pd != nil {
				select {
				case <-pd.done:
					delete(s.pending, n)
				default:
					continue
				}
			}
			s.m.ReleaseTransactionLocks(p)
			s.m.ReleaseSessionLocks(p, false)
		}
		if len(s.pending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d backends still waiting at end of scenario", len(s.pending))
		}
		time.Sleep(time.Millisecond)
	}
	for _, p := range s.procs {
		p.Close()
	}
	s.m = nil
}

func atoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("bad number %q", s)
	}
	return n
}

func (s *scenario) proc(name string) (int, *Proc) {
	if !strings.HasPrefix(name, "p") {
		s.t.Fatalf("bad proc name %q", name)
	}
	n := atoi(s.t, name[1:])
	if p := s.procs[n]; p != nil {
		return n, p
	}
	p, err := s.m.NewProc(int32(100 + n))
	if err != nil {
		s.t.Fatalf("NewProc: %v", err)
	}
	s.procs[n] = p
	return n, p
}

// parseTag consumes a tag from args and returns it with the rest.
func (s *scenario) parseTag(args []string) (LockTag, []string) {
	if len(args) < 2 {
		s.t.Fatalf("missing tag in %v", args)
	}
	typ, spec := args[0], args[1]
	nums := func(sep string) []uint32 {
		var out []uint32
		for _, f := range strings.Split(spec, sep) {
			v, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				s.t.Fatalf("bad tag %q", spec)
			}
			out = append(out, uint32(v))
		}
		return out
	}
	var tag LockTag
	switch typ {
	case "relation", "extend":
		n := nums("/")
		db, rel := uint32(1), n[0]
		if len(n) == 2 {
			db, rel = n[0], n[1]
		}
		tag = RelationTag(db, rel)
		if typ == "extend" {
			tag = ExtendTag(db, rel)
		}
	case "page":
		n := nums("/")
		tag = PageTag(1, n[0], n[1])
	case "tuple":
		n := nums("/")
		tag = TupleTag(1, n[0], n[1], uint16(n[2]))
	case "xid":
		tag = TransactionTag(nums("/")[0])
	case "vxid":
		if strings.HasPrefix(spec, "p") {
			_, p := s.proc(spec)
			num, lxid := p.VirtualXID()
			tag = VirtualXidTag(num, lxid)
		} else {
			n := nums("/")
			tag = VirtualXidTag(int32(n[0]), n[1])
		}
	case "advisory":
		if strings.Contains(spec, ",") {
			n := nums(",")
			tag = AdvisoryTag32(1, int32(n[0]), int32(n[1]))
		} else {
			v, err := strconv.ParseInt(spec, 10, 64)
			if err != nil {
				s.t.Fatalf("bad key %q", spec)
			}
			tag = AdvisoryTag64(1, v)
		}
	case "object":
		n := nums("/")
		tag = ObjectTag(1, n[0], n[1], uint16(n[2]))
	default:
		s.t.Fatalf("unknown tag type %q", typ)
	}
	return tag, args[2:]
}

func (s *scenario) parseMode(arg string) LockMode {
	m, ok := ParseLockMode(arg)
	if !ok {
		s.t.Fatalf("bad lock mode %q", arg)
	}
	return m
}

func formatResult(err error) []string {
	switch {
	case err == nil:
		return []string{"granted"}
	case errors.Is(err, ErrLockNotAvailable):
		return []string{"not available"}
	}
	var e *Error
	if errors.As(err, &e) {
		out := []string{"error " + e.Code + ": " + e.Message}
		for _, d := range strings.Split(e.Detail, "\n") {
			if d != "" {
				out = append(out, "detail: "+d)
			}
		}
		if e.Hint != "" {
			out = append(out, "hint: "+e.Hint)
		}
		return out
	}
	return []string{"error: " + err.Error()}
}

func (s *scenario) run(cmd string) []string {
	f := strings.Fields(cmd)
	if out, ok := s.runLW(f); ok {
		return out
	}
	switch f[0] {
	case "config":
		return s.configure(f[1:])
	case "status":
		return s.status()
	case "blocking":
		_, p := s.proc(f[1])
		return []string{fmt.Sprint(s.m.BlockingPIDs(p.PID()))}
	case "set-slots":
		s.m.SetFastPathSlots(atoi(s.t, f[1]))
		return []string{"ok"}
	case "log":
		re := regexp.MustCompile(`after \d+\.\d{3} ms`)
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(s.logBuf.take()), "\n") {
			if l != "" {
				out = append(out, re.ReplaceAllString(l, "after X ms"))
			}
		}
		if len(out) == 0 {
			return []string{"(none)"}
		}
		return append([]string{fmt.Sprintf("%d lines", len(out))}, out...)
	}
	n, p := s.proc(f[0])
	if len(f) < 2 {
		s.t.Fatalf("missing verb in %q", cmd)
	}
	args := f[2:]
	switch f[1] {
	case "lock":
		if s.pending[n] != nil {
			return []string{"already waiting"}
		}
		tag, rest := s.parseTag(args)
		mode := s.parseMode(rest[0])
		var opt LockOptions
		for _, o := range rest[1:] {
			switch {
			case o == "nowait":
				opt.NoWait = true
			case o == "session":
				opt.Session = true
			case strings.HasPrefix(o, "timeout="):
				d, err := time.ParseDuration(strings.TrimPrefix(o, "timeout="))
				if err != nil {
					s.t.Fatal(err)
				}
				opt.LockTimeout = d
			default:
				s.t.Fatalf("unknown lock option %q", o)
			}
		}
		pd := &pending{done: make(chan struct{}), waits0: totalWaits(p)}
		s.pending[n] = pd
		go func() {
			pd.err = s.m.Lock(context.Background(), p, tag, mode, opt)
			close(pd.done)
		}()
		// "waits" if the request queued at all, even if it has already
		// finished waiting (e.g. a short lock timeout while this goroutine
		// was descheduled); its result is then reported by wait/poll.
		for {
			select {
			case <-pd.done:
				if totalWaits(p) > pd.waits0 {
					return []string{"waits"}
				}
				delete(s.pending, n)
				return formatResult(pd.err)
			default:
			}
			if p.waitStatus.Load() == waitWaiting {
				return []string{"waits"}
			}
			time.Sleep(50 * time.Microsecond)
		}
	case "wait":
		pd := s.pending[n]
		if pd == nil {
			return []string{"nothing pending"}
		}
		select {
		case <-pd.done:
		case <-time.After(10 * time.Second):
			return []string{"still waiting"}
		}
		delete(s.pending, n)
		return formatResult(pd.err)
	case "poll":
		return s.poll(n, p)
	case "check-deadlock":
		if s.pending[n] == nil {
			return []string{"nothing pending"}
		}
		before := p.dlChecks.Load()
		p.dlKick <- struct{}{}
		deadline := time.Now().Add(10 * time.Second)
		for p.dlChecks.Load() == before && time.Now().Before(deadline) {
			select {
			case <-s.pending[n].done:
				return s.poll(n, p)
			case <-time.After(100 * time.Microsecond):
			}
		}
		return s.poll(n, p)
	case "unlock":
		tag, rest := s.parseTag(args)
		mode := s.parseMode(rest[0])
		session := len(rest) > 1 && rest[1] == "session"
		return []string{strconv.FormatBool(s.m.Unlock(p, tag, mode, session))}
	case "holds":
		tag, rest := s.parseTag(args)
		tx, sess := s.m.Holds(p, tag, s.parseMode(rest[0]))
		return []string{fmt.Sprintf("tx=%d session=%d", tx, sess)}
	case "release-all":
		s.m.ReleaseTransactionLocks(p)
		return []string{"ok"}
	case "release-session":
		s.m.ReleaseSessionLocks(p, len(args) > 0 && args[0] == "advisory")
		return []string{"ok"}
	case "begin-vxact":
		s.m.BeginVirtualXact(p, uint32(atoi(s.t, args[0])))
		return []string{"ok"}
	case "close":
		p.Close()
		delete(s.procs, n)
		return []string{"ok"}
	case "stats":
		st := p.Stats().FastPath
		return []string{fmt.Sprintf("fastpath=%d full=%d strong=%d transfers_done=%d transfers_out=%d",
			st.Acquisitions, st.FallbacksFull, st.FallbacksStrong, st.TransfersDone, st.TransfersOut)}
	}
	s.t.Fatalf("unknown command %q", cmd)
	return nil
}

// poll reports "waits" if p is queued on a heavyweight lock, else the
// result of its pending request (which must then complete promptly).
func (s *scenario) poll(n int, p *Proc) []string {
	pd := s.pending[n]
	if pd == nil {
		return []string{"nothing pending"}
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-pd.done:
			delete(s.pending, n)
			return formatResult(pd.err)
		default:
		}
		if p.waitStatus.Load() == waitWaiting {
			return []string{"waits"}
		}
		time.Sleep(50 * time.Microsecond)
	}
	return []string{"stuck"}
}

func (s *scenario) status() []string {
	rows := s.m.Status()
	out := []string{fmt.Sprintf("%d rows", len(rows))}
	for _, r := range rows {
		g := "granted"
		if !r.Granted {
			g = "waiting"
		}
		fp := ""
		if r.FastPath {
			fp = " fastpath"
		}
		out = append(out, fmt.Sprintf("%s pid=%d %s %s%s", r.Tag.Describe(), r.PID, r.Mode, g, fp))
	}
	return out
}

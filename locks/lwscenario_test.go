package locks

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// LWLock commands of the scenario files (see TestScenarios for the format).
// LWLocks are named (A, B, ...) and created on first use, each with an
// LWLockVar; pN is backend N as for heavyweight locks.
//
//	wakeup rule=pg95|pg84 [wake_all=on|off] [limit=N]  -> ok (restored after the file)
//	pN lwacquire L exclusive|shared          -> acquired | waits
//	pN lwacquire-or-wait L exclusive|shared  -> acquired | waits
//	pN lwwait-for-var L OLD                  -> free | updated V | waits
//	pN lwrelease L                           -> woke pA pB ... | woke nobody
//	pN lwrelease-clear-var L V               -> woke ...
//	pN lwupdate-var L V                      -> woke ...
//	pN lwpoll        "waits" while pN sleeps, else the result of its pending call:
//	                 acquired | freed (AcquireOrWait returned without the lock) |
//	                 free | updated V
//	lwqueue L        who holds L and who is queued, head first
//	lwdrain L        release L's holders until nobody holds or waits for L;
//	                 by backend, "acquired" for the holders and each waiting
//	                 call's result
//
// "woke" lists the backends a release (or UpdateVar) woke, in the order the
// waker sent the wake-ups, which is their queue order. Before it answers,
// every woken backend has run: it holds the lock, has returned, or sleeps
// on the queue again. So which waiters each rule wakes, and what they did
// then, is deterministic whenever the woken waiters do not race each other
// for the lock (with wake_all they may: lwdrain then shows only results).

// scenLW is a named LWLock of a scenario.
type scenLW struct {
	l       LWLock
	v       LWLockVar
	holders map[int]LWMode // guarded by the scenario goroutine
}

// lwPend is a backend's LWLock call in flight.
type lwPend struct {
	lock     *scenLW
	kind     string // lwacquire, lwacquire-or-wait, lwwait-for-var
	mode     LWMode
	old      uint64
	done     chan struct{}
	res      string // valid after done
	acquired bool   // valid after done
}

func (s *scenario) lwLock(name string) *scenLW {
	if s.lws == nil {
		s.lws = map[string]*scenLW{}
	}
	sl := s.lws[name]
	if sl == nil {
		sl = &scenLW{holders: map[int]LWMode{}}
		sl.l.Init(TrancheWALInsert)
		s.lws[name] = sl
	}
	return sl
}

func (s *scenario) parseLWMode(arg string) LWMode {
	switch arg {
	case "exclusive":
		return LWExclusive
	case "shared":
		return LWShared
	}
	s.t.Fatalf("bad LWLock mode %q", arg)
	return 0
}

func (s *scenario) parseUint(arg string) uint64 {
	v, err := strconv.ParseUint(arg, 10, 64)
	if err != nil {
		s.t.Fatalf("bad value %q", arg)
	}
	return v
}

// runLW runs an LWLock command; ok is false if f is not one.
func (s *scenario) runLW(f []string) (out []string, ok bool) {
	switch f[0] {
	case "wakeup":
		return s.setWakeup(f[1:]), true
	case "lwqueue":
		return []string{s.lwQueue(s.lwLock(f[1]))}, true
	case "lwdrain":
		return s.lwDrain(s.lwLock(f[1])), true
	}
	if len(f) < 2 || !strings.HasPrefix(f[1], "lw") {
		return nil, false
	}
	n, p := s.proc(f[0])
	args := f[2:]
	switch f[1] {
	case "lwacquire", "lwacquire-or-wait":
		return s.lwStart(n, p, &lwPend{lock: s.lwLock(args[0]), kind: f[1], mode: s.parseLWMode(args[1])}), true
	case "lwwait-for-var":
		return s.lwStart(n, p, &lwPend{lock: s.lwLock(args[0]), kind: f[1], old: s.parseUint(args[1])}), true
	case "lwrelease", "lwrelease-clear-var", "lwupdate-var":
		sl := s.lwLock(args[0])
		mode, held := sl.holders[n]
		if !held {
			return []string{"not held"}, true
		}
		if s.lwPending[n] != nil {
			return []string{"busy waiting for another lock"}, true
		}
		if f[1] == "lwupdate-var" && mode != LWExclusive {
			return []string{"not held exclusively"}, true
		}
		return []string{s.lwWake(sl, func() {
			switch f[1] {
			case "lwrelease":
				sl.l.Release(p)
			case "lwrelease-clear-var":
				sl.l.ReleaseClearVar(p, &sl.v, s.parseUint(args[1]))
			case "lwupdate-var":
				sl.l.UpdateVar(p, &sl.v, s.parseUint(args[1]))
			}
			if f[1] != "lwupdate-var" {
				delete(sl.holders, n)
			}
		})}, true
	case "lwpoll":
		if pd := s.lwDone[n]; pd != nil {
			delete(s.lwDone, n)
			return []string{pd.res}, true
		}
		pd := s.lwPending[n]
		if pd == nil {
			return []string{"nothing pending"}, true
		}
		if !s.lwWaitSettled(p, pd) {
			return []string{"stuck"}, true
		}
		if s.lwFinish(n) {
			delete(s.lwDone, n)
			return []string{pd.res}, true
		}
		return []string{"waits"}, true
	}
	s.t.Fatalf("unknown LWLock command %q", strings.Join(f, " "))
	return nil, false
}

func (s *scenario) setWakeup(args []string) []string {
	rule, wakeAll, limit := WakePG95, false, 0
	for _, a := range args {
		k, v, _ := strings.Cut(a, "=")
		switch k {
		case "rule":
			r, ok := ParseWakeRule(v)
			if !ok {
				s.t.Fatalf("bad rule %q", v)
			}
			rule = r
		case "wake_all":
			wakeAll = v == "on"
		case "limit":
			limit = atoi(s.t, v)
		default:
			s.t.Fatalf("unknown wakeup key %q", k)
		}
	}
	SetWakeupRule(rule)
	SetWakePolicy(wakeAll, limit)
	return []string{"ok"}
}

// lwStart starts pd on backend n and reports its result if it does not
// sleep, else "waits".
func (s *scenario) lwStart(n int, p *Proc, pd *lwPend) []string {
	if s.lwPending[n] != nil || s.pending[n] != nil {
		return []string{"already waiting"}
	}
	delete(s.lwDone, n) // a result nobody polled
	pd.done = make(chan struct{})
	sl := pd.lock
	go func() {
		switch pd.kind {
		case "lwacquire":
			sl.l.Acquire(p, pd.mode)
			pd.res, pd.acquired = "acquired", true
		case "lwacquire-or-wait":
			if sl.l.AcquireOrWait(p, pd.mode) {
				pd.res, pd.acquired = "acquired", true
			} else {
				pd.res = "freed"
			}
		case "lwwait-for-var":
			if free, nv := sl.l.WaitForVar(p, &sl.v, pd.old); free {
				pd.res = "free"
			} else {
				pd.res = fmt.Sprintf("updated %d", nv)
			}
		}
		close(pd.done)
	}()
	if s.lwPending == nil {
		s.lwPending = map[int]*lwPend{}
	}
	s.lwPending[n] = pd
	if !s.lwWaitSettled(p, pd) {
		return []string{"stuck"}
	}
	if s.lwFinish(n) {
		delete(s.lwDone, n)
		return []string{pd.res}
	}
	return []string{"waits"}
}

// lwSettled reports whether backend n's call is over, or sleeps and will
// keep sleeping until somebody else acts: it is queued, has shown its wait
// event (set before its first sleep) and the lock's state blocks it.
func (s *scenario) lwSettled(p *Proc, pd *lwPend) bool {
	select {
	case <-pd.done:
		return true
	default:
	}
	if p.lw.status.Load() != lwWaiting || p.waitEvent.Load() == 0 {
		return false
	}
	st := pd.lock.l.state.Load()
	switch {
	case pd.kind == "lwwait-for-var":
		return st&lwValExclusive != 0 && pd.lock.v.Load() == pd.old
	case pd.mode == LWExclusive:
		return st&lwLockMask != 0
	default:
		return st&lwValExclusive != 0
	}
}

func (s *scenario) lwWaitSettled(p *Proc, pd *lwPend) bool {
	deadline := time.Now().Add(10 * time.Second)
	for !s.lwSettled(p, pd) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Microsecond)
	}
	return true
}

// lwFinish collects backend n's call if it is over and reports whether it
// was. Its result waits in lwDone for lwpoll.
func (s *scenario) lwFinish(n int) bool {
	pd := s.lwPending[n]
	select {
	case <-pd.done:
	default:
		return false
	}
	delete(s.lwPending, n)
	if pd.acquired {
		pd.lock.holders[n] = pd.mode
	}
	if s.lwDone == nil {
		s.lwDone = map[int]*lwPend{}
	}
	s.lwDone[n] = pd
	return true
}

// lwWakeups is the number of LWLock wake-ups p has taken in on sl's tranche.
func lwWakeups(p *Proc, sl *scenLW) uint64 {
	var n uint64
	for m := range NumLWModes {
		n += p.stats.lw[sl.l.tranche][m].wakeups.Load()
	}
	return n
}

// lwQueued returns the backends queued on sl, head first, with their modes.
func (s *scenario) lwQueued(sl *scenLW) (ns []int, modes []LWMode) {
	byNode := map[*lwWaiter]int{}
	for n, p := range s.procs {
		byNode[&p.lw] = n
	}
	sl.l.lockWaitList(nil)
	for w := sl.l.head; w != nil; w = w.next {
		n, ok := byNode[w]
		if !ok {
			n = -1
		}
		ns, modes = append(ns, n), append(modes, w.mode)
	}
	sl.l.unlockWaitList(0, 0)
	return ns, modes
}

// lwWake runs act (a release or UpdateVar of sl), waits until every
// backend it woke has run, and names them in queue order.
func (s *scenario) lwWake(sl *scenLW, act func()) string {
	queued, _ := s.lwQueued(sl)
	before := make([]uint64, len(queued))
	for i, n := range queued {
		before[i] = lwWakeups(s.procs[n], sl)
	}
	act()
	deadline := time.Now().Add(10 * time.Second)
	var woke []string
	for {
		woke = woke[:0]
		settled := true
		for i, n := range queued {
			p := s.procs[n]
			switch {
			case lwWakeups(p, sl) != before[i]:
				woke = append(woke, fmt.Sprintf("p%d", n))
				settled = settled && s.lwSettled(p, s.lwPending[n])
			case p.lw.status.Load() != lwWaiting:
				settled = false // woken, not yet running
			}
		}
		if settled {
			break
		}
		if time.Now().After(deadline) {
			return "stuck"
		}
		time.Sleep(50 * time.Microsecond)
	}
	for _, n := range queued {
		s.lwFinish(n)
	}
	if len(woke) == 0 {
		return "woke nobody"
	}
	return "woke " + strings.Join(woke, " ")
}

func (s *scenario) lwQueue(sl *scenLW) string {
	var held []string
	for _, n := range sortedKeys(sl.holders) {
		held = append(held, fmt.Sprintf("p%d (%s)", n, sl.holders[n]))
	}
	var q []string
	ns, modes := s.lwQueued(sl)
	for i, n := range ns {
		q = append(q, fmt.Sprintf("p%d (%s)", n, modes[i]))
	}
	out := "free"
	if len(held) > 0 {
		out = "held by " + strings.Join(held, ", ")
	}
	if len(q) == 0 {
		return out + "; waiting: nobody"
	}
	return out + "; waiting: " + strings.Join(q, ", ")
}

// lwDrain releases sl's holders until nobody holds or waits for sl, and
// reports how each backend that held sl or waited for it came out: the
// holders "acquired", the others their call's result. After a wake_all
// release that result does not depend on who won the race.
func (s *scenario) lwDrain(sl *scenLW) []string {
	pds := map[int]*lwPend{}
	for _, n := range s.lwPendingOn(sl) {
		pds[n] = s.lwPending[n]
	}
	for n := range sl.holders {
		pds[n] = &lwPend{res: "acquired"}
	}
	for {
		for n := range pds {
			if pd := s.lwPending[n]; pd != nil && pd.lock == sl {
				s.lwFinish(n)
			}
		}
		holders := sortedKeys(sl.holders)
		if len(holders) == 0 {
			if len(s.lwPendingOn(sl)) > 0 {
				return []string{"stuck: nobody holds the lock, yet backends wait"}
			}
			break
		}
		for _, n := range holders {
			if s.lwPending[n] != nil {
				return []string{fmt.Sprintf("p%d holds the lock and waits for another", n)}
			}
			p := s.procs[n]
			if s.lwWake(sl, func() { sl.l.Release(p); delete(sl.holders, n) }) == "stuck" {
				return []string{"stuck"}
			}
		}
	}
	if len(pds) == 0 {
		return []string{"nothing pending"}
	}
	var out []string
	for _, n := range sortedKeys(pds) {
		if s.lwDone[n] == pds[n] {
			delete(s.lwDone, n)
		}
		out = append(out, fmt.Sprintf("p%d %s", n, pds[n].res))
	}
	return []string{strings.Join(out, ", ")}
}

func (s *scenario) lwPendingOn(sl *scenLW) []int {
	var ns []int
	for n, pd := range s.lwPending {
		if pd.lock == sl {
			ns = append(ns, n)
		}
	}
	return ns
}

// lwCloseAll releases every LWLock of the scenario until no call is
// pending, then frees the lock names.
func (s *scenario) lwCloseAll() {
	deadline := time.Now().Add(10 * time.Second)
	for len(s.lwPending) > 0 {
		for n, p := range s.procs {
			if s.lwPending[n] == nil {
				p.ReleaseAllLWLocks()
			}
		}
		for _, sl := range s.lws {
			clear(sl.holders)
		}
		for n := range s.lwPending {
			s.lwFinish(n)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%d backends still waiting for LWLocks at end of scenario", len(s.lwPending))
		}
		time.Sleep(time.Millisecond)
	}
	for _, p := range s.procs {
		p.ReleaseAllLWLocks()
	}
	s.lws, s.lwDone = nil, nil
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	return ks
}

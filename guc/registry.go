package guc

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
)

// Registry holds the server-wide value of every setting: what a new session
// starts from. It is built with [NewRegistry]; the zero value is not usable.
// A Registry must not be copied. It is safe for concurrent use.
//
// Server-wide values come from the boot value, the configuration files and
// the command line, in ascending priority; sessions layer client and session
// values on top (see [Session]).
type Registry struct {
	logger *slog.Logger
	gen    atomic.Uint64 // bumped whenever a server-wide value, source or pending_restart changes

	// hookMu serialises the operations that change values with the assign
	// hooks they run, so hooks see changes one at a time and in order. It is
	// taken before mu and held while hooks run (mu is not).
	hookMu sync.Mutex

	// fileMu serialises writers of lockd.auto.conf (ALTER SYSTEM).
	fileMu sync.Mutex

	mu         sync.RWMutex
	vars       []regVar // guarded by mu; indexed like Table
	configFile string   // guarded by mu; "" if none
	dataDir    string   // guarded by mu; "" until LoadFiles
}

// regVar is the server-wide state of one setting.
type regVar struct {
	cur            Value
	src            Source
	file           string // where cur came from, if src == SourceFile
	line           int
	cmd            bool // set on the command line: files no longer apply
	pendingRestart bool
	hooks          []func(Value)
}

// hookCall is an assign hook to run once mu is released.
type hookCall struct {
	hooks []func(Value)
	v     Value
}

// NewRegistry returns a registry with every setting at its boot value. A nil
// logger discards log output.
func NewRegistry(logger *slog.Logger) *Registry {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Registry{logger: logger, vars: make([]regVar, len(Table))}
	for i := range Table {
		r.vars[i] = regVar{cur: Table[i].boot, src: SourceDefault}
	}
	return r
}

// Generation returns a number that changes whenever a server-wide value
// changes (a reload, the command line, the files at startup). Sessions
// compare it to know whether to [Session.Refresh].
func (r *Registry) Generation() uint64 { return r.gen.Load() }

// Value returns the server-wide value of name. It panics if name is not a
// setting: callers name settings in code, so that is a programmer bug.
func (r *Registry) Value(name string) Value {
	i := mustIndex(name)
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.vars[i].cur
}

// PendingRestart reports whether name has a changed value in the
// configuration files that needs a restart to take effect.
func (r *Registry) PendingRestart(name string) bool {
	i := mustIndex(name)
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.vars[i].pendingRestart
}

// OnChange registers fn as an assign hook for name: it is called at once with
// the current server-wide value and then after every change of that value
// (files at startup, command line, reload). It panics on an unknown name.
func (r *Registry) OnChange(name string, fn func(Value)) {
	i := mustIndex(name)
	r.hookMu.Lock()
	defer r.hookMu.Unlock()
	r.mu.Lock()
	r.vars[i].hooks = append(r.vars[i].hooks, fn)
	v := r.vars[i].cur
	r.mu.Unlock()
	fn(v)
}

// runHooks calls the hooks collected while mu was held. The caller holds
// hookMu.
func runHooks(calls []hookCall) {
	for _, c := range calls {
		for _, fn := range c.hooks {
			fn(c.v)
		}
	}
}

// set changes the server-wide value of setting i. The caller holds mu (and
// hookMu); hooks to run afterwards are appended to calls. It reports whether
// anything (value, source, file position) changed.
func (r *Registry) set(i int, v Value, src Source, file string, line int, calls *[]hookCall) bool {
	rv := &r.vars[i]
	valueChanged := rv.cur != v
	changed := valueChanged || rv.src != src || rv.file != file || rv.line != line
	rv.cur, rv.src, rv.file, rv.line = v, src, file, line
	if valueChanged && len(rv.hooks) > 0 {
		*calls = append(*calls, hookCall{hooks: rv.hooks, v: v})
	}
	return changed
}

// SetCommandLine applies -c name=value. Dashes in name are read as
// underscores, as PostgreSQL's ParseLongOption does. A command-line value
// beats the configuration files, whether they are loaded before or after.
// Errors are *Error: 42704 for an unknown name, 55P02 for an internal
// setting, 22023 for a bad value.
func (r *Registry) SetCommandLine(name, value string) error {
	name = strings.ReplaceAll(name, "-", "_")
	i, ok := index(name)
	if !ok {
		return errUnknown(name)
	}
	d := &Table[i]
	if d.Context == Internal {
		return errCantChange(d.Name, cantChange)
	}
	v, err := parseValue(d, value)
	if err != nil {
		return err
	}
	r.hookMu.Lock()
	defer r.hookMu.Unlock()
	var calls []hookCall
	r.mu.Lock()
	r.vars[i].cmd = true
	if r.set(i, v, SourceCommandLine, "", 0, &calls) {
		r.gen.Add(1)
	}
	r.mu.Unlock()
	runHooks(calls)
	return nil
}

// context check texts for a change of d requested by a client (startup
// packet) or a session (SET).
func contextError(d *Def, src Source) *Error {
	switch d.Context {
	case Internal:
		return errCantChange(d.Name, cantChange)
	case Postmaster:
		return errCantChange(d.Name, cantChangeRestart)
	case Sighup:
		return errCantChange(d.Name, cantChangeNow)
	case SuperuserBackend, Backend:
		if src >= SourceSession {
			return errCantChange(d.Name, cantSetAfterStart)
		}
	}
	return nil
}

func (r *Registry) logf(level slog.Level, format string, args ...any) {
	r.logger.Log(context.Background(), level, fmt.Sprintf(format, args...))
}

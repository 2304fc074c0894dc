package guc

import (
	"sort"
	"strings"
)

// Session is the settings state of one connection: the server-wide values it
// started with (and picks up again on [Session.Refresh]), values from the
// client's startup packet, and its own SET and SET LOCAL values, with
// PostgreSQL's transactional behaviour.
//
// A Session is created by [Registry.NewSession]; the zero value is not
// usable. It is used by its connection's goroutine only and is not safe for
// concurrent use.
//
// Each setting has three layers, as PostgreSQL's GUC stack has:
//   - reset: what RESET returns to (registry or client value);
//   - sess: the value that survives the end of the current transaction
//     (set by SET, RESET, the client);
//   - cur: what is in effect now (sess, or a SET LOCAL value).
//
// Inside a transaction, the first change of a setting at each nest level
// (PostgreSQL's GUC nest levels: 1 for the transaction, one more per open
// savepoint) saves its layers in an undo log; AbortTxn restores them,
// CommitTxn keeps sess and drops SET LOCAL values. AbortSub restores what
// the innermost level saved (ROLLBACK TO); CommitSub hands its entries to
// the enclosing level, dropping those the enclosing level already has
// (RELEASE), so SET LOCAL inside a released savepoint lasts until the end
// of the transaction, as in PostgreSQL's AtEOXact_GUC.
type Session struct {
	r       *Registry
	vars    []sessVar   // indexed like Table
	gen     uint64      // registry generation last seen
	changes uint64      // see Changes
	level   int         // 0 outside a transaction, 1 in one, +1 per open subtransaction
	undo    []undoEntry // first change of each setting per nest level, levels ascending

	lastReported []string // display value last returned by PendingReports, per reportedIdx
	reportedOnce bool
	reportDirty  bool
}

type sessVar struct {
	cur      Value
	src      Source
	local    bool // cur comes from SET LOCAL
	sess     Value
	sessSrc  Source
	reset    Value
	resetSrc Source
	touched  int // deepest nest level with an entry in the undo log, 0 if none
}

type undoEntry struct {
	idx   int
	level int // nest level the entry belongs to
	saved sessVar
}

// NewSession starts the settings of a new connection from the server-wide
// values and applies client, the startup-packet parameters other than user
// and database. Its "options" entry holds command-line style switches
// ("-c name=value", "-cname=value", "--name=value"; a backslash escapes the
// next character, e.g. a space), applied before the other parameters.
// Entries are applied with source "client"; backend and superuser-backend
// settings are allowed. Problems are returned, one *Error each, with
// PostgreSQL's texts (42704 unknown name — PostgreSQL refuses the connection
// with FATAL; 55P02 wrong context; 22023 bad value; 42601 bad options); the
// session is usable regardless, without the failed entries.
func (r *Registry) NewSession(client map[string]string) (*Session, []*Error) {
	s := &Session{r: r, vars: make([]sessVar, len(Table)), lastReported: make([]string, len(reportedIdx)), reportDirty: true}
	r.mu.RLock()
	s.gen = r.gen.Load()
	for i := range Table {
		rv := &r.vars[i]
		s.vars[i] = sessVar{cur: rv.cur, src: rv.src, sess: rv.cur, sessSrc: rv.src, reset: rv.cur, resetSrc: rv.src}
	}
	r.mu.RUnlock()

	var errs []*Error
	if opts, ok := client["options"]; ok {
		pairs, err := parseOptions(opts)
		if err != nil {
			errs = append(errs, err)
		}
		for _, p := range pairs {
			if err := s.setClient(p[0], p[1]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	keys := make([]string, 0, len(client))
	for k := range client {
		switch k {
		case "options", "user", "database", "replication":
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := s.setClient(k, client[k]); err != nil {
			errs = append(errs, err)
		}
	}
	return s, errs
}

func (s *Session) setClient(name, value string) *Error {
	i, ok := index(name)
	if !ok {
		return errUnknown(name)
	}
	d := &Table[i]
	if err := contextError(d, SourceClient); err != nil {
		return err
	}
	v, err := parseValue(d, value)
	if err != nil {
		return err
	}
	s.vars[i] = sessVar{cur: v, src: SourceClient, sess: v, sessSrc: SourceClient, reset: v, resetSrc: SourceClient}
	s.changes++
	return nil
}

// parseOptions splits a startup packet's options as PostgreSQL's
// pg_split_opts does and reads the -c / -- switches in it.
func parseOptions(opts string) ([][2]string, *Error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(opts); i++ {
		c := opts[i]
		switch {
		case c == '\\' && i+1 < len(opts):
			i++
			cur.WriteByte(opts[i])
			inWord = true
		case isSpace(c):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	var pairs [][2]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		var arg, flag string
		switch {
		case strings.HasPrefix(w, "--"):
			arg, flag = w[2:], "--"
		case w == "-c":
			if i+1 >= len(words) {
				return pairs, &Error{Code: CodeSyntaxError, Message: "option requires an argument -- 'c'"}
			}
			i++
			arg, flag = words[i], "-c "
		case strings.HasPrefix(w, "-c"):
			arg, flag = w[2:], "-c "
		default:
			return pairs, &Error{Code: CodeSyntaxError,
				Message: "invalid command-line argument for server process: " + w,
				Hint:    `Try "lockd --help" for more information.`}
		}
		name, value, ok := strings.Cut(arg, "=")
		if !ok {
			return pairs, &Error{Code: CodeSyntaxError, Message: flag + arg + " requires a value"}
		}
		pairs = append(pairs, [2]string{strings.ReplaceAll(name, "-", "_"), value})
	}
	return pairs, nil
}

// SetInternal sets name to value for this session without context checks,
// for values the server itself decides (session_authorization from the
// startup user, is_superuser). The value also becomes the reset value; the
// source is unchanged. Errors are *Error (unknown name, bad value).
func (s *Session) SetInternal(name, value string) error {
	i, ok := index(name)
	if !ok {
		return errUnknown(name)
	}
	v, err := parseValue(&Table[i], value)
	if err != nil {
		return err
	}
	s.each(i, func(sv *sessVar) {
		sv.cur, sv.sess, sv.reset = v, v, v
	})
	s.markReported(i)
	return nil
}

// each applies fn to the live state of setting i and to its saved state in
// the undo log, if any, so an abort does not resurrect what fn replaced.
func (s *Session) each(i int, fn func(*sessVar)) {
	fn(&s.vars[i])
	if s.vars[i].touched > 0 {
		for k := range s.undo {
			if s.undo[k].idx == i {
				fn(&s.undo[k].saved)
			}
		}
	}
}

// markReported notes that setting i may have changed in this session.
func (s *Session) markReported(i int) {
	s.changes++
	if Table[i].Reported {
		s.reportDirty = true
	}
}

// Changes counts the changes of this session's settings (a count that
// may also move when a value was set to what it was): a plan made when
// it had another value may have been made under other settings.
func (s *Session) Changes() uint64 { return s.changes }

// lookupForSet resolves name and checks that a session may change it.
func lookupForSet(name string) (int, *Error) {
	i, ok := index(name)
	if !ok {
		return 0, errUnknown(name)
	}
	if err := contextError(&Table[i], SourceSession); err != nil {
		return 0, err
	}
	return i, nil
}

// Set implements SET [LOCAL] name = value and set_config(). Errors are
// *Error with PostgreSQL's texts: 42704 unknown name; 55P02 for internal,
// postmaster, sighup and (superuser-)backend settings; 22023 bad value. SET
// LOCAL outside a transaction is validated and then does nothing (the caller
// sends WARNING 25P01).
func (s *Session) Set(name, value string, local bool) (*Def, error) {
	i, err := lookupForSet(name)
	if err != nil {
		return nil, err
	}
	d := &Table[i]
	v, err := parseValue(d, value)
	if err != nil {
		return nil, err
	}
	s.apply(i, v, SourceSession, local)
	return d, nil
}

// SetDefault implements SET [LOCAL] name TO DEFAULT and RESET name: the
// setting goes back to its reset value (what the session had with no SET).
func (s *Session) SetDefault(name string, local bool) (*Def, error) {
	i, err := lookupForSet(name)
	if err != nil {
		return nil, err
	}
	sv := &s.vars[i]
	s.apply(i, sv.reset, sv.resetSrc, local)
	return &Table[i], nil
}

// ResetAll implements RESET ALL: every user and superuser setting goes back
// to its reset value, except those PostgreSQL exempts (transaction_isolation,
// transaction_read_only, session_authorization).
func (s *Session) ResetAll() {
	for i := range Table {
		d := &Table[i]
		if (d.Context != User && d.Context != Superuser) || d.flags&flagNoResetAll != 0 {
			continue
		}
		sv := &s.vars[i]
		if sv.cur != sv.reset || sv.src != sv.resetSrc || sv.sess != sv.reset || sv.sessSrc != sv.resetSrc {
			s.apply(i, sv.reset, sv.resetSrc, false)
		}
	}
}

func (s *Session) apply(i int, v Value, src Source, local bool) {
	if local && s.level == 0 {
		return
	}
	sv := &s.vars[i]
	if s.level > 0 && sv.touched < s.level {
		s.undo = append(s.undo, undoEntry{idx: i, level: s.level, saved: *sv})
		sv.touched = s.level
	}
	if local {
		sv.cur, sv.src, sv.local = v, src, true
	} else {
		sv.cur, sv.src, sv.local = v, src, false
		sv.sess, sv.sessSrc = v, src
	}
	s.markReported(i)
}

// BeginTxn marks the start of a transaction block. Calling it inside one does
// nothing.
func (s *Session) BeginTxn() {
	if s.level == 0 {
		s.level = 1
	}
}

// InTxn reports whether the session is inside a transaction.
func (s *Session) InTxn() bool { return s.level > 0 }

// NestLevel is the current GUC nest level: 0 outside a transaction, 1 in
// one, one more per open subtransaction.
func (s *Session) NestLevel() int { return s.level }

// BeginSub opens a subtransaction level (SAVEPOINT): changes made from now
// on can be undone by AbortSub alone. It panics outside a transaction.
func (s *Session) BeginSub() {
	if s.level == 0 {
		panic("guc: BeginSub outside a transaction")
	}
	s.level++
}

// CommitSub closes the innermost subtransaction level keeping its changes
// (RELEASE): they now belong to the enclosing level, so aborting that
// level (or the transaction) still undoes them. It panics without an open
// subtransaction level.
func (s *Session) CommitSub() {
	if s.level < 2 {
		panic("guc: CommitSub without a subtransaction")
	}
	lvl := s.level
	k := len(s.undo)
	for k > 0 && s.undo[k-1].level == lvl {
		k--
	}
	kept := s.undo[:k]
	for _, e := range s.undo[k:] {
		sv := &s.vars[e.idx]
		sv.touched = lvl - 1
		if e.saved.touched == lvl-1 {
			continue // the enclosing level saved an older state already
		}
		e.level = lvl - 1
		kept = append(kept, e)
	}
	clear(s.undo[len(kept):])
	s.undo = kept
	s.level--
}

// AbortSub closes the innermost subtransaction level undoing every setting
// change made in it (ROLLBACK TO). It panics without an open
// subtransaction level.
func (s *Session) AbortSub() {
	if s.level < 2 {
		panic("guc: AbortSub without a subtransaction")
	}
	k := len(s.undo)
	for k > 0 && s.undo[k-1].level == s.level {
		k--
		e := s.undo[k]
		s.vars[e.idx] = e.saved
		s.markReported(e.idx)
	}
	clear(s.undo[k:])
	s.undo = s.undo[:k]
	s.level--
}

// CommitTxn ends the transaction keeping its SET values and dropping its SET
// LOCAL values. Open subtransaction levels are committed with it.
func (s *Session) CommitTxn() {
	for _, e := range s.undo {
		sv := &s.vars[e.idx]
		sv.cur, sv.src, sv.local, sv.touched = sv.sess, sv.sessSrc, false, 0
		s.markReported(e.idx)
	}
	s.endTxn()
}

// AbortTxn ends the transaction undoing every setting change made in it,
// at every nest level.
func (s *Session) AbortTxn() {
	for k := len(s.undo) - 1; k >= 0; k-- {
		e := s.undo[k]
		e.saved.touched = 0
		s.vars[e.idx] = e.saved
		s.markReported(e.idx)
	}
	s.endTxn()
}

func (s *Session) endTxn() {
	clear(s.undo)
	s.undo = s.undo[:0]
	s.level = 0
}

// Refresh picks up server-wide values after a reload, as a PostgreSQL
// backend does between commands after SIGHUP: settings whose value in this
// session comes from below the client (default, files, command line) follow
// the registry; client and session values stay, and backend,
// superuser-backend and postmaster settings are fixed for the session life.
// It is cheap when nothing changed.
func (s *Session) Refresh() {
	if s.r.gen.Load() == s.gen {
		return
	}
	s.r.mu.RLock()
	defer s.r.mu.RUnlock()
	s.gen = s.r.gen.Load()
	for i := range Table {
		switch Table[i].Context {
		case Internal, Postmaster, Backend, SuperuserBackend:
			continue
		}
		rv := &s.r.vars[i]
		before := s.vars[i].cur
		s.each(i, func(sv *sessVar) {
			if sv.resetSrc < SourceClient {
				sv.reset, sv.resetSrc = rv.cur, rv.src
			}
			if sv.sessSrc < SourceClient {
				sv.sess, sv.sessSrc = rv.cur, rv.src
			}
			if !sv.local && sv.src < SourceClient {
				sv.cur, sv.src = rv.cur, rv.src
			}
		})
		if s.vars[i].cur != before {
			s.markReported(i)
		}
	}
}

// ReportedParam is a ParameterStatus to send.
type ReportedParam struct {
	Name, Value string
}

// PendingReports returns the reported settings whose display value changed
// since the last call, in Table order; the first call returns all of them,
// for the ParameterStatus burst at startup. It is cheap (and returns nil)
// when no reported setting was touched.
func (s *Session) PendingReports() []ReportedParam {
	if !s.reportDirty {
		return nil
	}
	s.reportDirty = false
	var out []ReportedParam
	for k, i := range reportedIdx {
		d := &Table[i]
		disp := FormatValue(d, s.vars[i].cur)
		if s.reportedOnce && disp == s.lastReported[k] {
			continue
		}
		s.lastReported[k] = disp
		out = append(out, ReportedParam{Name: d.Name, Value: disp})
	}
	s.reportedOnce = true
	return out
}

// Get returns the current value of name in this session. It panics on an
// unknown name.
func (s *Session) Get(name string) Value { return s.vars[mustIndex(name)].cur }

// Source returns where the current value of name comes from. It panics on an
// unknown name.
func (s *Session) Source(name string) Source { return s.vars[mustIndex(name)].src }

// Bool returns the current value of a Bool setting. It panics on an unknown
// name.
func (s *Session) Bool(name string) bool { return s.vars[mustIndex(name)].cur.Bool }

// Int returns the current value of an Int setting in its base unit (for an
// Enum, the index of its value in EnumValues). It panics on an unknown name.
func (s *Session) Int(name string) int64 { return s.vars[mustIndex(name)].cur.Int }

// Real returns the current value of a Real setting. It panics on an unknown
// name.
func (s *Session) Real(name string) float64 { return s.vars[mustIndex(name)].cur.Real }

// String returns the current value of a String or Enum setting (canonical
// spelling for enums); for other types, the display form. It panics on an
// unknown name.
func (s *Session) String(name string) string { return s.StringAt(Key(mustIndex(name))) }

// A Key is a setting's index in Table, found once by MustKey. Code that
// reads a setting on every statement or transaction keeps a Key in a
// package variable instead of hashing the name on each read.
type Key int

// MustKey returns the Key of the setting name (case-insensitive). It panics
// on an unknown name: the program, not a user, supplies it.
func MustKey(name string) Key { return Key(mustIndex(name)) }

// BoolAt is Bool by Key.
func (s *Session) BoolAt(k Key) bool { return s.vars[k].cur.Bool }

// IntAt is Int by Key.
func (s *Session) IntAt(k Key) int64 { return s.vars[k].cur.Int }

// StringAt is String by Key.
func (s *Session) StringAt(k Key) string {
	i := int(k)
	switch Table[i].Type {
	case String, Enum:
		return s.vars[i].cur.Str
	}
	return FormatValue(&Table[i], s.vars[i].cur)
}

// Show implements SHOW name and current_setting(name): the display form
// ("1s", "128MB", "on"). An unknown name is 42704.
func (s *Session) Show(name string) (string, *Def, error) {
	i, ok := index(name)
	if !ok {
		return "", nil, errUnknown(name)
	}
	d := &Table[i]
	return FormatValue(d, s.vars[i].cur), d, nil
}

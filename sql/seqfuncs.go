package sql

import (
	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
)

// The sequence functions nextval, currval, setval and lastval, with
// PostgreSQL 15's semantics: values are never given back (a rolled-back
// nextval is lost), CACHE n hands each session n values at a time, and
// every function takes RowExclusiveLock on the sequence once per
// transaction (lock_and_open_sequence), held to the end of the
// transaction even if a subtransaction rolls back.

// seqElm is a session's SeqTableData: its currval state and cached values
// of one sequence.
type seqElm struct {
	oid       uint32
	relfile   uint32   // the storage last seen; a new one drops the cache
	data      *seqData // storage of relfile
	lxid      uint32   // the transaction that holds the lock
	lastValid bool     // last is currval's value
	last      int64    // value last returned by nextval
	cached    int64    // last value fetched into the cache; last != cached: values are cached
	increment int64
}

// seqElem returns the session's entry for sequence oid.
func seqElem(s *Backend, oid uint32) *seqElm {
	elm := s.seqTab[oid]
	if elm == nil {
		if s.seqTab == nil {
			s.seqTab = map[uint32]*seqElm{}
		}
		elm = &seqElm{oid: oid}
		s.seqTab[oid] = elm
	}
	return elm
}

// seqLock is lock_and_open_sequence: RowExclusiveLock on the sequence, once
// per transaction, outside the subtransaction log (so that ROLLBACK TO
// keeps it, as PostgreSQL's TopTransactionResourceOwner does).
func seqLock(s *Backend, ec *evalCtx, elm *seqElm) error {
	if elm.lxid == s.lxid && s.lxid != 0 {
		return nil
	}
	opt := s.lockOptions(false, false)
	opt.Unlogged = true
	if err := s.locks.Lock(ec.ctx, s.proc, locks.RelationTag(DatabaseOID, elm.oid), locks.RowExclusiveLock, opt); err != nil {
		return err
	}
	elm.lxid = s.lxid
	return nil
}

// seqOpen is init_sequence: it locks sequence oid and returns the
// session's entry, the definition and the storage. A sequence whose
// storage changed since the session last used it loses its cached values
// (not its currval).
func seqOpen(s *Backend, ec *evalCtx, oid uint32) (*seqElm, *SequenceDef, *seqData, error) {
	elm := seqElem(s, oid)
	if err := seqLock(s, ec, elm); err != nil {
		return nil, nil, nil, err
	}
	q := s.cat().Sequences[oid]
	if q == nil {
		if r, ok := s.relationByOID(oid); ok {
			return nil, nil, nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a sequence", r.name)
		}
		return nil, nil, nil, pgerr.New(pgerr.InternalError, "could not open relation with OID %d", oid)
	}
	if q.RelFile != elm.relfile || elm.data == nil {
		elm.relfile = q.RelFile
		elm.data = s.seqs.get(q.RelFile)
		elm.cached = elm.last
		if elm.data == nil {
			return nil, nil, nil, pgerr.New(pgerr.InternalError, "storage of sequence \"%s\" is missing", q.Name)
		}
	}
	return elm, q, elm.data, nil
}

// discardSequences is DISCARD SEQUENCES (ResetSequenceCaches): the
// session forgets its currval and lastval states and its cached values.
func discardSequences(s *Backend) {
	s.seqTab, s.lastSeq = nil, nil
}

// seqReadOnly is PreventCommandIfReadOnly for the sequence functions
// (lockd has no temporary sequences, which PostgreSQL lets them change).
func seqReadOnly(s *Backend, fn string) error {
	if s.gucs.Bool("transaction_read_only") {
		return pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute %s() in a read-only transaction", fn)
	}
	return nil
}

// nextval is nextval_internal.
func nextval(s *Backend, ec *evalCtx, oid uint32) (int64, error) {
	elm, q, data, err := seqOpen(s, ec, oid)
	if err != nil {
		return 0, err
	}
	if err := seqReadOnly(s, "nextval"); err != nil {
		return 0, err
	}
	if elm.last != elm.cached { // a cached value
		elm.last += elm.increment
		s.lastSeq = elm
		return elm.last, nil
	}
	incby, maxv, minv, cache := q.Increment, q.Max, q.Min, q.Cache
	data.lw.Acquire(s.proc, locks.LWExclusive)
	st := data.st
	last, next, result := st.LastValue, st.LastValue, st.LastValue
	fetch, logCnt := cache, st.LogCnt
	var rescnt int64
	if !st.IsCalled {
		rescnt++ // the first call returns last_value itself
		fetch--
	}
	// Log (and so fetch) 32 values ahead when the logged ones are used
	// up, and after a checkpoint.
	logit := false
	if logCnt < fetch || !st.IsCalled || data.loggedGen < s.seqs.ckptGen.Load() {
		fetch += sequenceLogVals
		logCnt = fetch
		logit = true
	}
	for fetch > 0 {
		if incby > 0 {
			if (maxv >= 0 && next > maxv-incby) || (maxv < 0 && next+incby > maxv) {
				if rescnt > 0 {
					break // fetched enough
				}
				if !q.Cycle {
					data.lw.Release(s.proc)
					return 0, pgerr.New(codeSequenceLimit, "nextval: reached maximum value of sequence \"%s\" (%d)", q.Name, maxv)
				}
				next = minv
			} else {
				next += incby
			}
		} else {
			if (minv < 0 && next < minv-incby) || (minv >= 0 && next+incby < minv) {
				if rescnt > 0 {
					break
				}
				if !q.Cycle {
					data.lw.Release(s.proc)
					return 0, pgerr.New(codeSequenceLimit, "nextval: reached minimum value of sequence \"%s\" (%d)", q.Name, minv)
				}
				next = maxv
			} else {
				next += incby
			}
		}
		fetch--
		if rescnt < cache {
			logCnt--
			rescnt++
			last = next
			if rescnt == 1 {
				result = next
			}
		}
	}
	logCnt -= fetch // values not fetched are not logged
	if logit {
		// PostgreSQL takes the xid with the page locked, before changing it
		if err := s.seqLogged(q); err != nil {
			data.lw.Release(s.proc)
			return 0, err
		}
		data.loggedGen = s.seqs.ckptGen.Load()
	}
	data.st = seqState{LastValue: last, LogCnt: logCnt, IsCalled: true}
	data.lw.Release(s.proc)
	elm.increment = incby
	elm.last, elm.cached, elm.lastValid = result, last, true
	s.lastSeq = elm
	return result, nil
}

// currval returns the value nextval last gave this session.
func currval(s *Backend, ec *evalCtx, oid uint32) (int64, error) {
	elm, q, _, err := seqOpen(s, ec, oid)
	if err != nil {
		return 0, err
	}
	if !elm.lastValid {
		return 0, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "currval of sequence \"%s\" is not yet defined in this session", q.Name)
	}
	return elm.last, nil
}

// lastval returns the value nextval last gave this session, of any
// sequence.
func lastval(s *Backend, ec *evalCtx) (int64, error) {
	elm := s.lastSeq
	if elm == nil {
		return 0, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	if _, ok := s.relationByOID(elm.oid); !ok { // dropped since
		return 0, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	if err := seqLock(s, ec, elm); err != nil {
		return 0, err
	}
	return elm.last, nil
}

// setval is do_setval: the next nextval returns next+increment (isCalled)
// or next.
func setval(s *Backend, ec *evalCtx, oid uint32, next int64, isCalled bool) error {
	elm, q, data, err := seqOpen(s, ec, oid)
	if err != nil {
		return err
	}
	if err := seqReadOnly(s, "setval"); err != nil {
		return err
	}
	data.lw.Acquire(s.proc, locks.LWExclusive)
	if next < q.Min || next > q.Max {
		data.lw.Release(s.proc)
		return pgerr.New(pgerr.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence \"%s\" (%d..%d)", next, q.Name, q.Min, q.Max)
	}
	if isCalled {
		elm.last, elm.lastValid = next, true
	}
	elm.cached = elm.last // forget cached values
	if err := s.seqLogged(q); err != nil {
		data.lw.Release(s.proc)
		return err
	}
	data.st = seqState{LastValue: next, IsCalled: isCalled}
	data.loggedGen = s.seqs.ckptGen.Load()
	data.lw.Release(s.proc)
	return nil
}

// seqLastValue is pg_sequence_last_value: the sequence's last_value, NULL
// before the first nextval.
func seqLastValue(s *Backend, ec *evalCtx, q *SequenceDef) Datum {
	d := s.seqs.get(q.RelFile)
	if d == nil {
		return NullDatum
	}
	d.lw.Acquire(s.proc, locks.LWShared)
	st := d.st
	d.lw.Release(s.proc)
	if !st.IsCalled {
		return NullDatum
	}
	return intDatum(st.LastValue)
}

// seqFunc resolves the sequence functions. The sequence argument is a
// regclass: a literal is looked up when the statement is analysed (with
// the literal's position in errors), a text value when the call runs, an
// integer or oid is taken as the OID.
func (a *analyzer) seqFunc(name string, args []expr, fc *pg.FuncCall) (expr, bool, error) {
	loc := fc.Location
	var nargs []int
	switch name {
	case "nextval", "currval", "pg_sequence_last_value":
		nargs = []int{1}
	case "setval":
		nargs = []int{2, 3}
	case "lastval":
		nargs = []int{0}
	default:
		return nil, false, nil
	}
	if len(args) != nargs[0] && (len(nargs) == 1 || len(args) != nargs[1]) {
		return nil, true, noFunction(name, args, loc)
	}
	// the argument types must match before any is coerced (the error
	// names them as written)
	if len(args) > 0 {
		t := args[0].typ()
		if !isUnknown(args[0]) && categoryOf(t) != catString && categoryOf(t) != catInt && !isOidLike(t) {
			return nil, true, noFunction(name, args, loc)
		}
	}
	if name == "setval" {
		// bigint: integers and literals only (numeric casts to it only explicitly)
		if t := args[1].typ(); !isUnknown(args[1]) && t.OID != OIDInt2 && t.OID != OIDInt4 && t.OID != OIDInt8 {
			return nil, true, noFunction(name, args, loc)
		}
		if len(args) == 3 && !isUnknown(args[2]) && args[2].typ().OID != OIDBool {
			return nil, true, noFunction(name, args, loc)
		}
	}
	resolve := func(ec *evalCtx, v Datum) (uint32, error) { return uint32(v.I), nil }
	if len(args) > 0 {
		switch {
		case isUnknown(args[0]):
			e, err := a.coerceArg(args[0], TypeRegclass, name, exprLocation(fc.Args[0]))
			if err != nil {
				return nil, true, err
			}
			args[0] = e
		case categoryOf(args[0].typ()) == catString:
			resolve = func(ec *evalCtx, v Datum) (uint32, error) {
				d, err := parseRegName(TypeRegclass, v.S, ec.formatCtx())
				return uint32(d.I), err
			}
		}
	}
	if name == "setval" {
		var err error
		if args[1], err = a.coerceArg(args[1], TypeInt8, name, loc); err != nil {
			return nil, true, err
		}
		if len(args) == 3 {
			if args[2], err = a.coerceArg(args[2], TypeBool, name, loc); err != nil {
				return nil, true, err
			}
		}
	}
	result := TypeInt8
	var fn func(ec *evalCtx, v []Datum) (Datum, error)
	switch name {
	case "nextval":
		fn = func(ec *evalCtx, v []Datum) (Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return Datum{}, err
			}
			n, err := nextval(ec.s, ec, oid)
			return intDatum(n), err
		}
	case "currval":
		fn = func(ec *evalCtx, v []Datum) (Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return Datum{}, err
			}
			n, err := currval(ec.s, ec, oid)
			return intDatum(n), err
		}
	case "lastval":
		fn = func(ec *evalCtx, _ []Datum) (Datum, error) {
			n, err := lastval(ec.s, ec)
			return intDatum(n), err
		}
	case "setval":
		fn = func(ec *evalCtx, v []Datum) (Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return Datum{}, err
			}
			isCalled := len(v) < 3 || v[2].I != 0
			return v[1], setval(ec.s, ec, oid, v[1].I, isCalled)
		}
	case "pg_sequence_last_value":
		fn = func(ec *evalCtx, v []Datum) (Datum, error) {
			oid, err := resolve(ec, v[0])
			if err != nil {
				return Datum{}, err
			}
			q := ec.s.cat().Sequences[oid]
			if q == nil {
				return Datum{}, pgerr.New(pgerr.WrongObjectType, "\"%d\" is not a sequence", oid)
			}
			return seqLastValue(ec.s, ec, q), nil
		}
	}
	return &funcExpr{name: name, t: result, args: args, volatile: true, fn: fn}, true, nil
}

package funcs

import (
	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// seqElem returns the session's entry for sequence oid.
func seqElem(s *expr.Backend, oid uint32) *expr.SeqElm {
	elm := s.SeqTab[oid]
	if elm == nil {
		if s.SeqTab == nil {
			s.SeqTab = map[uint32]*expr.SeqElm{}
		}
		elm = &expr.SeqElm{Oid: oid}
		s.SeqTab[oid] = elm
	}
	return elm
}

// seqLock is lock_and_open_sequence: RowExclusiveLock on the sequence, once
// per transaction, outside the subtransaction log (so that ROLLBACK TO
// keeps it, as PostgreSQL's TopTransactionResourceOwner does).
func seqLock(s *expr.Backend, ec *expr.EvalCtx, elm *expr.SeqElm) error {
	if elm.Lxid == s.LocalXID && s.LocalXID != 0 {
		return nil
	}
	opt := s.LockOptions(false, false)
	opt.Unlogged = true
	if err := s.Locks.Lock(ec.Ctx, s.Proc, locks.RelationTag(catalog.DatabaseOID, elm.Oid), locks.RowExclusiveLock, opt); err != nil {
		return err
	}
	elm.Lxid = s.LocalXID
	return nil
}

// seqOpen is init_sequence: it locks sequence oid and returns the
// session's entry, the definition and the storage. A sequence whose
// storage changed since the session last used it loses its cached values
// (not its currval).
func SeqOpen(s *expr.Backend, ec *expr.EvalCtx, oid uint32) (*expr.SeqElm, *catalog.SequenceDef, *catalog.SeqData, error) {
	elm := seqElem(s, oid)
	if err := seqLock(s, ec, elm); err != nil {
		return nil, nil, nil, err
	}
	q := s.Cat().Sequences[oid]
	if q == nil {
		if r, ok := s.RelationByOID(oid); ok {
			return nil, nil, nil, pgerr.New(pgerr.WrongObjectType, "\"%s\" is not a sequence", r.Name)
		}
		return nil, nil, nil, pgerr.New(pgerr.InternalError, "could not open relation with OID %d", oid)
	}
	if q.RelFile != elm.Relfile || elm.Data == nil {
		elm.Relfile = q.RelFile
		elm.Data = s.Seqs.Get(q.RelFile)
		elm.Cached = elm.Last
		if elm.Data == nil {
			return nil, nil, nil, pgerr.New(pgerr.InternalError, "storage of sequence \"%s\" is missing", q.Name)
		}
	}
	return elm, q, elm.Data, nil
}

// discardSequences is DISCARD SEQUENCES (ResetSequenceCaches): the
// session forgets its currval and lastval states and its cached values.
func DiscardSequences(s *expr.Backend) {
	s.SeqTab, s.LastSeq = nil, nil
}

// seqReadOnly is PreventCommandIfReadOnly for the sequence functions
// (lockd has no temporary sequences, which PostgreSQL lets them change).
func seqReadOnly(s *expr.Backend, fn string) error {
	if s.Settings.Bool("transaction_read_only") {
		return pgerr.New(pgerr.ReadOnlySQLTransaction, "cannot execute %s() in a read-only transaction", fn)
	}
	return nil
}

// nextval is nextval_internal.
func Nextval(s *expr.Backend, ec *expr.EvalCtx, oid uint32) (int64, error) {
	elm, q, data, err := SeqOpen(s, ec, oid)
	if err != nil {
		return 0, err
	}
	if err := seqReadOnly(s, "nextval"); err != nil {
		return 0, err
	}
	if elm.Last != elm.Cached { // a cached value
		elm.Last += elm.Increment
		s.LastSeq = elm
		return elm.Last, nil
	}
	incby, maxv, minv, cache := q.Increment, q.Max, q.Min, q.Cache
	data.Lw.Acquire(s.Proc, locks.LWExclusive)
	st := data.St
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
	if logCnt < fetch || !st.IsCalled || s.Seqs.LogDue(data) {
		fetch += catalog.SequenceLogVals
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
					data.Lw.Release(s.Proc)
					return 0, pgerr.New(catalog.CodeSequenceLimit, "nextval: reached maximum value of sequence \"%s\" (%d)", q.Name, maxv)
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
					data.Lw.Release(s.Proc)
					return 0, pgerr.New(catalog.CodeSequenceLimit, "nextval: reached minimum value of sequence \"%s\" (%d)", q.Name, minv)
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
		if err := s.SeqLogged(q); err != nil {
			data.Lw.Release(s.Proc)
			return 0, err
		}
		// The record holds the state once the logged values are used up.
		data.LSN = s.Seqs.Log(s.Proc, q.RelFile, catalog.SeqState{LastValue: next, LogCnt: 0, IsCalled: true})
	}
	data.St = catalog.SeqState{LastValue: last, LogCnt: logCnt, IsCalled: true}
	data.Lw.Release(s.Proc)
	elm.Increment = incby
	elm.Last, elm.Cached, elm.LastValid = result, last, true
	s.LastSeq = elm
	return result, nil
}

// currval returns the value nextval last gave this session.
func Currval(s *expr.Backend, ec *expr.EvalCtx, oid uint32) (int64, error) {
	elm, q, _, err := SeqOpen(s, ec, oid)
	if err != nil {
		return 0, err
	}
	if !elm.LastValid {
		return 0, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "currval of sequence \"%s\" is not yet defined in this session", q.Name)
	}
	return elm.Last, nil
}

// lastval returns the value nextval last gave this session, of any
// sequence.
func Lastval(s *expr.Backend, ec *expr.EvalCtx) (int64, error) {
	elm := s.LastSeq
	if elm == nil {
		return 0, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	if _, ok := s.RelationByOID(elm.Oid); !ok { // dropped since
		return 0, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	if err := seqLock(s, ec, elm); err != nil {
		return 0, err
	}
	return elm.Last, nil
}

// setval is do_setval: the next nextval returns next+increment (isCalled)
// or next.
func Setval(s *expr.Backend, ec *expr.EvalCtx, oid uint32, next int64, isCalled bool) error {
	elm, q, data, err := SeqOpen(s, ec, oid)
	if err != nil {
		return err
	}
	if err := seqReadOnly(s, "setval"); err != nil {
		return err
	}
	data.Lw.Acquire(s.Proc, locks.LWExclusive)
	if next < q.Min || next > q.Max {
		data.Lw.Release(s.Proc)
		return pgerr.New(pgerr.NumericValueOutOfRange, "setval: value %d is out of bounds for sequence \"%s\" (%d..%d)", next, q.Name, q.Min, q.Max)
	}
	if isCalled {
		elm.Last, elm.LastValid = next, true
	}
	elm.Cached = elm.Last // forget cached values
	if err := s.SeqLogged(q); err != nil {
		data.Lw.Release(s.Proc)
		return err
	}
	data.St = catalog.SeqState{LastValue: next, IsCalled: isCalled}
	data.LSN = s.Seqs.Log(s.Proc, q.RelFile, data.St)
	data.Lw.Release(s.Proc)
	return nil
}

// seqLastValue is pg_sequence_last_value: the sequence's last_value, NULL
// before the first nextval.
func SeqLastValue(s *expr.Backend, ec *expr.EvalCtx, q *catalog.SequenceDef) types.Datum {
	d := s.Seqs.Get(q.RelFile)
	if d == nil {
		return types.NullDatum
	}
	d.Lw.Acquire(s.Proc, locks.LWShared)
	st := d.St
	d.Lw.Release(s.Proc)
	if !st.IsCalled {
		return types.NullDatum
	}
	return types.IntDatum(st.LastValue)
}

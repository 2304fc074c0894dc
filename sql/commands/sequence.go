package commands

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// seqTypeLimits are the bounds of a sequence data type.
func seqTypeLimits(oid uint32) (lo, hi int64) {
	switch oid {
	case types.OIDInt2:
		return math.MinInt16, math.MaxInt16
	case types.OIDInt4:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// seqOptions is what a CREATE or ALTER SEQUENCE option list asks for
// besides the pg_sequence fields.
type seqOptions struct {
	rewrite bool     // a change to how values are generated: new storage
	ownedBy []string // OWNED BY table.column or none; nil: not given
	seqName []string // SEQUENCE NAME (identity columns only)
}

// seqParams is init_params: it checks the options and sets def and st
// from them; isInit fills in the defaults of a new sequence. asType is
// the data type a new identity or serial sequence takes when the options
// name none.
func (s *Utility) seqParams(options []*pg.Node, forIdentity, isInit bool, def *catalog.SequenceDef, st *catalog.SeqState, asType uint32) (seqOptions, error) {
	var o seqOptions
	d, err := collectSeqOptions(options, forIdentity, &o)
	if err != nil {
		return o, err
	}
	if isInit {
		st.LogCnt = 0
	}
	resetMax, resetMin, err := s.seqType(d, forIdentity, isInit, def, asType)
	if err != nil {
		return o, err
	}
	if err := seqIncrementCycle(d, isInit, def, st); err != nil {
		return o, err
	}
	if err := seqBounds(d, isInit, resetMax, resetMin, def, st); err != nil {
		return o, err
	}
	return o, seqStartRestartCache(d, isInit, def, st)
}

// seqDefElems are the options of CREATE / ALTER SEQUENCE that set a
// parameter, each given at most once.
type seqDefElems struct {
	as, start, restart, incr, maxv, minv, cache, cycle *pg.DefElem
}

// collectSeqOptions sorts options into their parameters, refusing one
// given twice; OWNED BY and SEQUENCE NAME go to o.
func collectSeqOptions(options []*pg.Node, forIdentity bool, o *seqOptions) (*seqDefElems, error) {
	d := &seqDefElems{}
	seen := func(p **pg.DefElem, de *pg.DefElem) error {
		if *p != nil {
			return expr.PosErr(pgerr.New(pgerr.SyntaxError, "conflicting or redundant options"), de.Location)
		}
		*p = de
		o.rewrite = true
		return nil
	}
	for _, n := range options {
		de := n.GetDefElem()
		var err error
		switch de.Defname {
		case "as":
			err = seen(&d.as, de)
		case "increment":
			err = seen(&d.incr, de)
		case "start":
			err = seen(&d.start, de)
		case "restart":
			err = seen(&d.restart, de)
		case "maxvalue":
			err = seen(&d.maxv, de)
		case "minvalue":
			err = seen(&d.minv, de)
		case "cache":
			err = seen(&d.cache, de)
		case "cycle":
			err = seen(&d.cycle, de)
		case "owned_by":
			if o.ownedBy != nil {
				return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "conflicting or redundant options"), de.Location)
			}
			for _, item := range de.Arg.GetList().GetItems() {
				o.ownedBy = append(o.ownedBy, analyze.NodeName(item))
			}
		case "sequence_name":
			if !forIdentity {
				return nil, expr.PosErr(pgerr.New(pgerr.SyntaxError, "invalid sequence option SEQUENCE NAME"), de.Location)
			}
			for _, item := range de.Arg.GetList().GetItems() {
				o.seqName = append(o.seqName, analyze.NodeName(item))
			}
		default:
			return nil, pgerr.New(pgerr.InternalError, "option \"%s\" not recognized", de.Defname)
		}
		if err != nil {
			return nil, err
		}
	}
	return d, nil
}

// seqType applies AS type; resetMax and resetMin report that the old
// type's limits were the bounds, which then follow the new type.
func (s *Utility) seqType(d *seqDefElems, forIdentity, isInit bool, def *catalog.SequenceDef, asType uint32) (resetMax, resetMin bool, err error) {
	// AS type
	switch {
	case d.as != nil:
		typ, err := plan.NewAnalyzer(&s.Backend, nil).TypeName(d.as.Arg.GetTypeName())
		if err != nil {
			return false, false, err
		}
		if typ.OID != types.OIDInt2 && typ.OID != types.OIDInt4 && typ.OID != types.OIDInt8 {
			if forIdentity {
				return false, false, pgerr.New(pgerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
			}
			return false, false, pgerr.New(pgerr.InvalidParameterValue, "sequence type must be smallint, integer, or bigint")
		}
		if !isInit {
			// bounds that were the old type's limits follow the type
			lo, hi := seqTypeLimits(def.TypeOID)
			resetMax, resetMin = def.Max == hi, def.Min == lo
		}
		def.TypeOID = typ.OID
	case isInit && asType != 0:
		if asType != types.OIDInt2 && asType != types.OIDInt4 && asType != types.OIDInt8 {
			return false, false, pgerr.New(pgerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
		}
		def.TypeOID = asType
	case isInit:
		def.TypeOID = types.OIDInt8
	}
	return resetMax, resetMin, nil
}

// seqIncrementCycle applies INCREMENT BY and [NO] CYCLE.
func seqIncrementCycle(d *seqDefElems, isInit bool, def *catalog.SequenceDef, st *catalog.SeqState) error {
	// INCREMENT BY
	if d.incr != nil {
		v, err := seqOptInt(d.incr)
		if err != nil {
			return err
		}
		if v == 0 {
			return pgerr.New(pgerr.InvalidParameterValue, "INCREMENT must not be zero")
		}
		def.Increment = v
		st.LogCnt = 0
	} else if isInit {
		def.Increment = 1
	}
	// CYCLE
	if d.cycle != nil {
		def.Cycle = d.cycle.Arg.GetBoolean().GetBoolval()
		st.LogCnt = 0
	} else if isInit {
		def.Cycle = false
	}
	return nil
}

// seqBounds applies MAXVALUE and MINVALUE (NO MAXVALUE / NO MINVALUE:
// the type's limit in the direction of the increment).
func seqBounds(d *seqDefElems, isInit, resetMax, resetMin bool, def *catalog.SequenceDef, st *catalog.SeqState) error {
	lo, hi := seqTypeLimits(def.TypeOID)
	typeName := types.FormatType(def.TypeOID, -1)
	// MAXVALUE (no argument: NO MAXVALUE)
	if d.maxv != nil && d.maxv.Arg != nil {
		v, err := seqOptInt(d.maxv)
		if err != nil {
			return err
		}
		def.Max = v
		st.LogCnt = 0
	} else if isInit || d.maxv != nil || resetMax {
		if def.Increment > 0 || resetMax {
			def.Max = hi
		} else {
			def.Max = -1
		}
		st.LogCnt = 0
	}
	if def.Max < lo || def.Max > hi {
		return pgerr.New(pgerr.InvalidParameterValue, "MAXVALUE (%d) is out of range for sequence data type %s", def.Max, typeName)
	}
	// MINVALUE (no argument: NO MINVALUE)
	if d.minv != nil && d.minv.Arg != nil {
		v, err := seqOptInt(d.minv)
		if err != nil {
			return err
		}
		def.Min = v
		st.LogCnt = 0
	} else if isInit || d.minv != nil || resetMin {
		if def.Increment < 0 || resetMin {
			def.Min = lo
		} else {
			def.Min = 1
		}
		st.LogCnt = 0
	}
	if def.Min < lo || def.Min > hi {
		return pgerr.New(pgerr.InvalidParameterValue, "MINVALUE (%d) is out of range for sequence data type %s", def.Min, typeName)
	}
	if def.Min >= def.Max {
		return pgerr.New(pgerr.InvalidParameterValue, "MINVALUE (%d) must be less than MAXVALUE (%d)", def.Min, def.Max)
	}
	return nil
}

// seqStartRestartCache applies START WITH, RESTART [WITH] and CACHE, and
// checks the value the sequence continues from against its bounds.
func seqStartRestartCache(d *seqDefElems, isInit bool, def *catalog.SequenceDef, st *catalog.SeqState) error {
	// START WITH
	if d.start != nil {
		v, err := seqOptInt(d.start)
		if err != nil {
			return err
		}
		def.Start = v
	} else if isInit {
		if def.Increment > 0 {
			def.Start = def.Min
		} else {
			def.Start = def.Max
		}
	}
	if def.Start < def.Min {
		return pgerr.New(pgerr.InvalidParameterValue, "START value (%d) cannot be less than MINVALUE (%d)", def.Start, def.Min)
	}
	if def.Start > def.Max {
		return pgerr.New(pgerr.InvalidParameterValue, "START value (%d) cannot be greater than MAXVALUE (%d)", def.Start, def.Max)
	}
	// RESTART [WITH]
	if d.restart != nil {
		if d.restart.Arg != nil {
			v, err := seqOptInt(d.restart)
			if err != nil {
				return err
			}
			st.LastValue = v
		} else {
			st.LastValue = def.Start
		}
		st.IsCalled = false
		st.LogCnt = 0
	} else if isInit {
		st.LastValue = def.Start
		st.IsCalled = false
	}
	// the d.restart value, or the current value when the bounds moved
	if st.LastValue < def.Min {
		return pgerr.New(pgerr.InvalidParameterValue, "RESTART value (%d) cannot be less than MINVALUE (%d)", st.LastValue, def.Min)
	}
	if st.LastValue > def.Max {
		return pgerr.New(pgerr.InvalidParameterValue, "RESTART value (%d) cannot be greater than MAXVALUE (%d)", st.LastValue, def.Max)
	}
	// CACHE
	if d.cache != nil {
		v, err := seqOptInt(d.cache)
		if err != nil {
			return err
		}
		if v <= 0 {
			return pgerr.New(pgerr.InvalidParameterValue, "CACHE (%d) must be greater than zero", v)
		}
		def.Cache = v
		st.LogCnt = 0
	} else if isInit {
		def.Cache = 1
	}
	return nil
}

// seqOptInt is defGetInt64: an option's numeric argument as a bigint.
func seqOptInt(de *pg.DefElem) (int64, error) {
	switch {
	case de.Arg.GetInteger() != nil:
		return int64(de.Arg.GetInteger().Ival), nil
	case de.Arg.GetFloat() != nil:
		text := de.Arg.GetFloat().Fval
		v, err := strconv.ParseInt(text, 10, 64)
		if err == nil {
			return v, nil
		}
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, pgerr.New(pgerr.NumericValueOutOfRange, "value \"%s\" is out of range for type bigint", text)
		}
		return 0, pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type bigint: \"%s\"", text)
	}
	return 0, pgerr.New(pgerr.SyntaxError, "%s requires a numeric value", de.Defname)
}

// seqRangeVar checks a sequence name's schema (lockd has only public).
func seqRangeVar(rv *pg.RangeVar) error {
	if rv.Schemaname != "" && rv.Schemaname != catalog.SequenceNamespaceName {
		return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", rv.Schemaname)
	}
	return nil
}

func (s *Utility) CompileCreateSequence(cs *pg.CreateSeqStmt, st *plan.Stmt) error {
	rv := cs.Sequence
	if rv.Relpersistence == "t" {
		return pgerr.NotSupported("temporary sequences are not supported")
	}
	if err := seqRangeVar(rv); err != nil {
		return err
	}
	name, unlogged, options, ifNotExists := rv.Relname, rv.Relpersistence == "u", cs.Options, cs.IfNotExists
	st.Tag = "CREATE SEQUENCE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if _, exists := s.Cat().ByName[name]; exists && ifNotExists {
			s.Notice(pgerr.SeverityNotice, pgerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", name))
			return "CREATE SEQUENCE", nil
		}
		def := &catalog.SequenceDef{Name: name, Unlogged: unlogged}
		var state catalog.SeqState
		opts, err := s.seqParams(options, false, true, def, &state, 0)
		if err != nil {
			return "", err
		}
		if _, exists := s.Cat().ByName[name]; exists {
			return "", pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", name)
		}
		if err := s.createSequence(ec, def, state); err != nil {
			return "", err
		}
		if opts.ownedBy != nil {
			if err := s.setOwnedBy(ec, def, opts.ownedBy); err != nil {
				return "", err
			}
			s.AddCatOp(&catalog.CatOp{Kind: "setseq", Seq: def})
		}
		return "CREATE SEQUENCE", nil
	}
	return nil
}

// createSequence makes a new sequence of def (its OID and storage are
// assigned here) with the initial state st, locked AccessExclusiveLock as
// a new relation is.
func (s *Utility) createSequence(ec *expr.EvalCtx, def *catalog.SequenceDef, st catalog.SeqState) error {
	def.OID = s.Catalog.AllocOID()
	def.RelFile = def.OID
	if err := s.LockNow(ec, def.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	if err := s.SeqLogged(def); err != nil { // fill_seq_with_data
		return err
	}
	s.Seqs.Create(def.RelFile, st)
	s.AddCatOp(&catalog.CatOp{Kind: "createseq", Seq: def, Relfile: def.RelFile})
	return nil
}

// setOwnedBy is process_owned_by: OWNED BY table.column or NONE, with
// the table locked AccessShareLock.
func (s *Utility) setOwnedBy(ec *expr.EvalCtx, def *catalog.SequenceDef, names []string) error {
	if def.Identity {
		owner := s.Cat().Tables[def.OwnedTable]
		table := ""
		if owner != nil {
			table = owner.Name
		}
		return pgerr.NotSupported("cannot change ownership of identity sequence").
			WithDetail(fmt.Sprintf("Sequence \"%s\" is linked to table \"%s\".", def.Name, table))
	}
	if len(names) == 1 {
		if names[0] != "none" {
			return pgerr.New(pgerr.SyntaxError, "invalid OWNED BY option").WithHint("Specify OWNED BY table.column or OWNED BY NONE.")
		}
		def.OwnedTable, def.OwnedCol = 0, 0
		return nil
	}
	rel, attr := names[:len(names)-1], names[len(names)-1]
	relName := rel[len(rel)-1]
	if len(rel) > 1 && rel[len(rel)-2] != catalog.SequenceNamespaceName {
		return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", rel[len(rel)-2])
	}
	oid, ok := s.Cat().ByName[relName]
	if !ok {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", strings.Join(rel, "."))
	}
	if err := s.LockNow(ec, oid, locks.AccessShareLock); err != nil {
		return err
	}
	cat := s.Cat()
	t := cat.Tables[oid]
	if t == nil {
		kind := "indexes"
		if cat.Sequences[oid] != nil {
			kind = "sequences"
		}
		return pgerr.New(pgerr.WrongObjectType, "sequence cannot be owned by relation \"%s\"", relName).
			WithDetail("This operation is not supported for " + kind + ".")
	}
	col := t.ColIndex(attr)
	if col < 0 {
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", attr, t.Name)
	}
	def.OwnedTable, def.OwnedCol = t.OID, col+1
	return nil
}

func (s *Utility) CompileAlterSequence(as *pg.AlterSeqStmt, st *plan.Stmt) error {
	rv := as.Sequence
	if err := seqRangeVar(rv); err != nil {
		return err
	}
	name, options, missingOK := rv.Relname, as.Options, as.MissingOk
	st.Tag = "ALTER SEQUENCE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		oid, ok := s.Cat().ByName[name]
		if !ok {
			if missingOK {
				s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("relation \"%s\" does not exist, skipping", name))
				return "ALTER SEQUENCE", nil
			}
			return "", pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
		}
		// ShareRowExclusiveLock: concurrent nextval calls (RowExclusiveLock)
		// wait, so none is lost to the new storage
		if err := s.LockNow(ec, oid, locks.ShareRowExclusiveLock); err != nil {
			return "", err
		}
		elm, q, data, err := funcs.SeqOpen(&s.Backend, ec, oid)
		if err != nil {
			return "", err
		}
		data.Lw.Acquire(s.Proc, locks.LWExclusive)
		state := data.St
		data.Lw.Release(s.Proc)
		nd := *q
		opts, err := s.seqParams(options, false, false, &nd, &state, 0)
		if err != nil {
			return "", err
		}
		op := &catalog.CatOp{Kind: "setseq", Seq: &nd}
		if opts.rewrite {
			if err := s.SeqLogged(&nd); err != nil {
				return "", err
			}
			nd.RelFile = s.Catalog.AllocOID()
			s.Seqs.Create(nd.RelFile, state)
			op.Relfile, op.OldFile = nd.RelFile, q.RelFile
		}
		elm.Cached = elm.Last // forget values cached from the old state
		if opts.ownedBy != nil {
			if err := s.setOwnedBy(ec, &nd, opts.ownedBy); err != nil {
				s.Seqs.Drop(op.Relfile)
				return "", err
			}
		}
		s.AddCatOp(op)
		return "ALTER SEQUENCE", nil
	}
	return nil
}

func (s *Utility) CompileDropSequence(d *pg.DropStmt, st *plan.Stmt) error {
	var names []string
	for _, o := range d.Objects {
		schema, name := analyze.QualifiedName(o.GetList().GetItems())
		if schema != "" && schema != catalog.SequenceNamespaceName {
			return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", schema)
		}
		names = append(names, name)
	}
	missingOK, cascade := d.MissingOk, d.Behavior == pg.DropBehavior_DROP_CASCADE
	st.Tag = "DROP SEQUENCE"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		// RemoveRelations: every name is found and locked first, then the
		// dependencies of the whole set are checked
		var drop []uint32
		for _, name := range names {
			if err := s.wrongDropKind(name, "sequence"); err != nil {
				return "", err
			}
			q := s.Cat().Sequence(name)
			if q == nil {
				if missingOK {
					s.Notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("sequence \"%s\" does not exist, skipping", name))
					continue
				}
				return "", pgerr.New(pgerr.UndefinedTable, "sequence \"%s\" does not exist", name)
			}
			if err := s.LockNow(ec, q.OID, locks.AccessExclusiveLock); err != nil {
				return "", err
			}
			drop = append(drop, q.OID)
		}
		orig := ""
		if len(names) == 1 {
			orig = "sequence " + types.QuoteIdent(names[0])
		}
		if err := s.dropSequences(ec, drop, nil, cascade, orig); err != nil {
			return "", err
		}
		return "DROP SEQUENCE", nil
	}
	return nil
}

// wrongDropKind is DropErrorMsgWrongType: DROP <kind> naming a relation of
// another kind (for the kinds sequences are confused with).
func (s *Utility) wrongDropKind(name, kind string) error {
	got := s.Cat().RelationKind(name)
	if got == "" || got == kind || (got != "sequence" && kind != "sequence") {
		return nil
	}
	article := "a"
	if kind == "index" {
		article = "an"
	}
	return pgerr.New(pgerr.WrongObjectType, "\"%s\" is not %s %s", name, article, kind).
		WithHint(fmt.Sprintf("Use DROP %s to remove %s %s.", strings.ToUpper(got), map[string]string{"index": "an", "table": "a", "sequence": "a"}[got], got))
}

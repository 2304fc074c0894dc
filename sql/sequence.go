package sql

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
)

// Sequences: their catalog entries (pg_sequence plus the column that owns
// them) and CREATE / ALTER / DROP SEQUENCE, following PostgreSQL 15's
// commands/sequence.c. A sequence's definition is transactional, like
// every catalog change; its value is not (seqstore.go keeps it, seqfuncs.go
// changes it). ALTER SEQUENCE that changes how values are generated, and
// RESTART, give the sequence new storage (a new RelFile holding the new
// state), as PostgreSQL gives it a new relfilenode: a rollback goes back to
// the old storage and so to the old state.

// codeSequenceLimit is sequence_generator_limit_exceeded.
const codeSequenceLimit = "2200H"

// codeGeneratedAlways is generated_always (identity columns).
const codeGeneratedAlways = "428C9"

const (
	sequenceLogVals       = 32 // SEQ_LOG_VALS: values logged ahead by one nextval
	sequenceNamespaceName = "public"
)

// SequenceDef is a sequence: its pg_sequence row, its storage and the
// column that owns it (pg_depend: 'a' for OWNED BY and serial columns, 'i'
// for identity columns). A SequenceDef in a published catalog is never
// changed; ALTER SEQUENCE replaces it.
type SequenceDef struct {
	OID       uint32 `json:"oid"`
	Name      string `json:"name"`
	RelFile   uint32 `json:"relfile"` // key of its state in the engine's sequence store
	TypeOID   uint32 `json:"type"`    // seqtypid: int2, int4 or int8
	Start     int64  `json:"start"`
	Increment int64  `json:"increment"`
	Max       int64  `json:"max"`
	Min       int64  `json:"min"`
	Cache     int64  `json:"cache"`
	Cycle     bool   `json:"cycle,omitempty"`
	Unlogged  bool   `json:"unlogged,omitempty"`
	// OwnedTable and OwnedCol (1-based) name the owning column; 0: none.
	OwnedTable uint32 `json:"owned_table,omitempty"`
	OwnedCol   int    `json:"owned_col,omitempty"`
	Identity   bool   `json:"identity,omitempty"` // the owner is an identity column
}

// applySequence applies a createseq, setseq or dropseq operation.
func (c *catalogState) applySequence(op *catOp) {
	switch op.kind {
	case "createseq", "setseq":
		if c.Sequences == nil {
			c.Sequences = map[uint32]*SequenceDef{}
		}
		q := *op.seq
		c.Sequences[q.OID] = &q
	case "dropseq":
		delete(c.Sequences, op.oid)
	}
}

// sequence finds a sequence by name.
func (c *catalogState) sequence(name string) *SequenceDef {
	if oid, ok := c.byName[name]; ok {
		return c.Sequences[oid]
	}
	return nil
}

// ownedSequences lists the sequences owned by columns of table, in OID
// order.
func (c *catalogState) ownedSequences(table uint32) []*SequenceDef {
	var out []*SequenceDef
	for _, q := range c.Sequences {
		if q.OwnedTable == table {
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// relationKind names what a relation name refers to, for errors about the
// wrong kind of relation: "table", "index", "sequence" or "" (none).
func (c *catalogState) relationKind(name string) string {
	oid, ok := c.byName[name]
	switch {
	case !ok:
		return ""
	case c.Sequences[oid] != nil:
		return "sequence"
	case c.Indexes[oid] != nil:
		return "index"
	}
	return "table"
}

// seqTypeLimits are the bounds of a sequence data type.
func seqTypeLimits(oid uint32) (lo, hi int64) {
	switch oid {
	case OIDInt2:
		return math.MinInt16, math.MaxInt16
	case OIDInt4:
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
func (s *utility) seqParams(options []*pg.Node, forIdentity, isInit bool, def *SequenceDef, st *seqState, asType uint32) (seqOptions, error) {
	var o seqOptions
	var asOpt, start, restart, incr, maxv, minv, cache, cycle *pg.DefElem
	seen := func(p **pg.DefElem, de *pg.DefElem) error {
		if *p != nil {
			return posErr(pgerr.New(pgerr.SyntaxError, "conflicting or redundant options"), de.Location)
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
			err = seen(&asOpt, de)
		case "increment":
			err = seen(&incr, de)
		case "start":
			err = seen(&start, de)
		case "restart":
			err = seen(&restart, de)
		case "maxvalue":
			err = seen(&maxv, de)
		case "minvalue":
			err = seen(&minv, de)
		case "cache":
			err = seen(&cache, de)
		case "cycle":
			err = seen(&cycle, de)
		case "owned_by":
			if o.ownedBy != nil {
				return o, posErr(pgerr.New(pgerr.SyntaxError, "conflicting or redundant options"), de.Location)
			}
			for _, item := range de.Arg.GetList().GetItems() {
				o.ownedBy = append(o.ownedBy, nodeName(item))
			}
		case "sequence_name":
			if !forIdentity {
				return o, posErr(pgerr.New(pgerr.SyntaxError, "invalid sequence option SEQUENCE NAME"), de.Location)
			}
			for _, item := range de.Arg.GetList().GetItems() {
				o.seqName = append(o.seqName, nodeName(item))
			}
		default:
			return o, pgerr.New(pgerr.InternalError, "option \"%s\" not recognized", de.Defname)
		}
		if err != nil {
			return o, err
		}
	}
	if isInit {
		st.LogCnt = 0
	}
	// AS type
	resetMax, resetMin := false, false
	switch {
	case asOpt != nil:
		typ, err := newAnalyzer(&s.Backend, nil).typeName(asOpt.Arg.GetTypeName())
		if err != nil {
			return o, err
		}
		if typ.OID != OIDInt2 && typ.OID != OIDInt4 && typ.OID != OIDInt8 {
			if forIdentity {
				return o, pgerr.New(pgerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
			}
			return o, pgerr.New(pgerr.InvalidParameterValue, "sequence type must be smallint, integer, or bigint")
		}
		if !isInit {
			// bounds that were the old type's limits follow the type
			lo, hi := seqTypeLimits(def.TypeOID)
			resetMax, resetMin = def.Max == hi, def.Min == lo
		}
		def.TypeOID = typ.OID
	case isInit && asType != 0:
		if asType != OIDInt2 && asType != OIDInt4 && asType != OIDInt8 {
			return o, pgerr.New(pgerr.InvalidParameterValue, "identity column type must be smallint, integer, or bigint")
		}
		def.TypeOID = asType
	case isInit:
		def.TypeOID = OIDInt8
	}
	// INCREMENT BY
	if incr != nil {
		v, err := seqOptInt(incr)
		if err != nil {
			return o, err
		}
		if v == 0 {
			return o, pgerr.New(pgerr.InvalidParameterValue, "INCREMENT must not be zero")
		}
		def.Increment = v
		st.LogCnt = 0
	} else if isInit {
		def.Increment = 1
	}
	// CYCLE
	if cycle != nil {
		def.Cycle = cycle.Arg.GetBoolean().GetBoolval()
		st.LogCnt = 0
	} else if isInit {
		def.Cycle = false
	}
	lo, hi := seqTypeLimits(def.TypeOID)
	typeName := formatType(def.TypeOID, -1)
	// MAXVALUE (no argument: NO MAXVALUE)
	if maxv != nil && maxv.Arg != nil {
		v, err := seqOptInt(maxv)
		if err != nil {
			return o, err
		}
		def.Max = v
		st.LogCnt = 0
	} else if isInit || maxv != nil || resetMax {
		if def.Increment > 0 || resetMax {
			def.Max = hi
		} else {
			def.Max = -1
		}
		st.LogCnt = 0
	}
	if def.Max < lo || def.Max > hi {
		return o, pgerr.New(pgerr.InvalidParameterValue, "MAXVALUE (%d) is out of range for sequence data type %s", def.Max, typeName)
	}
	// MINVALUE (no argument: NO MINVALUE)
	if minv != nil && minv.Arg != nil {
		v, err := seqOptInt(minv)
		if err != nil {
			return o, err
		}
		def.Min = v
		st.LogCnt = 0
	} else if isInit || minv != nil || resetMin {
		if def.Increment < 0 || resetMin {
			def.Min = lo
		} else {
			def.Min = 1
		}
		st.LogCnt = 0
	}
	if def.Min < lo || def.Min > hi {
		return o, pgerr.New(pgerr.InvalidParameterValue, "MINVALUE (%d) is out of range for sequence data type %s", def.Min, typeName)
	}
	if def.Min >= def.Max {
		return o, pgerr.New(pgerr.InvalidParameterValue, "MINVALUE (%d) must be less than MAXVALUE (%d)", def.Min, def.Max)
	}
	// START WITH
	if start != nil {
		v, err := seqOptInt(start)
		if err != nil {
			return o, err
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
		return o, pgerr.New(pgerr.InvalidParameterValue, "START value (%d) cannot be less than MINVALUE (%d)", def.Start, def.Min)
	}
	if def.Start > def.Max {
		return o, pgerr.New(pgerr.InvalidParameterValue, "START value (%d) cannot be greater than MAXVALUE (%d)", def.Start, def.Max)
	}
	// RESTART [WITH]
	if restart != nil {
		if restart.Arg != nil {
			v, err := seqOptInt(restart)
			if err != nil {
				return o, err
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
	// the restart value, or the current value when the bounds moved
	if st.LastValue < def.Min {
		return o, pgerr.New(pgerr.InvalidParameterValue, "RESTART value (%d) cannot be less than MINVALUE (%d)", st.LastValue, def.Min)
	}
	if st.LastValue > def.Max {
		return o, pgerr.New(pgerr.InvalidParameterValue, "RESTART value (%d) cannot be greater than MAXVALUE (%d)", st.LastValue, def.Max)
	}
	// CACHE
	if cache != nil {
		v, err := seqOptInt(cache)
		if err != nil {
			return o, err
		}
		if v <= 0 {
			return o, pgerr.New(pgerr.InvalidParameterValue, "CACHE (%d) must be greater than zero", v)
		}
		def.Cache = v
		st.LogCnt = 0
	} else if isInit {
		def.Cache = 1
	}
	return o, nil
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
	if rv.Schemaname != "" && rv.Schemaname != sequenceNamespaceName {
		return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", rv.Schemaname)
	}
	return nil
}

func (s *utility) compileCreateSequence(cs *pg.CreateSeqStmt, st *Stmt) error {
	rv := cs.Sequence
	if rv.Relpersistence == "t" {
		return pgerr.NotSupported("temporary sequences are not supported")
	}
	if err := seqRangeVar(rv); err != nil {
		return err
	}
	name, unlogged, options, ifNotExists := rv.Relname, rv.Relpersistence == "u", cs.Options, cs.IfNotExists
	st.Tag = "CREATE SEQUENCE"
	st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
		if _, exists := s.cat().byName[name]; exists && ifNotExists {
			s.notice(pgerr.SeverityNotice, pgerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", name))
			return "CREATE SEQUENCE", nil
		}
		def := &SequenceDef{Name: name, Unlogged: unlogged}
		var state seqState
		opts, err := s.seqParams(options, false, true, def, &state, 0)
		if err != nil {
			return "", err
		}
		if _, exists := s.cat().byName[name]; exists {
			return "", pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", name)
		}
		if err := s.createSequence(ec, def, state); err != nil {
			return "", err
		}
		if opts.ownedBy != nil {
			if err := s.setOwnedBy(ec, def, opts.ownedBy); err != nil {
				return "", err
			}
			s.addCatOp(&catOp{kind: "setseq", seq: def})
		}
		return "CREATE SEQUENCE", nil
	}
	return nil
}

// createSequence makes a new sequence of def (its OID and storage are
// assigned here) with the initial state st, locked AccessExclusiveLock as
// a new relation is.
func (s *utility) createSequence(ec *evalCtx, def *SequenceDef, st seqState) error {
	def.OID = s.catalog.allocOID()
	def.RelFile = def.OID
	if err := s.lockNow(ec, def.OID, locks.AccessExclusiveLock); err != nil {
		return err
	}
	if err := s.seqLogged(def); err != nil { // fill_seq_with_data
		return err
	}
	s.seqs.create(def.RelFile, st)
	s.addCatOp(&catOp{kind: "createseq", seq: def, relfile: def.RelFile})
	return nil
}

// seqLogged gives the transaction an xid where PostgreSQL WAL-logs a
// sequence change (GetTopTransactionId in sequence.c): its commit then
// flushes the log. Unlogged sequences are not logged.
func (s *Backend) seqLogged(def *SequenceDef) error {
	if def.Unlogged {
		return nil
	}
	_, err := s.txn.AssignTopXid()
	return err
}

// setOwnedBy is process_owned_by: OWNED BY table.column or NONE, with
// the table locked AccessShareLock.
func (s *utility) setOwnedBy(ec *evalCtx, def *SequenceDef, names []string) error {
	if def.Identity {
		owner := s.cat().Tables[def.OwnedTable]
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
	if len(rel) > 1 && rel[len(rel)-2] != sequenceNamespaceName {
		return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", rel[len(rel)-2])
	}
	oid, ok := s.cat().byName[relName]
	if !ok {
		return pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", strings.Join(rel, "."))
	}
	if err := s.lockNow(ec, oid, locks.AccessShareLock); err != nil {
		return err
	}
	cat := s.cat()
	t := cat.Tables[oid]
	if t == nil {
		kind := "indexes"
		if cat.Sequences[oid] != nil {
			kind = "sequences"
		}
		return pgerr.New(pgerr.WrongObjectType, "sequence cannot be owned by relation \"%s\"", relName).
			WithDetail("This operation is not supported for " + kind + ".")
	}
	col := t.colIndex(attr)
	if col < 0 {
		return pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", attr, t.Name)
	}
	def.OwnedTable, def.OwnedCol = t.OID, col+1
	return nil
}

func (s *utility) compileAlterSequence(as *pg.AlterSeqStmt, st *Stmt) error {
	rv := as.Sequence
	if err := seqRangeVar(rv); err != nil {
		return err
	}
	name, options, missingOK := rv.Relname, as.Options, as.MissingOk
	st.Tag = "ALTER SEQUENCE"
	st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
		oid, ok := s.cat().byName[name]
		if !ok {
			if missingOK {
				s.notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("relation \"%s\" does not exist, skipping", name))
				return "ALTER SEQUENCE", nil
			}
			return "", pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name)
		}
		// ShareRowExclusiveLock: concurrent nextval calls (RowExclusiveLock)
		// wait, so none is lost to the new storage
		if err := s.lockNow(ec, oid, locks.ShareRowExclusiveLock); err != nil {
			return "", err
		}
		elm, q, data, err := seqOpen(&s.Backend, ec, oid)
		if err != nil {
			return "", err
		}
		data.lw.Acquire(s.proc, locks.LWExclusive)
		state := data.st
		data.lw.Release(s.proc)
		nd := *q
		opts, err := s.seqParams(options, false, false, &nd, &state, 0)
		if err != nil {
			return "", err
		}
		op := &catOp{kind: "setseq", seq: &nd}
		if opts.rewrite {
			if err := s.seqLogged(&nd); err != nil {
				return "", err
			}
			nd.RelFile = s.catalog.allocOID()
			s.seqs.create(nd.RelFile, state)
			op.relfile, op.oldFile = nd.RelFile, q.RelFile
		}
		elm.cached = elm.last // forget values cached from the old state
		if opts.ownedBy != nil {
			if err := s.setOwnedBy(ec, &nd, opts.ownedBy); err != nil {
				s.seqs.drop(op.relfile)
				return "", err
			}
		}
		s.addCatOp(op)
		return "ALTER SEQUENCE", nil
	}
	return nil
}

func (s *utility) compileDropSequence(d *pg.DropStmt, st *Stmt) error {
	var names []string
	for _, o := range d.Objects {
		schema, name := qualifiedName(o.GetList().GetItems())
		if schema != "" && schema != sequenceNamespaceName {
			return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", schema)
		}
		names = append(names, name)
	}
	missingOK, cascade := d.MissingOk, d.Behavior == pg.DropBehavior_DROP_CASCADE
	st.Tag = "DROP SEQUENCE"
	st.run = func(ec *evalCtx, _ func([]Datum) error) (string, error) {
		// RemoveRelations: every name is found and locked first, then the
		// dependencies of the whole set are checked
		var drop []uint32
		for _, name := range names {
			if err := s.wrongDropKind(name, "sequence"); err != nil {
				return "", err
			}
			q := s.cat().sequence(name)
			if q == nil {
				if missingOK {
					s.notice(pgerr.SeverityNotice, "00000", fmt.Sprintf("sequence \"%s\" does not exist, skipping", name))
					continue
				}
				return "", pgerr.New(pgerr.UndefinedTable, "sequence \"%s\" does not exist", name)
			}
			if err := s.lockNow(ec, q.OID, locks.AccessExclusiveLock); err != nil {
				return "", err
			}
			drop = append(drop, q.OID)
		}
		orig := ""
		if len(names) == 1 {
			orig = "sequence " + quoteIdent(names[0])
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
func (s *utility) wrongDropKind(name, kind string) error {
	got := s.cat().relationKind(name)
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

package analyze

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

func IsUnknown(e expr.Expr) bool { return e.Type().OID == types.OIDUnknown || e.Type().OID == 0 }

// coerceUnknown gives an unknown literal or parameter the type t.
func (a *Analyzer) CoerceUnknown(e expr.Expr, t types.Type) (expr.Expr, error) {
	switch x := e.(type) {
	case *expr.ParamExpr:
		if (*a.params)[x.N].OID == 0 || (*a.params)[x.N].OID == types.OIDUnknown {
			(*a.params)[x.N] = t
		}
		return a.CastTo(x, t, false)
	case *expr.ConstExpr:
		if x.D.Null {
			return &expr.ConstExpr{T: t, D: types.NullDatum}, nil
		}
		a.noteFold(t)
		d, err := types.ParseText(t, x.D.S, a.Fold.FormatCtx())
		if err != nil {
			return nil, err
		}
		return &expr.ConstExpr{T: t, D: d}, nil
	}
	return a.CastTo(e, t, false)
}

// noteFold records that a constant of type t was folded at analysis time.
// Date and time values can depend on the clock ('now') and the session's
// TimeZone, so a plan holding one must not be reused from a cache.
func (a *Analyzer) noteFold(t types.Type) {
	if types.CategoryOf(t) == types.CatDatetime || t.OID == types.OIDInterval {
		a.S.FoldedVolatile = true
	}
}

// castTo converts e to t, folding constants.
func (a *Analyzer) CastTo(e expr.Expr, t types.Type, explicit bool) (expr.Expr, error) {
	from := e.Type()
	if from.OID == t.OID && (t.Mod < 0 || from.Mod == t.Mod) {
		return e, nil
	}
	if from.OID == types.OIDUnknown || from.OID == 0 {
		if p, ok := e.(*expr.ParamExpr); ok {
			(*a.params)[p.N] = t
			return p, nil
		}
	}
	if c, ok := e.(*expr.ConstExpr); ok {
		if c.D.Null {
			return &expr.ConstExpr{T: t, D: types.NullDatum}, nil
		}
		a.noteFold(t)
		a.noteFold(from)
		d, err := types.CastDatum(a.Fold.FormatCtx(), c.D, from, t, explicit)
		if err != nil {
			return nil, err
		}
		return &expr.ConstExpr{T: t, D: d}, nil
	}
	if !Castable(from, t) {
		return nil, pgerr.New(pgerr.CannotCoerce, "cannot cast type %s to %s", from.Name, t.Name)
	}
	return &expr.CastExpr{Arg: e, T: t, Explicit: explicit}, nil
}

func Castable(from, to types.Type) bool {
	if fe, ok := types.ElemOf(from); ok {
		if te, ok := types.ElemOf(to); ok {
			return Castable(fe, te)
		}
	}
	fc, tc := types.CategoryOf(from), types.CategoryOf(to)
	switch {
	case tc == types.CatString || fc == types.CatString || fc == types.CatUnknown:
		return true
	case (fc == types.CatInt || fc == types.CatFloat || fc == types.CatNumeric) && (tc == types.CatInt || tc == types.CatFloat || tc == types.CatNumeric):
		return true
	case fc == types.CatDatetime && tc == types.CatDatetime:
		return true
	case from.OID == types.OIDInt4 && tc == types.CatBool, fc == types.CatBool && to.OID == types.OIDInt4:
		return true
	}
	return from.OID == to.OID
}

// assignable reports whether from converts to to in an assignment
// (INSERT and UPDATE values, EXECUTE's parameters): PostgreSQL's implicit
// and assignment casts, which leave out the explicit-only ones castable
// also allows (text to a number, boolean to integer and back).
func Assignable(from, to types.Type) bool {
	if fe, ok := types.ElemOf(from); ok {
		if te, ok := types.ElemOf(to); ok {
			return Assignable(fe, te)
		}
	}
	fc, tc := types.CategoryOf(from), types.CategoryOf(to)
	switch {
	case fc == types.CatUnknown || tc == types.CatString:
		return true // string types take any value's text (an I/O cast)
	case fc == types.CatString:
		return false
	case from.OID == types.OIDInt4 && tc == types.CatBool, fc == types.CatBool && to.OID == types.OIDInt4:
		return false
	}
	return Castable(from, to)
}

// finishParams gives still-untyped parameters the type text, as
// PostgreSQL resolves unknown to text in output positions.
func FinishParams(params []types.Type) {
	for i := range params {
		if params[i].OID == 0 || params[i].OID == types.OIDUnknown {
			params[i] = types.TypeText
		}
	}
}

// resolveOutput turns unknown-typed output expressions into text.
func (a *Analyzer) ResolveOutput(e expr.Expr) (expr.Expr, error) {
	if IsUnknown(e) && !a.KeepUnknown {
		return a.CoerceUnknown(e, types.TypeText)
	}
	return e, nil
}

// asBool requires a boolean (resolving unknowns to bool).
func (a *Analyzer) AsBool(e expr.Expr, ctxName string, loc int32) (expr.Expr, error) {
	if IsUnknown(e) {
		return a.CoerceUnknown(e, types.TypeBool)
	}
	if e.Type().OID != types.OIDBool {
		return nil, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", ctxName, e.Type().Name), loc)
	}
	return e, nil
}

func (a *Analyzer) toText(e expr.Expr) (expr.Expr, error) {
	if IsUnknown(e) {
		return a.CoerceUnknown(e, types.TypeText)
	}
	if types.CategoryOf(e.Type()) == types.CatString {
		if e.Type().OID == types.OIDBpchar {
			return a.CastTo(e, types.TypeText, false)
		}
		return e, nil
	}
	return a.CastTo(e, types.TypeText, false)
}

// unify resolves a list of expressions to one common type (CASE, IN,
// COALESCE, VALUES rules: unknowns take the type of the others; all
// unknown → text).
func (a *Analyzer) Unify(items []expr.Expr, ctxName string, loc int32) ([]expr.Expr, types.Type, error) {
	return a.UnifyAt(items, nil, ctxName, loc)
}

// unifyAt is unify with the source position of each item (-1: unknown),
// so an error points at the item that caused it.
func (a *Analyzer) UnifyAt(items []expr.Expr, locs []int32, ctxName string, loc int32) ([]expr.Expr, types.Type, error) {
	at := func(i int) int32 {
		if i < len(locs) && locs[i] >= 0 {
			return locs[i]
		}
		return loc
	}
	// PostgreSQL's select_common_type: the first known type, replaced by
	// a later one only when the earlier converts to it implicitly and not
	// the other way (int4 → numeric → float8, date → timestamp →
	// timestamptz); string types keep the first. Differing typmods of the
	// chosen type are dropped.
	var t types.Type
	for i, e := range items {
		if IsUnknown(e) {
			continue
		}
		et := e.Type()
		if t.OID == 0 {
			t = et
			continue
		}
		if t.OID == et.OID {
			if t.Mod != et.Mod {
				t.Mod = -1
			}
			continue
		}
		if c, ok := expr.NumericCommon(t, et); ok {
			t = c
			continue
		}
		if types.CategoryOf(t) == types.CatString && types.CategoryOf(et) == types.CatString {
			t.Mod = -1
			continue
		}
		if types.CategoryOf(t) == types.CatDatetime && types.CategoryOf(et) == types.CatDatetime {
			rank := map[uint32]int{types.OIDDate: 1, types.OIDTimestamp: 2, types.OIDTimestamptz: 3}
			if rank[et.OID] > rank[t.OID] {
				t = et
			}
			continue
		}
		if types.IsOIDLike(t) && types.IsOIDLike(et) {
			t = types.TypeOid
			continue
		}
		return nil, types.Type{}, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "%s types %s and %s cannot be matched", ctxName, t.Name, et.Name), at(i))
	}
	if t.OID == 0 {
		if a.KeepUnknown {
			return items, types.TypeUnknown, nil // a set operation's branch: the other branches decide
		}
		t = types.TypeText
	}
	out := make([]expr.Expr, len(items))
	for i, e := range items {
		var err error
		if IsUnknown(e) {
			out[i], err = a.CoerceUnknown(e, t)
		} else {
			out[i], err = a.CastTo(e, t, false)
		}
		if err != nil {
			return nil, types.Type{}, expr.PosErr(pgerr.From(err), at(i))
		}
	}
	return out, t, nil
}

func (a *Analyzer) commonArgs(nodes []*pg.Node, ctxName string, loc int32) ([]expr.Expr, types.Type, error) {
	var items []expr.Expr
	var locs []int32
	for _, n := range nodes {
		e, err := a.Expr(n)
		if err != nil {
			return nil, types.Type{}, err
		}
		items = append(items, e)
		locs = append(locs, ExprLocation(n))
	}
	return a.UnifyAt(items, locs, ctxName, loc)
}

// typeName resolves a TypeName node.
func (a *Analyzer) TypeName(tn *pg.TypeName) (types.Type, error) {
	_, name := QualifiedName(tn.Names)
	name = strings.ToLower(name)
	var mods []int32
	for _, m := range tn.Typmods {
		c := m.GetAConst()
		if c == nil {
			return types.Type{}, expr.PosErr(pgerr.New(pgerr.SyntaxError, "type modifiers must be simple constants or identifiers"), tn.Location)
		}
		iv, ok := c.Val.(*pg.A_Const_Ival)
		if !ok {
			return types.Type{}, expr.PosErr(pgerr.New(pgerr.SyntaxError, "type modifiers must be simple constants or identifiers"), tn.Location)
		}
		mods = append(mods, iv.Ival.Ival)
	}
	t, ok := types.LookupType(name)
	if !ok {
		return types.Type{}, expr.PosErr(pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", name), tn.Location)
	}
	mod, err := typmodFor(t, mods)
	if err != nil {
		return types.Type{}, expr.PosErr(err.(*pgerr.Error), tn.Location)
	}
	t.Mod = mod
	if len(tn.ArrayBounds) > 0 {
		at, ok := types.ArrayOf(t)
		if !ok {
			return types.Type{}, pgerr.NotSupported("arrays of type %s are not supported", t.Name)
		}
		return at, nil
	}
	return t, nil
}

// typmodFor computes the typmod of t(mods...) as PostgreSQL's typmodin
// functions do.
func typmodFor(t types.Type, mods []int32) (int32, error) {
	switch t.OID {
	case types.OIDBpchar, types.OIDVarchar:
		if len(mods) == 0 {
			return -1, nil // (the grammar gives CHAR without a length its (1))
		}
		if len(mods) > 1 {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid type modifier")
		}
		if mods[0] < 1 {
			return 0, pgerr.New(pgerr.InvalidParameterValue, "length for type %s must be at least 1", map[uint32]string{types.OIDBpchar: "char", types.OIDVarchar: "varchar"}[t.OID])
		}
		return mods[0] + 4, nil
	case types.OIDNumeric:
		switch len(mods) {
		case 0:
			return -1, nil
		case 1, 2:
			p, sc := mods[0], int32(0)
			if len(mods) == 2 {
				sc = mods[1]
			}
			if p < 1 || p > 1000 {
				return 0, pgerr.New(pgerr.InvalidParameterValue, "NUMERIC precision %d must be between 1 and 1000", p)
			}
			if sc < -1000 || sc > 1000 {
				return 0, pgerr.New(pgerr.InvalidParameterValue, "NUMERIC scale %d must be between -1000 and 1000", sc)
			}
			return (p<<16 | sc&0xffff) + 4, nil
		}
		return 0, pgerr.New(pgerr.InvalidParameterValue, "invalid NUMERIC type modifier")
	case types.OIDTimestamp, types.OIDTimestamptz, types.OIDInterval:
		if len(mods) == 1 && mods[0] >= 0 && mods[0] <= 6 {
			return mods[0], nil
		}
	}
	if len(mods) > 0 {
		return 0, pgerr.New(pgerr.SyntaxError, "type modifier is not allowed for type \"%s\"", t.Name)
	}
	return -1, nil
}

// collate compiles expr COLLATE name. lockd compares strings bytewise,
// which is the C collation; the collations it knows all mean that
// ordering here (see the README).
func (a *Analyzer) collate(cc *pg.CollateClause) (expr.Expr, error) {
	e, err := a.Expr(cc.Arg)
	if err != nil {
		return nil, err
	}
	_, name := QualifiedName(cc.Collname)
	switch name {
	case "default", "C", "POSIX", "ucs_basic", "C.UTF-8", "C.utf8":
	default:
		return nil, expr.PosErr(pgerr.New(pgerr.UndefinedObject, "collation \"%s\" for encoding \"UTF8\" does not exist", name), cc.Location)
	}
	if !IsUnknown(e) && types.CategoryOf(e.Type()) != types.CatString {
		return nil, expr.PosErr(pgerr.New(pgerr.DatatypeMismatch, "collations are not supported by type %s", e.Type().Name), cc.Location)
	}
	return e, nil
}

// assignTo converts e for storing into column c (an assignment cast).
func (a *Analyzer) AssignTo(e expr.Expr, c *catalog.ColumnDef) (expr.Expr, error) {
	t := c.Type()
	if IsUnknown(e) {
		return a.CoerceUnknown(e, t)
	}
	if e.Type().OID == t.OID && (t.Mod < 0 || e.Type().Mod == t.Mod) {
		return e, nil
	}
	if !Assignable(e.Type(), t) {
		return nil, pgerr.New(pgerr.DatatypeMismatch, "column \"%s\" is of type %s but expression is of type %s", c.Name, t.Name, e.Type().Name).
			WithHint("You will need to rewrite or cast the expression.")
	}
	return a.CastTo(e, t, false)
}

// literalError gives the error of assigning lit to column c the position
// of the literal (val) when the literal's text is no value of the column's
// type, as PostgreSQL's parser reports input function errors; a value too
// long for the column's type modifier fails later, at no position.
func (a *Analyzer) LiteralError(err error, lit expr.Expr, c *catalog.ColumnDef, val *pg.Node) error {
	k, ok := lit.(*expr.ConstExpr)
	pe, isPg := err.(*pgerr.Error)
	if !ok || !isPg || k.D.Null || !IsUnknown(k) {
		return err
	}
	base := c.Type()
	base.Mod = -1
	if _, perr := types.ParseText(base, k.D.S, a.Fold.FormatCtx()); perr == nil {
		return err
	}
	return expr.PosErr(pe, ExprLocation(val))
}

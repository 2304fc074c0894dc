package sql

import (
	"context"
	"encoding/binary"
	"math"
	"strings"
)

// The executor of one query level's FROM clause: a tree of plan nodes
// that write the columns of each combination of rows into a shared level
// row (see scope.go for its layout) and call their continuation once per
// combination. Nothing is copied per row but the columns themselves; the
// inner side of a join is materialised once per execution of the join
// unless it depends on the outer row (a LATERAL item or an index lookup
// keyed by outer columns), in which case it is re-run for each outer row
// (a nested loop, PostgreSQL's parameterised paths).

type planNode interface {
	// mask is the set of FROM items the node covers (bit i = item i).
	mask() uint64
	// span is the range of the level row the node writes.
	span() (lo, hi int)
}

// passes evaluates filter conjuncts on the level row.
func passes(ec *evalCtx, conds []expr, buf []Datum) (bool, error) {
	for _, c := range conds {
		v, err := c.eval(ec, buf)
		if err != nil {
			return false, err
		}
		if v.Null || v.I == 0 {
			return false, nil
		}
	}
	return true, nil
}

// leafNode scans one FROM item.
type leafNode struct {
	item    int
	src     rowSource
	off, n  int
	filters []expr
	// lateral: the item is a subquery that reads earlier items of this
	// level, so the level row is pushed as its outer row while it runs.
	lateral bool
}

func (l *leafNode) mask() uint64       { return 1 << uint(l.item) }
func (l *leafNode) span() (int, int)   { return l.off, l.off + l.n }
func (l *leafNode) dependsOnRow() bool { return l.lateral || paramScan(l.src) }

// levelScanner is a source whose scan reads the level row: a function in
// FROM with arguments over earlier items, or an index lookup keyed by
// them.
type levelScanner interface {
	readsLevel() bool
}

func paramScan(src rowSource) bool {
	ls, ok := src.(levelScanner)
	return ok && ls.readsLevel()
}

func (x *Executor) runLeaf(ec *evalCtx, l *leafNode, buf []Datum, fn func() error) error {
	dst := buf[l.off : l.off+l.n]
	each := func(row []Datum) error {
		copy(dst, row)
		if ok, err := passes(ec, l.filters, buf); err != nil || !ok {
			return err
		}
		return fn()
	}
	if l.lateral {
		ec.outer = append(ec.outer, buf)
		defer func() { ec.outer = ec.outer[:len(ec.outer)-1] }()
	}
	if _, ok := l.src.(levelScanner); ok {
		return x.scanLevel(ec, l.src, buf, each)
	}
	return x.scan(ec, l.src, each)
}

type joinKind uint8

const (
	joinInner joinKind = iota
	joinLeft
	joinRight
	joinFull
)

func (k joinKind) String() string {
	return [...]string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"}[k]
}

// joinNode joins two subtrees.
type joinNode struct {
	kind        joinKind
	left, right planNode
	cond        []expr // join conditions (ON), evaluated on the level row
	lkeys       []expr // hash keys over the left columns
	rkeys       []expr // hash keys over the right columns (same types)
	keyTypes    []Type
	filters     []expr // conditions applied to the join's output
	rescan      bool   // the right side depends on the left row
}

func (j *joinNode) mask() uint64 { return j.left.mask() | j.right.mask() }
func (j *joinNode) span() (int, int) {
	lo, _ := j.left.span()
	_, hi := j.right.span()
	return lo, hi
}

func setNull(buf []Datum, lo, hi int) {
	for i := lo; i < hi; i++ {
		buf[i] = NullDatum
	}
}

func (x *Executor) emitJoin(ec *evalCtx, j *joinNode, buf []Datum, fn func() error) error {
	if ok, err := passes(ec, j.filters, buf); err != nil || !ok {
		return err
	}
	return fn()
}

func (x *Executor) runJoin(ec *evalCtx, j *joinNode, buf []Datum, fn func() error) error {
	if j.rescan {
		return x.runNestedLoop(ec, j, buf, fn)
	}
	return x.runMaterialized(ec, j, buf, fn)
}

// runNested re-runs the right side for each left row (inner and left
// joins only; the planner never builds a rescanned right or full join).
func (x *Executor) runNestedLoop(ec *evalCtx, j *joinNode, buf []Datum, fn func() error) error {
	rlo, rhi := j.right.span()
	return x.runNode(ec, j.left, buf, func() error {
		matched := false
		err := x.runNode(ec, j.right, buf, func() error {
			if ok, err := passes(ec, j.cond, buf); err != nil || !ok {
				return err
			}
			if ok, err := x.joinKeysEqual(ec, j, buf); err != nil || !ok {
				return err
			}
			matched = true
			return x.emitJoin(ec, j, buf, fn)
		})
		if err != nil {
			return err
		}
		if !matched && j.kind == joinLeft {
			setNull(buf, rlo, rhi)
			return x.emitJoin(ec, j, buf, fn)
		}
		return nil
	})
}

func (x *Executor) joinKeysEqual(ec *evalCtx, j *joinNode, buf []Datum) (bool, error) {
	for i := range j.lkeys {
		l, err := j.lkeys[i].eval(ec, buf)
		if err != nil {
			return false, err
		}
		r, err := j.rkeys[i].eval(ec, buf)
		if err != nil {
			return false, err
		}
		if l.Null || r.Null {
			return false, nil
		}
		c, err := comparator(j.keyTypes[i])(l, r)
		if err != nil || c != 0 {
			return false, err
		}
	}
	return true, nil
}

// matRow is one materialised row of a join's inner side.
type matRow struct {
	vals    []Datum
	matched bool
}

// runMaterialized reads the inner side once (into a hash table when the
// join has equality keys) and streams the outer side past it. The outer
// side is the left for inner, left and full joins, the right for right
// joins.
func (x *Executor) runMaterialized(ec *evalCtx, j *joinNode, buf []Datum, fn func() error) error {
	outer, inner := j.left, j.right
	outerKeys, innerKeys := j.lkeys, j.rkeys
	if j.kind == joinRight {
		outer, inner = j.right, j.left
		outerKeys, innerKeys = j.rkeys, j.lkeys
	}
	ilo, ihi := inner.span()
	olo, ohi := outer.span()
	var rows []*matRow
	var table map[string][]*matRow
	hashed := len(innerKeys) > 0
	if hashed {
		table = map[string][]*matRow{}
	}
	var key []byte
	err := x.runNode(ec, inner, buf, func() error {
		r := &matRow{vals: append([]Datum(nil), buf[ilo:ihi]...)}
		if hashed {
			var ok bool
			var err error
			key, ok, err = x.joinHashKey(ec, j, key[:0], innerKeys, buf)
			if err != nil {
				return err
			}
			if !ok {
				// a NULL key matches nothing, but outer joins still
				// emit the row unmatched
				rows = append(rows, r)
				return nil
			}
			table[string(key)] = append(table[string(key)], r)
		}
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return err
	}
	err = x.runNode(ec, outer, buf, func() error {
		candidates := rows
		if hashed {
			var ok bool
			var err error
			key, ok, err = x.joinHashKey(ec, j, key[:0], outerKeys, buf)
			if err != nil {
				return err
			}
			candidates = nil
			if ok {
				candidates = table[string(key)]
			}
		}
		matched := false
		for _, r := range candidates {
			copy(buf[ilo:ihi], r.vals)
			if ok, err := passes(ec, j.cond, buf); err != nil {
				return err
			} else if !ok {
				continue
			}
			matched = true
			r.matched = true
			if err := x.emitJoin(ec, j, buf, fn); err != nil {
				return err
			}
		}
		if !matched && j.kind != joinInner {
			setNull(buf, ilo, ihi)
			return x.emitJoin(ec, j, buf, fn)
		}
		return nil
	})
	if err != nil || j.kind != joinFull {
		return err
	}
	setNull(buf, olo, ohi)
	for _, r := range rows {
		if r.matched {
			continue
		}
		copy(buf[ilo:ihi], r.vals)
		if err := x.emitJoin(ec, j, buf, fn); err != nil {
			return err
		}
	}
	return nil
}

// hashKey encodes the key values of the current row; ok is false when a
// key is NULL (it can equal nothing).
func (x *Executor) joinHashKey(ec *evalCtx, j *joinNode, dst []byte, keys []expr, buf []Datum) ([]byte, bool, error) {
	for i, k := range keys {
		v, err := k.eval(ec, buf)
		if err != nil {
			return nil, false, err
		}
		if v.Null {
			return dst, false, nil
		}
		dst = appendHashKey(dst, j.keyTypes[i], v)
	}
	return dst, true, nil
}

// appendHashKey encodes a value so that values equal under the type's
// comparison encode equally (numeric 1.0 = 1, bpchar ignores trailing
// blanks, -0 = 0).
func appendHashKey(dst []byte, t Type, v Datum) []byte {
	switch categoryOf(t) {
	case catInt, catBool, catDatetime:
		return binary.BigEndian.AppendUint64(dst, uint64(v.I))
	case catFloat:
		f := v.F
		if f == 0 {
			f = 0
		}
		if math.IsNaN(f) {
			f = math.NaN()
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(f))
	case catNumeric:
		n := mustNumeric(v.S)
		s := n.String()
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		if s == "-0" {
			s = "0"
		}
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		return append(dst, s...)
	}
	if t.OID == OIDInterval {
		return binary.BigEndian.AppendUint64(dst, uint64(v.I))
	}
	s := v.S
	if t.OID == OIDBpchar {
		s = trimBlanks(s)
	}
	if isArray(t) {
		s = string(appendText(nil, t, v, nil))
	}
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

// checkCancel returns the cancellation cause of a running statement.
func checkCancel(ec *evalCtx) error {
	if ec.ctx == nil {
		return nil
	}
	if err := ec.ctx.Err(); err != nil {
		return context.Cause(ec.ctx)
	}
	return nil
}

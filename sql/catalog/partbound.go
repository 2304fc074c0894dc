package catalog

import (
	"sort"

	"lockd/sql/types"
)

// Partition bounds and partition descriptors.
//
// A partition's bound (pg_class.relpartbound) is kept in its TableDef as
// a PartBound whose values are text in their type's output format, so the
// catalog file stays readable JSON. Every published catalogState derives,
// for each partitioned table, a partDesc (PostgreSQL's PartitionDesc and
// PartitionBoundInfo): the partitions in PostgreSQL's bound order (range:
// by lower bound; list: by smallest value, a NULL-only partition after
// those; hash: by modulus then remainder; the DEFAULT partition last) with
// the bound values parsed, which is what routing, pruning and the lock
// order of a scan use.

// PartBound is a partition's bound.
type PartBound struct {
	Default   bool         `json:"default,omitempty"`
	Modulus   int          `json:"modulus,omitempty"`   // hash
	Remainder int          `json:"remainder,omitempty"` // hash
	In        []BoundValue `json:"in,omitempty"`        // list
	From      []BoundValue `json:"from,omitempty"`      // range: one value per key column
	To        []BoundValue `json:"to,omitempty"`
	// Types are the type OIDs of the parent's key columns when the bound
	// was made (the bound's values are of these types).
	Types []uint32 `json:"types,omitempty"`
}

// BoundValue is one value of a bound.
type BoundValue struct {
	Kind int8   `json:"kind,omitempty"` // range: -1 MINVALUE, 1 MAXVALUE, 0 a value
	Null bool   `json:"null,omitempty"` // list: NULL
	Text string `json:"text,omitempty"` // the value in its type's text output (timestamptz in UTC)
}

const (
	RangeMin int8 = -1
	RangeMax int8 = 1
)

// Partitioning strategies as pg_partitioned_table.partstrat spells them.
const (
	PartRange = "r"
	PartList  = "l"
	PartHash  = "h"
)

// rbound is one column of a parsed range bound.
type rbound struct {
	kind int8
	d    types.Datum
}

// listValue is one non-NULL value of a list bound and the position in
// partDesc.parts of the partition that holds it.
type listValue struct {
	d    types.Datum
	part int
}

// partDesc is a partitioned table's partition descriptor. Immutable.
type PartDesc struct {
	oid      uint32
	Strategy string
	Key      []int        // key column positions
	Types    []types.Type // key column types
	Cmps     []func(a, b types.Datum) (int, error)
	Parts    []uint32 // partition OIDs in bound order, the default last
	Def      int      // position of the default partition in parts, or -1
	// range: for each non-default partition (positions 0..len(lo)-1)
	Lo, Hi [][]rbound
	// list: every non-NULL value, sorted; the NULL-accepting partition
	vals     []listValue
	NullPart int
	// hash: modulus and remainder per partition; greatest modulus
	Mods, Rems []int
	greatest   int
}

func newPartDesc(t *TableDef, kids []*TableDef) *PartDesc {
	d := &PartDesc{oid: t.OID, Strategy: t.PartStrategy, Key: t.PartKey, Def: -1, NullPart: -1}
	for _, k := range t.PartKey {
		typ := t.Cols[k].Type()
		d.Types = append(d.Types, typ)
		d.Cmps = append(d.Cmps, types.Comparator(typ))
	}
	var def *TableDef
	var rest []*TableDef
	for _, k := range kids {
		if k.Bound == nil || k.Bound.Default {
			def = k
		} else {
			rest = append(rest, k)
		}
	}
	sort.Slice(rest, func(i, j int) bool { return rest[i].OID < rest[j].OID })
	switch d.Strategy {
	case PartRange:
		type rp struct {
			t      *TableDef
			lo, hi []rbound
		}
		rps := make([]rp, len(rest))
		for i, k := range rest {
			rps[i] = rp{k, d.ParseRange(k.Bound.From), d.ParseRange(k.Bound.To)}
		}
		sort.SliceStable(rps, func(i, j int) bool { return d.CmpBounds(rps[i].lo, true, rps[j].lo, true) < 0 })
		for _, r := range rps {
			d.Parts = append(d.Parts, r.t.OID)
			d.Lo = append(d.Lo, r.lo)
			d.Hi = append(d.Hi, r.hi)
		}
	case PartList:
		type lv struct {
			d types.Datum
			t int // index into rest
		}
		var all []lv
		nullIdx := -1
		for i, k := range rest {
			for _, v := range k.Bound.In {
				if v.Null {
					nullIdx = i
					continue
				}
				all = append(all, lv{d.ParseValue(0, v.Text), i})
			}
		}
		sort.SliceStable(all, func(i, j int) bool { c, _ := d.Cmps[0](all[i].d, all[j].d); return c < 0 })
		pos := make([]int, len(rest))
		for i := range pos {
			pos[i] = -1
		}
		for _, v := range all {
			if pos[v.t] < 0 {
				pos[v.t] = len(d.Parts)
				d.Parts = append(d.Parts, rest[v.t].OID)
			}
			d.vals = append(d.vals, listValue{v.d, pos[v.t]})
		}
		if nullIdx >= 0 {
			if pos[nullIdx] < 0 {
				pos[nullIdx] = len(d.Parts)
				d.Parts = append(d.Parts, rest[nullIdx].OID)
			}
			d.NullPart = pos[nullIdx]
		}
	case PartHash:
		sort.SliceStable(rest, func(i, j int) bool {
			a, b := rest[i].Bound, rest[j].Bound
			if a.Modulus != b.Modulus {
				return a.Modulus < b.Modulus
			}
			return a.Remainder < b.Remainder
		})
		for _, k := range rest {
			d.Parts = append(d.Parts, k.OID)
			d.Mods = append(d.Mods, k.Bound.Modulus)
			d.Rems = append(d.Rems, k.Bound.Remainder)
			d.greatest = max(d.greatest, k.Bound.Modulus)
		}
	}
	if def != nil {
		d.Def = len(d.Parts)
		d.Parts = append(d.Parts, def.OID)
	}
	return d
}

func (d *PartDesc) ParseValue(col int, text string) types.Datum {
	v, err := types.ParseText(d.Types[col], text, nil)
	if err != nil {
		return types.NullDatum // cannot happen: the text was made by appendText
	}
	return v
}

func (d *PartDesc) ParseRange(vals []BoundValue) []rbound {
	out := make([]rbound, len(vals))
	for i, v := range vals {
		out[i].kind = v.Kind
		if v.Kind == 0 && i < len(d.Types) {
			out[i].d = d.ParseValue(i, v.Text)
		}
	}
	return out
}

// cmpBounds compares two range bounds as PostgreSQL's
// partition_rbound_cmp does: column by column, MINVALUE below and MAXVALUE
// above every value, nothing after an unbounded column counting; equal
// bounds order an exclusive upper bound before an inclusive lower one.
func (d *PartDesc) CmpBounds(a []rbound, aLower bool, b []rbound, bLower bool) int {
	c := 0
	for i := range a {
		if i >= len(b) {
			break
		}
		if a[i].kind != b[i].kind {
			if a[i].kind < b[i].kind {
				return -1
			}
			return 1
		}
		if a[i].kind != 0 {
			break
		}
		c, _ = d.Cmps[i](a[i].d, b[i].d)
		if c != 0 {
			return c
		}
	}
	if c == 0 && aLower != bLower {
		if aLower {
			return 1
		}
		return -1
	}
	return c
}

// cmpBoundKey compares bound b with a key (no NULLs): sign(b - key).
func (d *PartDesc) CmpBoundKey(b []rbound, key []types.Datum) int {
	for i := range b {
		switch b[i].kind {
		case RangeMin:
			return -1
		case RangeMax:
			return 1
		}
		if c, _ := d.Cmps[i](b[i].d, key[i]); c != 0 {
			return c
		}
	}
	return 0
}

// route finds the position in parts of the partition for a row with key
// values key, or -1 (get_partition_for_tuple).
func (d *PartDesc) Route(key []types.Datum) int {
	switch d.Strategy {
	case PartHash:
		return d.hashPartition(PartitionHash(d.Types, key))
	case PartList:
		if key[0].Null {
			if d.NullPart >= 0 {
				return d.NullPart
			}
			return d.Def
		}
		if p := d.ListLookup(key[0]); p >= 0 {
			return p
		}
		return d.Def
	}
	for _, k := range key {
		if k.Null { // a range partition holds no NULL key
			return d.Def
		}
	}
	// the last partition whose lower bound is <= key
	i := sort.Search(len(d.Lo), func(i int) bool { return d.CmpBoundKey(d.Lo[i], key) > 0 }) - 1
	if i >= 0 && d.CmpBoundKey(d.Hi[i], key) > 0 {
		return i
	}
	return d.Def
}

func (d *PartDesc) ListLookup(v types.Datum) int {
	i := sort.Search(len(d.vals), func(i int) bool { c, _ := d.Cmps[0](d.vals[i].d, v); return c >= 0 })
	if i < len(d.vals) {
		if c, _ := d.Cmps[0](d.vals[i].d, v); c == 0 {
			return d.vals[i].part
		}
	}
	return -1
}

// hashPartition maps a row hash to the partition whose remainder it
// leaves, or -1.
func (d *PartDesc) hashPartition(h uint64) int {
	for i := range d.Mods {
		if h%uint64(d.Mods[i]) == uint64(d.Rems[i]) {
			return i
		}
	}
	return -1
}

func PartitionKey(d *PartDesc, row []types.Datum, buf []types.Datum) []types.Datum {
	buf = buf[:0]
	for _, k := range d.Key {
		buf = append(buf, row[k])
	}
	return buf
}

// clipValue shortens a value shown in an error detail to 64 bytes plus
// "..." at a character boundary, as PostgreSQL's row descriptions do.
func ClipValue(v string) string {
	const maxField = 64
	if len(v) <= maxField {
		return v
	}
	n := maxField
	for n > 0 && v[n]&0xc0 == 0x80 {
		n--
	}
	return v[:n] + "..."
}

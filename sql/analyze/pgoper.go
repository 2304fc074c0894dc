package analyze

import (
	"lockd/sql/types"
)

// castByFunction reports whether PostgreSQL converts from to to with a
// cast function (a FuncExpr) rather than by relabelling or I/O.
func castByFunction(from, to types.Type) bool {
	if from.OID == to.OID {
		return true // a length coercion
	}
	if to.Mod >= 0 {
		return true // the length coercion is the outermost node
	}
	num := func(o uint32) bool {
		switch o {
		case types.OIDInt2, types.OIDInt4, types.OIDInt8, types.OIDFloat4, types.OIDFloat8, types.OIDNumeric:
			return true
		}
		return false
	}
	dt := func(o uint32) bool { return o == types.OIDDate || o == types.OIDTimestamp || o == types.OIDTimestamptz }
	switch {
	case num(from.OID) && num(to.OID), dt(from.OID) && dt(to.OID):
		return true
	case from.OID == types.OIDBpchar && (to.OID == types.OIDText || to.OID == types.OIDVarchar):
		return true
	}
	return false
}

// commonType is select_common_type: the first known type, replaced by a
// later one it coerces to implicitly but not back, unless it is the
// category's preferred type; text when all are unknown.
func commonType(xs []*treeNode) types.Type {
	var p types.Type
	have := false
	for _, x := range xs {
		if x.t.OID == types.OIDUnknown {
			continue
		}
		if !have {
			p, have = x.t, true
			continue
		}
		n := x.t
		if n.OID == p.OID {
			continue
		}
		if !preferredType(p) && ImplicitCast(p, n) && !ImplicitCast(n, p) {
			p = n
		}
	}
	if !have {
		return types.TypeText
	}
	p.Mod = -1 // coerce_to_common_type coerces to the type alone
	return p
}

// preferredType: the type PostgreSQL prefers within its category
// (typispreferred).
func preferredType(t types.Type) bool {
	switch t.OID {
	case types.OIDText, types.OIDFloat8, types.OIDBool, types.OIDTimestamptz, types.OIDInterval, types.OIDOid:
		return true
	}
	return false
}

// implicitCast reports whether pg_cast has an implicit cast from → to
// (or they are the same type).
func ImplicitCast(from, to types.Type) bool {
	if from.OID == to.OID || from.OID == types.OIDUnknown {
		return true
	}
	rank := map[uint32]int{types.OIDInt2: 1, types.OIDInt4: 2, types.OIDInt8: 3, types.OIDNumeric: 4, types.OIDFloat4: 5, types.OIDFloat8: 6}
	if a, ok := rank[from.OID]; ok {
		b, ok := rank[to.OID]
		return ok && a < b
	}
	switch from.OID {
	case types.OIDText:
		return to.OID == types.OIDVarchar || to.OID == types.OIDBpchar || to.OID == types.OIDName
	case types.OIDVarchar:
		return to.OID == types.OIDText || to.OID == types.OIDBpchar || to.OID == types.OIDName
	case types.OIDBpchar:
		return to.OID == types.OIDText || to.OID == types.OIDVarchar || to.OID == types.OIDName
	case types.OIDName:
		return to.OID == types.OIDText
	case types.OIDDate:
		return to.OID == types.OIDTimestamp || to.OID == types.OIDTimestamptz
	case types.OIDTimestamp:
		return to.OID == types.OIDTimestamptz
	}
	return false
}

// --- operators

// opSig is one operator (or function) signature.
type opSig struct {
	l, r, res uint32
}

var (
	intOIDs   = []uint32{types.OIDInt2, types.OIDInt4, types.OIDInt8}
	floatOIDs = []uint32{types.OIDFloat4, types.OIDFloat8}
	dateOIDs  = []uint32{types.OIDDate, types.OIDTimestamp, types.OIDTimestamptz}
)

// operatorSigs lists the operators called op among lockd's types, as
// pg_operator has them (the cross-type integer, float and datetime
// families included).
func operatorSigs(op string) []opSig {
	var out []opSig
	cross := func(fam []uint32, res func(a, b uint32) uint32) {
		for _, a := range fam {
			for _, b := range fam {
				out = append(out, opSig{a, b, res(a, b)})
			}
		}
	}
	boolRes := func(uint32, uint32) uint32 { return types.OIDBool }
	wider := func(a, b uint32) uint32 {
		rank := map[uint32]int{types.OIDInt2: 1, types.OIDInt4: 2, types.OIDInt8: 3, types.OIDFloat4: 1, types.OIDFloat8: 2}
		if rank[a] >= rank[b] {
			return a
		}
		return b
	}
	switch op {
	case "=", "<>", "<", ">", "<=", ">=":
		for _, t := range []uint32{types.OIDBool, types.OIDNumeric, types.OIDText, types.OIDBpchar, types.OIDName, types.OIDInterval, types.OIDOid, types.OIDChar} {
			out = append(out, opSig{t, t, types.OIDBool})
		}
		cross(intOIDs, boolRes)
		cross(floatOIDs, boolRes)
		cross(dateOIDs, boolRes)
		out = append(out, opSig{types.OIDName, types.OIDText, types.OIDBool}, opSig{types.OIDText, types.OIDName, types.OIDBool})
	case "+", "-", "*", "/":
		cross(intOIDs, wider)
		cross(floatOIDs, func(a, b uint32) uint32 {
			if a == types.OIDFloat4 && b == types.OIDFloat4 {
				return types.OIDFloat4
			}
			return types.OIDFloat8
		})
		out = append(out, opSig{types.OIDNumeric, types.OIDNumeric, types.OIDNumeric})
		switch op {
		case "+":
			out = append(out, opSig{types.OIDInterval, types.OIDInterval, types.OIDInterval}, opSig{types.OIDDate, types.OIDInt4, types.OIDDate},
				opSig{types.OIDInt4, types.OIDDate, types.OIDDate}, opSig{types.OIDTimestamp, types.OIDInterval, types.OIDTimestamp},
				opSig{types.OIDTimestamptz, types.OIDInterval, types.OIDTimestamptz}, opSig{types.OIDDate, types.OIDInterval, types.OIDTimestamp})
		case "-":
			out = append(out, opSig{types.OIDInterval, types.OIDInterval, types.OIDInterval}, opSig{types.OIDDate, types.OIDInt4, types.OIDDate},
				opSig{types.OIDDate, types.OIDDate, types.OIDInt4}, opSig{types.OIDTimestamp, types.OIDInterval, types.OIDTimestamp},
				opSig{types.OIDTimestamptz, types.OIDInterval, types.OIDTimestamptz}, opSig{types.OIDTimestamp, types.OIDTimestamp, types.OIDInterval},
				opSig{types.OIDTimestamptz, types.OIDTimestamptz, types.OIDInterval}, opSig{types.OIDDate, types.OIDInterval, types.OIDTimestamp})
		}
	case "%":
		for _, t := range []uint32{types.OIDInt2, types.OIDInt4, types.OIDInt8, types.OIDNumeric} {
			out = append(out, opSig{t, t, t})
		}
	case "~~", "!~~", "~~*", "!~~*", "~", "!~", "~*", "!~*":
		out = append(out, opSig{types.OIDText, types.OIDText, types.OIDBool}, opSig{types.OIDBpchar, types.OIDText, types.OIDBool}, opSig{types.OIDName, types.OIDText, types.OIDBool})
	case "||":
		out = append(out, opSig{types.OIDText, types.OIDText, types.OIDText})
	}
	return out
}

// selectCandidate is func_select_candidate over signatures for argument
// types in (OIDUnknown for an unknown literal): of the candidates every
// argument coerces to implicitly, those with the most exact matches, then
// with the most exact-or-preferred types at the known arguments, then —
// at unknown arguments — of the string category if one offers it (else
// the one category all offer), preferred types first.
func selectCandidate(sigs [][]uint32, in []uint32) ([]uint32, bool) {
	var cands [][]uint32
	for _, s := range sigs {
		ok := len(s) == len(in)
		for i := 0; ok && i < len(in); i++ {
			ok = ImplicitCast(types.Type{OID: in[i]}, types.Type{OID: s[i]})
		}
		if ok {
			cands = append(cands, s)
		}
	}
	keepMax := func(score func([]uint32) int) {
		best := -1
		var kept [][]uint32
		for _, c := range cands {
			switch n := score(c); {
			case n > best:
				best, kept = n, [][]uint32{c}
			case n == best:
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	if len(cands) > 1 {
		keepMax(func(c []uint32) int {
			n := 0
			for i := range in {
				if in[i] != types.OIDUnknown && in[i] == c[i] {
					n++
				}
			}
			return n
		})
	}
	if len(cands) > 1 {
		keepMax(func(c []uint32) int {
			n := 0
			for i := range in {
				if in[i] != types.OIDUnknown && (in[i] == c[i] || preferredType(types.Type{OID: c[i]})) {
					n++
				}
			}
			return n
		})
	}
	for i := 0; len(cands) > 1 && i < len(in); i++ {
		if in[i] != types.OIDUnknown {
			continue
		}
		cat, havePreferred, conflict := types.CatOther, false, false
		for j, c := range cands {
			ct := types.CategoryOf(types.Type{OID: c[i]})
			switch {
			case j == 0 || ct == cat:
				if j == 0 {
					cat = ct
				}
				havePreferred = havePreferred || preferredType(types.Type{OID: c[i]})
			case ct == types.CatString:
				cat, havePreferred = ct, preferredType(types.Type{OID: c[i]})
			default:
				conflict = true
			}
		}
		if conflict && cat != types.CatString {
			break
		}
		var kept [][]uint32
		for _, c := range cands {
			if types.CategoryOf(types.Type{OID: c[i]}) == cat && (!havePreferred || preferredType(types.Type{OID: c[i]})) {
				kept = append(kept, c)
			}
		}
		cands = kept
	}
	if len(cands) == 1 {
		return cands[0], true
	}
	return nil, false
}

func typeOf(oid uint32) types.Type {
	t, _ := types.TypeByOID(oid)
	return t
}

// funcSigs lists the signatures (arguments, then the result) of the
// functions this deparser resolves itself.
var funcSigs = map[string][][]uint32{
	"lower":            {{types.OIDText, types.OIDText}},
	"upper":            {{types.OIDText, types.OIDText}},
	"initcap":          {{types.OIDText, types.OIDText}},
	"md5":              {{types.OIDText, types.OIDText}},
	"reverse":          {{types.OIDText, types.OIDText}},
	"btrim":            {{types.OIDText, types.OIDText}, {types.OIDText, types.OIDText, types.OIDText}},
	"ltrim":            {{types.OIDText, types.OIDText}, {types.OIDText, types.OIDText, types.OIDText}},
	"rtrim":            {{types.OIDText, types.OIDText}, {types.OIDText, types.OIDText, types.OIDText}},
	"length":           {{types.OIDText, types.OIDInt4}, {types.OIDBpchar, types.OIDInt4}},
	"char_length":      {{types.OIDText, types.OIDInt4}, {types.OIDBpchar, types.OIDInt4}},
	"character_length": {{types.OIDText, types.OIDInt4}, {types.OIDBpchar, types.OIDInt4}},
	"octet_length":     {{types.OIDText, types.OIDInt4}, {types.OIDBpchar, types.OIDInt4}},
	"abs": {{types.OIDInt2, types.OIDInt2}, {types.OIDInt4, types.OIDInt4}, {types.OIDInt8, types.OIDInt8}, {types.OIDFloat4, types.OIDFloat4},
		{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}},
	"substr":  {{types.OIDText, types.OIDInt4, types.OIDText}, {types.OIDText, types.OIDInt4, types.OIDInt4, types.OIDText}},
	"replace": {{types.OIDText, types.OIDText, types.OIDText, types.OIDText}},
	"left":    {{types.OIDText, types.OIDInt4, types.OIDText}},
	"right":   {{types.OIDText, types.OIDInt4, types.OIDText}},
	"strpos":  {{types.OIDText, types.OIDText, types.OIDInt4}},
	"repeat":  {{types.OIDText, types.OIDInt4, types.OIDText}},
	"lpad":    {{types.OIDText, types.OIDInt4, types.OIDText}, {types.OIDText, types.OIDInt4, types.OIDText, types.OIDText}},
	"rpad":    {{types.OIDText, types.OIDInt4, types.OIDText}, {types.OIDText, types.OIDInt4, types.OIDText, types.OIDText}},
	"round":   {{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}, {types.OIDNumeric, types.OIDInt4, types.OIDNumeric}},
	"trunc":   {{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}, {types.OIDNumeric, types.OIDInt4, types.OIDNumeric}},
	"floor":   {{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}},
	"ceil":    {{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}},
	"ceiling": {{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}},
	"sqrt":    {{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}},
	"exp":     {{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}},
	"ln":      {{types.OIDFloat8, types.OIDFloat8}, {types.OIDNumeric, types.OIDNumeric}},
	"mod": {{types.OIDInt2, types.OIDInt2, types.OIDInt2}, {types.OIDInt4, types.OIDInt4, types.OIDInt4}, {types.OIDInt8, types.OIDInt8, types.OIDInt8},
		{types.OIDNumeric, types.OIDNumeric, types.OIDNumeric}},
	"now":                   {{types.OIDTimestamptz}},
	"statement_timestamp":   {{types.OIDTimestamptz}},
	"transaction_timestamp": {{types.OIDTimestamptz}},
	"clock_timestamp":       {{types.OIDTimestamptz}},
	"random":                {{types.OIDFloat8}},
	"date_trunc":            {{types.OIDText, types.OIDTimestamp, types.OIDTimestamp}, {types.OIDText, types.OIDTimestamptz, types.OIDTimestamptz}},
}

func equalOIDs(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

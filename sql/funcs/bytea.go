package funcs

import (
	"lockd/sql/expr"
	"lockd/sql/types"
)

// byteaFuncs are the binary string functions (PostgreSQL's
// utils/adt/varlena.c, encode.c and mbutils.c) that take or give bytea;
// length and octet_length of a bytea are overloads in stringFuncs.
var byteaFuncs = map[string][]Builtin{
	"convert_from": {{args: []types.Type{types.TypeBytea, types.TypeName}, Result: fixed(types.TypeText), Fn: convertFrom}},
	"convert_to":   {{args: []types.Type{types.TypeText, types.TypeName}, Result: fixed(types.TypeBytea), Fn: convertTo}},
	"encode": {{args: []types.Type{types.TypeBytea, types.TypeText}, Result: fixed(types.TypeText), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		s, err := types.Encode(a[0].S, a[1].S)
		return types.TextDatum(s), err
	}}},
	"decode": {{args: []types.Type{types.TypeText, types.TypeText}, Result: fixed(types.TypeBytea), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		s, err := types.Decode(a[0].S, a[1].S)
		return types.TextDatum(s), err
	}}},
}

func byteaLength(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
	return types.IntDatum(int64(len(a[0].S))), nil
}

package expr

import (
	"strings"

	"lockd/sql/types"
)

var TypeRecord = types.Type{OID: types.OIDRecord, Len: -1, Mod: -1, Name: "record"}

type RowExpr struct {
	Args []Expr
}

func (r *RowExpr) Type() types.Type { return TypeRecord }
func (r *RowExpr) Eval(ec *EvalCtx, row []types.Datum) (types.Datum, error) {
	out := types.Datum{A: make([]types.Datum, len(r.Args))}
	var b []byte
	b = append(b, '(')
	for i, a := range r.Args {
		v, err := a.Eval(ec, row)
		if err != nil {
			return types.Datum{}, err
		}
		out.A[i] = v
		if i > 0 {
			b = append(b, ',')
		}
		if v.Null {
			continue
		}
		s := string(types.AppendText(nil, a.Type(), v, ec.FormatCtx()))
		if s == "" || strings.ContainsAny(s, "(),\"\\ \t\n") {
			b = append(b, '"')
			for j := 0; j < len(s); j++ {
				if s[j] == '"' || s[j] == '\\' {
					b = append(b, s[j])
				}
				b = append(b, s[j])
			}
			b = append(b, '"')
			continue
		}
		b = append(b, s...)
	}
	out.S = string(append(b, ')'))
	return out, nil
}

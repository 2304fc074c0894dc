package funcs

import (
	"strings"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/types"
)

// serialSequence is pg_get_serial_sequence(table, column): the sequence
// owned by a column (serial, identity or OWNED BY), schema-qualified.
func serialSequence(ec *expr.EvalCtx, v []types.Datum) (types.Datum, error) {
	s := ec.S
	parts, err := types.SplitQualifiedName(v[0].S)
	if err != nil {
		return types.Datum{}, err
	}
	name := parts[len(parts)-1]
	cat := s.Cat()
	oid, ok := cat.ByName[name]
	if !ok || (len(parts) > 1 && parts[len(parts)-2] != catalog.SequenceNamespaceName) {
		return types.Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", strings.Join(parts, "."))
	}
	col := -1
	if t := cat.Tables[oid]; t != nil {
		col = t.ColIndex(v[1].S)
	}
	if col < 0 {
		return types.Datum{}, pgerr.New(pgerr.UndefinedColumn, "column \"%s\" of relation \"%s\" does not exist", v[1].S, name)
	}
	for _, q := range cat.OwnedSequences(oid) {
		if q.OwnedCol == col+1 {
			return types.TextDatum(types.QuoteIdent(catalog.SequenceNamespaceName) + "." + types.QuoteIdent(q.Name)), nil
		}
	}
	return types.NullDatum, nil
}

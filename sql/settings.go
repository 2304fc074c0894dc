package sql

import (
	"strconv"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

func (s *Session) analyzeSet(v *pg.VariableSetStmt, st *plan.Stmt) (*plan.Stmt, error) {
	st.Tag = "SET"
	local := v.IsLocal
	name := v.Name
	switch v.Kind {
	case pg.VariableSetKind_VAR_SET_VALUE, pg.VariableSetKind_VAR_SET_DEFAULT, pg.VariableSetKind_VAR_RESET:
		var value string
		if v.Kind == pg.VariableSetKind_VAR_SET_VALUE {
			var err error
			if value, err = analyze.SetValue(v.Args); err != nil {
				return nil, err
			}
		}
		if v.Kind == pg.VariableSetKind_VAR_RESET {
			st.Tag = "RESET"
		}
		kind := v.Kind
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			if local && s.Tx != expr.TxBlock {
				s.Notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "SET LOCAL can only be used in transaction blocks")
				if _, _, err := s.Settings.Show(name); err != nil {
					return "", err
				}
				return st.Tag, nil
			}
			var err error
			if kind == pg.VariableSetKind_VAR_SET_VALUE {
				err = s.Set(name, value, local)
			} else {
				err = s.SetDefault(name, local)
			}
			if err != nil {
				return "", err
			}
			return st.Tag, nil
		}
	case pg.VariableSetKind_VAR_RESET_ALL:
		st.Tag = "RESET"
		st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
			s.Settings.ResetAll()
			s.RefreshFormat()
			return "RESET", nil
		}
	case pg.VariableSetKind_VAR_SET_MULTI:
		switch name {
		case "TRANSACTION", "SESSION CHARACTERISTICS":
			target := "transaction_isolation"
			isLocal := true
			if name == "SESSION CHARACTERISTICS" {
				target = "default_transaction_isolation"
				isLocal = false
			}
			var sets [][2]string
			for _, a := range v.Args {
				de := a.GetDefElem()
				if de == nil {
					continue
				}
				val := ""
				if c := de.Arg.GetAConst(); c != nil {
					if sv, ok := c.Val.(*pg.A_Const_Sval); ok {
						val = sv.Sval.Sval
					}
					if iv, ok := c.Val.(*pg.A_Const_Ival); ok {
						val = strconv.Itoa(int(iv.Ival.Ival))
					}
				}
				switch de.Defname {
				case "transaction_isolation":
					sets = append(sets, [2]string{target, val})
				case "transaction_read_only":
					ro := "transaction_read_only"
					if !isLocal {
						ro = "default_transaction_read_only"
					}
					sets = append(sets, [2]string{ro, onOff(val == "1")})
				case "transaction_deferrable":
				}
			}
			st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
				if isLocal && s.Tx != expr.TxBlock {
					s.Notice(pgerr.SeverityWarning, pgerr.NoActiveSQLTransaction, "SET TRANSACTION can only be used in transaction blocks")
					return "SET", nil
				}
				for _, kv := range sets {
					if err := s.Set(kv[0], kv[1], isLocal); err != nil {
						return "", err
					}
				}
				return "SET", nil
			}
		default:
			return nil, pgerr.NotSupported("SET %s is not supported", name)
		}
	default:
		return nil, pgerr.NotSupported("SET FROM CURRENT is not supported")
	}
	return st, nil
}

func (s *Session) analyzeShow(v *pg.VariableShowStmt, st *plan.Stmt) (*plan.Stmt, error) {
	st.Tag = "SHOW"
	if strings.EqualFold(v.Name, "all") {
		st.Cols = []types.Column{{Name: "name", Type: types.TypeText}, {Name: "setting", Type: types.TypeText}, {Name: "description", Type: types.TypeText}}
		st.Run = func(ec *expr.EvalCtx, emit func([]types.Datum) error) (string, error) {
			for _, r := range s.Settings.ShowAll() {
				if err := emit([]types.Datum{types.TextDatum(r.Name), types.TextDatum(r.Setting), types.TextDatum(r.Description)}); err != nil {
					return "", err
				}
			}
			return "SHOW", nil
		}
		return st, nil
	}
	_, def, err := s.Settings.Show(v.Name)
	if err != nil {
		return nil, err
	}
	name := def.Name
	st.Cols = []types.Column{{Name: strings.ToLower(name), Type: types.TypeText}}
	if v.Name != strings.ToLower(v.Name) || name == strings.ToLower(name) {
		st.Cols[0].Name = name
	}
	st.Run = func(ec *expr.EvalCtx, emit func([]types.Datum) error) (string, error) {
		val, _, err := s.Settings.Show(name)
		if err != nil {
			return "", err
		}
		if err := emit([]types.Datum{types.TextDatum(val)}); err != nil {
			return "", err
		}
		return "SHOW", nil
	}
	return st, nil
}

package plan

import (
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// funcSource is a function call in FROM: a set-returning function, or any
// scalar function (one row). Its arguments may read earlier FROM items
// (functions in FROM are implicitly LATERAL).
type FuncSource struct {
	alias      string
	Cols       []types.Column
	Srf        *expr.SrfExpr
	Scalar     expr.Expr
	Ordinality bool
	level      bool // arguments read the level row
}

func (f *FuncSource) name() string            { return f.alias }
func (f *FuncSource) columns() []types.Column { return f.Cols }
func (f *FuncSource) readsLevel() bool        { return f.level }

// functionItem compiles a RangeFunction.
func functionItem(a *analyze.Analyzer, rf *pg.RangeFunction) (*FuncSource, error) {
	if len(rf.Functions) != 1 || rf.IsRowsfrom {
		return nil, pgerr.NotSupported("ROWS FROM with several functions is not supported")
	}
	items := rf.Functions[0].GetList().GetItems()
	if len(items) > 1 && items[1] != nil && items[1].GetList() != nil && len(items[1].GetList().Items) > 0 {
		return nil, pgerr.NotSupported("column definition lists for functions are not supported")
	}
	fcNode := items[0]
	fc := fcNode.GetFuncCall()
	var name string
	var e expr.Expr
	var err error
	saved := a.AllowSRF
	a.AllowSRF = true
	if fc != nil {
		_, name = analyze.QualifiedName(fc.Funcname)
		name = strings.ToLower(name)
		e, err = a.FuncCall(fc)
	} else {
		name = analyze.OutputName(fcNode)
		e, err = a.Expr(fcNode)
	}
	a.AllowSRF = saved
	if err != nil {
		return nil, err
	}
	f := &FuncSource{alias: name}
	colName := name
	if sf, ok := e.(*expr.SrfExpr); ok {
		f.Srf = sf
	} else {
		if e, err = a.ResolveOutput(e); err != nil {
			return nil, err
		}
		f.Scalar = e
	}
	// a function with a named output column keeps that name under a
	// table alias; others take the alias
	outName, named := funcs.SrfOutputNames[name]
	if named {
		colName = outName
	}
	if rf.Alias != nil {
		f.alias = rf.Alias.Aliasname
		if !named {
			colName = f.alias
		}
		if len(rf.Alias.Colnames) > 0 {
			colName = analyze.NodeName(rf.Alias.Colnames[0])
		}
	}
	f.Cols = []types.Column{{Name: colName, Type: e.Type()}}
	if rf.Ordinality {
		f.Ordinality = true
		on := "ordinality"
		if rf.Alias != nil && len(rf.Alias.Colnames) > 1 {
			on = analyze.NodeName(rf.Alias.Colnames[1])
		}
		f.Cols = append(f.Cols, types.Column{Name: on, Type: types.TypeInt8})
	}
	if rf.Alias != nil && len(rf.Alias.Colnames) > len(f.Cols) {
		return nil, pgerr.New(pgerr.SyntaxError, "too many column aliases specified for function %s", name)
	}
	return f, nil
}

package commands

import (
	"fmt"
	"slices"
	"strconv"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/locks"
	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// CREATE TABLE [IF NOT EXISTS] t [(names)] [WITH (fillfactor = n)] AS query
// [WITH [NO] DATA] and SELECT ... INTO t (createas.c): a new table with
// the query's column names and types (unknown literals become text,
// typmods are kept, as in varchar(10)), holding the query's rows, written
// with the locks of an INSERT ... SELECT on a table only this transaction
// sees: the new table is AccessExclusiveLock'ed, the query's relations
// locked as by a SELECT. The command tag is SELECT n (CREATE TABLE AS
// with NO DATA or when IF NOT EXISTS skips).

// compileCreateTableAs compiles CREATE TABLE AS (query is its query) and
// SELECT INTO (query is the SELECT without its INTO clause).
func (s *Utility) CompileCreateTableAs(into *pg.IntoClause, query *pg.Node, ifNotExists bool, params *[]types.Type, st *plan.Stmt) error {
	rv := into.Rel
	switch {
	case rv.Relpersistence == "t":
		return pgerr.NotSupported("temporary tables are not supported")
	case rv.Schemaname != "" && rv.Schemaname != "public":
		return pgerr.New(pgerr.InvalidSchemaName, "schema \"%s\" does not exist", rv.Schemaname)
	case into.TableSpaceName != "":
		return pgerr.NotSupported("tablespaces are not supported")
	case into.AccessMethod != "" && into.AccessMethod != "heap":
		return pgerr.New(pgerr.UndefinedObject, "access method \"%s\" does not exist", into.AccessMethod)
	case into.OnCommit != pg.OnCommitAction_ONCOMMIT_NOOP && into.OnCommit != pg.OnCommitAction_ON_COMMIT_ACTION_UNDEFINED:
		return pgerr.New(pgerr.InvalidTableDefinition, "ON COMMIT can only be used on temporary tables")
	}
	sel := query.GetSelectStmt()
	if sel == nil {
		return pgerr.NotSupported("CREATE TABLE AS %s is not supported", analyze.CommandName(query))
	}
	ff, err := fillfactorOption(into.Options, false)
	if err != nil {
		return err
	}
	p, err := s.CompileSelect(sel, params)
	if err != nil {
		return err
	}
	if len(into.ColNames) > len(p.Cols) {
		return pgerr.New(pgerr.SyntaxError, "too many column names were specified")
	}
	t := &catalog.TableDef{Name: rv.Relname, Unlogged: rv.Relpersistence == "u", Fillfactor: ff, RowFormat: 1}
	for i, c := range p.Cols {
		name := c.Name
		if i < len(into.ColNames) {
			name = analyze.NodeName(into.ColNames[i])
		}
		if t.ColIndex(name) >= 0 {
			return pgerr.New(pgerr.DuplicateColumn, "column \"%s\" specified more than once", name)
		}
		typ := c.Type
		if typ.OID == types.OIDUnknown || typ.OID == 0 {
			typ = types.TypeText
		}
		if err := storableType(typ); err != nil {
			return err
		}
		t.Cols = append(t.Cols, catalog.ColumnDef{Name: name, TypeOID: typ.OID, TypeMod: typ.Mod})
	}
	if len(t.Cols) > 1600 {
		return pgerr.New("54011", "tables can have at most 1600 columns")
	}
	skipData := into.SkipData
	st.Rels = p.Rels
	st.Writes = true
	st.Tag = "SELECT"
	st.Run = func(ec *expr.EvalCtx, _ func([]types.Datum) error) (string, error) {
		if _, exists := s.Cat().ByName[t.Name]; exists {
			if ifNotExists {
				s.Notice(pgerr.SeverityNotice, pgerr.DuplicateTable, fmt.Sprintf("relation \"%s\" already exists, skipping", t.Name))
				return "CREATE TABLE AS", nil
			}
			return "", pgerr.New(pgerr.DuplicateTable, "relation \"%s\" already exists", t.Name)
		}
		nt := *t
		nt.Cols = slices.Clone(t.Cols)
		nt.OID = s.Catalog.AllocOID()
		nt.RelFile = nt.OID
		if err := s.Store.CreateRelation(storage.RelID(nt.RelFile)); err != nil {
			return "", err
		}
		if err := s.LockNow(ec, nt.OID, locks.AccessExclusiveLock); err != nil {
			return "", err
		}
		s.AddCatOp(&catalog.CatOp{Kind: "create", Table: &nt})
		if skipData {
			return "CREATE TABLE AS", nil
		}
		tab := s.Cat().Tables[nt.OID]
		var n int64
		row := make([]types.Datum, len(tab.Cols))
		err := s.RunSelect(ec, p, func(out []types.Datum) error {
			copy(row, out[:len(row)])
			n++
			_, err := s.InsertRow(ec, tab, nil, row)
			return err
		})
		if err != nil {
			return "", err
		}
		return "SELECT " + strconv.FormatInt(n, 10), nil
	}
	return nil
}

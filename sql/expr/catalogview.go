package expr

import (
	"sort"
	"strings"

	pg "github.com/pganalyze/pg_query_go/v6"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/types"
	"lockd/storage"
)

// leafTables is t itself, or the leaf partitions under a partitioned t.
func (s *Backend) LeafTables(t *catalog.TableDef) []*catalog.TableDef {
	if !t.Partitioned() {
		return []*catalog.TableDef{t}
	}
	var out []*catalog.TableDef
	for _, k := range s.Cat().PartitionChildren(t) {
		out = append(out, s.LeafTables(k)...)
	}
	return out
}

// cat is the catalog as this session sees it: its own uncommitted DDL
// applied to the published catalog.
func (s *Backend) Cat() *catalog.CatalogState {
	if s.PendingCat != nil {
		return s.PendingCat
	}
	return s.Catalog.State()
}

// addCatOp records a DDL change in the current transaction.
func (s *Backend) AddCatOp(op *catalog.CatOp) {
	if s.PendingCat == nil {
		s.PendingCat = s.Catalog.State().Clone()
	}
	s.PendingCat.Apply(op)
	// A private catalog gets a version no published one has, so plans
	// cached against it are never taken for plans of another state (such
	// as the same DDL run again after a rollback).
	s.PendingCat.Version = s.Catalog.PrivateVersion()
	s.CatOps = append(s.CatOps, op)
}

// NewStorageInSubxact reports whether table oid was created, truncated or
// rewritten by the current subtransaction, so that its storage is new
// there (PostgreSQL's rd_createSubid / rd_newRelfilenodeSubid test).
func (s *Backend) NewStorageInSubxact(oid uint32) bool {
	for _, op := range s.CatOps[min(s.SubCatMark, len(s.CatOps)):] {
		switch op.Kind {
		case "create":
			if op.Table != nil && op.Table.OID == oid {
				return true
			}
		case "truncate", "rewrite":
			if op.Oid == oid {
				return true
			}
		}
	}
	return false
}

// commitCatalog publishes the transaction's DDL and removes files that
// dropped or truncated relations no longer use. The transaction's commit
// record, which carries the changes and lists those files, is written and
// flushed as part of the catalog's commit (catalog.Catalog.Commit); the
// files go only after it.
func (s *Backend) CommitCatalog() error {
	if len(s.CatOps) == 0 {
		return nil
	}
	ops := s.CatOps
	s.CatOps, s.PendingCat = nil, nil
	s.Txn.DropAtCommit(filesDroppedAtCommit(ops)...)
	if err := s.Catalog.Commit(ops, s.Txn.CommitRecord); err != nil {
		return err
	}
	s.commitSequences(ops)
	for _, op := range ops {
		switch op.Kind {
		case "drop":
			_ = s.Store.DropRelation(storage.RelID(op.OldFile))
			for _, f := range op.OldIdx {
				_ = s.Store.DropIndex(storage.RelID(f))
			}
		case "truncate", "rewrite":
			_ = s.Store.DropRelation(storage.RelID(op.OldFile))
			for _, f := range op.OldIdx {
				_ = s.Store.DropIndex(storage.RelID(f))
			}
		case "dropindex":
			_ = s.Store.DropIndex(storage.RelID(op.OldFile))
		}
	}
	return nil
}

// filesDroppedAtCommit lists the relation files ops stop using.
func filesDroppedAtCommit(ops []*catalog.CatOp) []uint32 {
	var files []uint32
	for _, op := range ops {
		switch op.Kind {
		case "drop", "truncate", "rewrite":
			files = append(files, op.OldFile)
			for _, f := range op.OldIdx {
				files = append(files, f)
			}
		case "dropindex":
			files = append(files, op.OldFile)
		}
	}
	return files
}

// abortCatalog forgets the transaction's DDL and removes files it made
// (which its abort record lists).
func (s *Backend) AbortCatalog() {
	for _, op := range s.CatOps {
		switch op.Kind {
		case "create":
			s.Txn.DropAtAbort(op.Table.RelFile)
		case "truncate", "rewrite":
			s.Txn.DropAtAbort(op.Relfile)
			for _, f := range op.NewIdx {
				s.Txn.DropAtAbort(f)
			}
		case "addindex":
			s.Txn.DropAtAbort(op.Index.RelFile)
		}
	}
	s.RemoveNewFiles(s.CatOps)
	s.CatOps, s.PendingCat = nil, nil
}

// removeNewFiles removes the files that ops made, whose (sub)transaction
// is being rolled back.
func (s *Backend) RemoveNewFiles(ops []*catalog.CatOp) {
	s.abortSequences(ops)
	for _, op := range ops {
		switch op.Kind {
		case "create":
			_ = s.Store.DropRelation(storage.RelID(op.Table.RelFile))
		case "truncate", "rewrite":
			_ = s.Store.DropRelation(storage.RelID(op.Relfile))
			for _, f := range op.NewIdx {
				_ = s.Store.DropIndex(storage.RelID(f))
			}
		case "addindex":
			_ = s.Store.DropIndex(storage.RelID(op.Index.RelFile))
		}
	}
}

// resolveTable finds a table by RangeVar in the session's catalog view.
func (s *Backend) ResolveTable(rv *pg.RangeVar) (*catalog.TableDef, error) {
	if rv.Schemaname != "" && rv.Schemaname != "public" {
		return nil, TableNotFound(rv.Schemaname+"."+rv.Relname, rv.Location)
	}
	t := s.Cat().Table(rv.Relname)
	if t == nil {
		return nil, TableNotFound(rv.Relname, rv.Location)
	}
	return t, nil
}

// lookupView finds a system view named by rv: unqualified or pg_catalog
// names only (pg_catalog is searched before public, as in PostgreSQL).
func (s *Backend) LookupView(rv *pg.RangeVar) (*View, bool) {
	if rv.Schemaname != "" && rv.Schemaname != "pg_catalog" {
		return nil, false
	}
	v, ok := s.Views[rv.Relname]
	return v, ok
}

// relInfo is one row of pg_class.
type relInfo struct {
	Oid   uint32
	Name  string
	Nsp   uint32
	Kind  byte // 'r' table, 'i' index, 'v' view, 'p' partitioned table, 'I' partitioned index, 'S' sequence
	Table *catalog.TableDef
	Index *catalog.IndexDef
	View  *View
	Seq   *catalog.SequenceDef
}

// relations lists every relation the session can see: user tables and
// indexes, then the system views, in OID order.
func (s *Backend) Relations() []relInfo {
	cat := s.Cat()
	out := make([]relInfo, 0, len(cat.Tables)+len(cat.Indexes)+len(s.Views))
	for _, t := range cat.Tables {
		out = append(out, relInfo{Oid: t.OID, Name: t.Name, Nsp: catalog.NspPublic, Kind: t.Relkind(), Table: t})
	}
	for _, ix := range cat.Indexes {
		out = append(out, relInfo{Oid: ix.OID, Name: ix.Name, Nsp: catalog.NspPublic, Kind: ix.Relkind(), Index: ix})
	}
	for _, v := range s.Views {
		out = append(out, relInfo{Oid: v.Oid, Name: v.Name, Nsp: catalog.NspPgCatalog, Kind: 'v', View: v})
	}
	for _, q := range cat.Sequences {
		out = append(out, relInfo{Oid: q.OID, Name: q.Name, Nsp: catalog.NspPublic, Kind: 'S', Seq: q})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Oid < out[j].Oid })
	return out
}

func (s *Backend) RelationByOID(oid uint32) (relInfo, bool) {
	cat := s.Cat()
	if t := cat.Tables[oid]; t != nil {
		return relInfo{Oid: t.OID, Name: t.Name, Nsp: catalog.NspPublic, Kind: t.Relkind(), Table: t}, true
	}
	if ix := cat.Indexes[oid]; ix != nil {
		return relInfo{Oid: ix.OID, Name: ix.Name, Nsp: catalog.NspPublic, Kind: ix.Relkind(), Index: ix}, true
	}
	if q := cat.Sequences[oid]; q != nil {
		return relInfo{Oid: q.OID, Name: q.Name, Nsp: catalog.NspPublic, Kind: 'S', Seq: q}, true
	}
	for _, v := range s.Views {
		if v.Oid == oid {
			return relInfo{Oid: v.Oid, Name: v.Name, Nsp: catalog.NspPgCatalog, Kind: 'v', View: v}, true
		}
	}
	return relInfo{}, false
}

// relationOID resolves a relation name as the search path does
// (pg_catalog, then public).
func (s *Backend) relationOID(schema, name string) (uint32, bool) {
	if schema == "" || schema == "pg_catalog" {
		if v, ok := s.Views[name]; ok {
			return v.Oid, true
		}
	}
	if schema == "" || schema == "public" {
		if oid, ok := s.Cat().ByName[name]; ok {
			return oid, true
		}
	}
	return 0, false
}

func (s *Backend) RegName(t types.Type, oid uint32) (string, bool) {
	switch t.OID {
	case types.OIDRegclass:
		r, ok := s.RelationByOID(oid)
		if !ok {
			return "", false
		}
		return types.QuoteIdent(r.Name), true
	case types.OIDRegtype:
		if oid == types.OIDAnyArray {
			return types.TypeAnyArray.Name, true
		}
		if oid == types.OIDVoid {
			return types.TypeVoid.Name, true
		}
		if _, ok := types.TypeByOID(oid); !ok {
			if _, ok := types.ArrayTypeByOID(oid); !ok {
				return "", false
			}
		}
		return types.FormatTypeExt(oid, types.NoTypmod, true), true
	case types.OIDRegnsp:
		for _, n := range catalog.Namespaces {
			if n.Oid == oid {
				return types.QuoteIdent(n.Name), true
			}
		}
	case types.OIDRegrole:
		if r := s.Cat().RoleByOID(oid); r != nil {
			return types.QuoteIdent(r.Name), true
		}
	case types.OIDRegproc:
		if p, ok := catalog.ProcByOID(oid); ok {
			return types.QuoteIdent(p.Name), true
		}
	}
	return "", false
}

// regInput looks up a reg* input that is a name.
func (s *Backend) RegInput(t types.Type, in string) (types.Datum, error) {
	v := strings.TrimSpace(in)
	parts, err := types.SplitQualifiedName(v)
	if err != nil {
		return types.Datum{}, pgerr.New(pgerr.InvalidName, "invalid name syntax")
	}
	name := parts[len(parts)-1]
	schema := ""
	if len(parts) > 1 {
		schema = parts[len(parts)-2]
	}
	switch t.OID {
	case types.OIDRegclass:
		if oid, ok := s.relationOID(schema, name); ok {
			return types.IntDatum(int64(oid)), nil
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", v)
	case types.OIDRegtype:
		tn := &types.PgTypeNameInput{Name: strings.ToLower(strings.TrimSpace(in))}
		if oid, ok := tn.Resolve(); ok {
			return types.IntDatum(int64(oid)), nil
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedObject, "type \"%s\" does not exist", v)
	case types.OIDRegnsp:
		for _, n := range catalog.Namespaces {
			if n.Name == name {
				return types.IntDatum(int64(n.Oid)), nil
			}
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedSchema, "schema \"%s\" does not exist", v)
	case types.OIDRegrole:
		if r := s.Cat().Role(name); r != nil {
			return types.IntDatum(int64(r.OID)), nil
		}
		return types.Datum{}, pgerr.New(pgerr.UndefinedObject, "role \"%s\" does not exist", v)
	case types.OIDRegproc:
		if schema != "" && schema != "pg_catalog" {
			return types.Datum{}, pgerr.New(pgerr.UndefinedFunction, "function \"%s\" does not exist", v)
		}
		switch ps := catalog.ProcsNamed(name); len(ps) {
		case 0:
			return types.Datum{}, pgerr.New(pgerr.UndefinedFunction, "function \"%s\" does not exist", v)
		case 1:
			return types.IntDatum(int64(ps[0].OID)), nil
		}
		return types.Datum{}, pgerr.New(pgerr.AmbiguousFunction, "more than one function named \"%s\"", v)
	}
	return types.Datum{}, pgerr.NotSupported("input of type %s by name is not supported", t.Name)
}

// rangeSequence finds the sequence a FROM item names, if it names one.
func (s *Backend) RangeSequence(rv *pg.RangeVar) *catalog.SequenceDef {
	if rv.Schemaname != "" && rv.Schemaname != catalog.SequenceNamespaceName {
		return nil
	}
	return s.Cat().Sequence(rv.Relname)
}

// commitSequences runs after the catalog of a committing transaction is
// published: the storage that dropped and rewritten sequences no longer
// use is forgotten, and the file is written so that new sequences and
// restarts are on disk.
func (s *Backend) commitSequences(ops []*catalog.CatOp) {
	changed := false
	for _, op := range ops {
		switch op.Kind {
		case "dropseq", "setseq":
			s.Seqs.Drop(op.OldFile)
			changed = true
		case "createseq":
			changed = true
		}
	}
	if changed {
		if err := s.Seqs.Write(s.Catalog.State()); err != nil {
			s.Notice(pgerr.SeverityWarning, pgerr.InternalError, "could not write the sequences: "+err.Error())
		}
	}
}

// abortSequences forgets the storage that rolled-back operations made.
func (s *Backend) abortSequences(ops []*catalog.CatOp) {
	for _, op := range ops {
		switch op.Kind {
		case "createseq", "setseq":
			s.Seqs.Drop(op.Relfile)
		}
	}
}

func TableNotFound(name string, loc int32) error {
	return PosErr(pgerr.New(pgerr.UndefinedTable, "relation \"%s\" does not exist", name), loc)
}

// view is a system view computed at scan time.
type View struct {
	Name string
	Oid  uint32
	Cols []types.Column
	Rows func(ec *EvalCtx, emit func(row []types.Datum) error) error
}

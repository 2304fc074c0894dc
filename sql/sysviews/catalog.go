package sysviews

import (
	"strings"

	"lockd/pgerr"
	"lockd/sql/analyze"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/funcs"
	"lockd/sql/types"
)

// The pg_catalog relations psql's \d family, pgbench and lock-inspecting
// users query, each computed from the session's catalog when scanned.
// Their OIDs and column lists are PostgreSQL 15's; catalogs of features
// lockd does not have (policies, publications, extended statistics,
// triggers, comments) exist with their columns and no rows, so the
// queries that read them succeed.

const (
	oidPgType        = 1247
	oidPgAttribute   = 1249
	oidPgClass       = 1259
	oidPgAuthMembers = 1261
	oidPgDatabase    = 1262
	oidPgTablespace  = 1213
	oidPgAm          = 2601
	oidPgAttrdef     = 2604
	oidPgConstraint  = 2606
	oidPgDescription = 2609
	oidPgIndex       = 2610
	oidPgInherits    = 2611
	oidPgNamespace   = 2615
	oidPgTrigger     = 2620
	oidPgPolicy      = 3256
	oidPgExtension   = 3079
	oidPgPartTable   = 3350
	oidPgStatExt     = 3381
	oidPgCollation   = 3456
	oidPgPublication = 6104
	oidPgPubRel      = 6106
	oidPgPubNsp      = 6237
	oidPgRoles       = 12001
	oidPgUser        = 12006
	oidPgAuthid      = 1260
	oidPgTables      = 12014
	oidPgIndexes     = 12018
)

// Types of catalog columns that lockd represents with close stand-ins.
var (
	typeInt2Vector = types.Type{OID: types.OIDInt2Array, Len: -1, Mod: -1, Name: "int2vector"}
	typeOidVector  = types.Type{OID: 1028, Len: -1, Mod: -1, Name: "oidvector"}
	typeOidArray   = types.Type{OID: 1028, Len: -1, Mod: -1, Name: "oid[]"}
	typeCharArray  = types.Type{OID: 1002, Len: -1, Mod: -1, Name: "\"char\"[]"}
	typeAclArray   = types.TypeTextArray // aclitem[]: always NULL here
)

func CatalogViews() []*expr.View {
	return []*expr.View{
		pgClassView(), pgNamespaceView(), pgAttributeView(), pgTypeView(), pgIndexView(), pgInheritsView(),
		pgPartitionedTableView(), pgConstraintView(), pgDatabaseView(), pgRolesView(), pgAuthidView(), pgUserView(), pgHbaFileRulesView(), pgAmView(),
		pgAttrdefView(), pgCollationView(), pgTablespaceView(), pgTablesView(), pgIndexesView(), ProcView(), languageView(),
		emptyView("pg_auth_members", oidPgAuthMembers, "oid", types.TypeOid, "roleid", types.TypeOid, "member", types.TypeOid, "grantor", types.TypeOid, "admin_option", types.TypeBool),
		// lockd has no extensions (not even PostgreSQL's plpgsql)
		emptyView("pg_extension", oidPgExtension, "oid", types.TypeOid, "extname", types.TypeName, "extowner", types.TypeOid,
			"extnamespace", types.TypeOid, "extrelocatable", types.TypeBool, "extversion", types.TypeText,
			"extconfig", typeOidArray, "extcondition", types.TypeTextArray),
		emptyView("pg_description", oidPgDescription, "objoid", types.TypeOid, "classoid", types.TypeOid, "objsubid", types.TypeInt4, "description", types.TypeText),
		emptyView("pg_policy", oidPgPolicy, "oid", types.TypeOid, "polname", types.TypeName, "polrelid", types.TypeOid, "polcmd", types.TypeChar,
			"polpermissive", types.TypeBool, "polroles", typeOidArray, "polqual", types.TypeNodeTree, "polwithcheck", types.TypeNodeTree),
		emptyView("pg_statistic_ext", oidPgStatExt, "oid", types.TypeOid, "stxrelid", types.TypeOid, "stxname", types.TypeName,
			"stxnamespace", types.TypeOid, "stxowner", types.TypeOid, "stxstattarget", types.TypeInt4, "stxkeys", typeInt2Vector,
			"stxkind", typeCharArray, "stxexprs", types.TypeNodeTree),
		emptyView("pg_publication", oidPgPublication, "oid", types.TypeOid, "pubname", types.TypeName, "pubowner", types.TypeOid,
			"puballtables", types.TypeBool, "pubinsert", types.TypeBool, "pubupdate", types.TypeBool, "pubdelete", types.TypeBool,
			"pubtruncate", types.TypeBool, "pubviaroot", types.TypeBool),
		emptyView("pg_publication_namespace", oidPgPubNsp, "oid", types.TypeOid, "pnpubid", types.TypeOid, "pnnspid", types.TypeOid),
		emptyView("pg_publication_rel", oidPgPubRel, "oid", types.TypeOid, "prpubid", types.TypeOid, "prrelid", types.TypeOid,
			"prqual", types.TypeNodeTree, "prattrs", typeInt2Vector),
		emptyView("pg_trigger", oidPgTrigger, "oid", types.TypeOid, "tgrelid", types.TypeOid, "tgparentid", types.TypeOid, "tgname", types.TypeName,
			"tgfoid", types.TypeOid, "tgtype", types.TypeInt2, "tgenabled", types.TypeChar, "tgisinternal", types.TypeBool,
			"tgconstrrelid", types.TypeOid, "tgconstrindid", types.TypeOid, "tgconstraint", types.TypeOid, "tgdeferrable", types.TypeBool,
			"tginitdeferred", types.TypeBool, "tgnargs", types.TypeInt2, "tgattr", typeInt2Vector, "tgqual", types.TypeNodeTree,
			"tgoldtable", types.TypeName, "tgnewtable", types.TypeName),
	}
}

func emptyView(name string, oid uint32, spec ...any) *expr.View {
	return &expr.View{Name: name, Oid: oid, Cols: Cols(oid, spec...), Rows: func(*expr.EvalCtx, func([]types.Datum) error) error { return nil }}
}

func charDatum(c byte) types.Datum {
	if c == 0 {
		return types.TextDatum("")
	}
	return types.TextDatum(string(c))
}

func int2Vector(vals []int16) types.Datum {
	d := types.Datum{A: make([]types.Datum, len(vals))}
	for i, v := range vals {
		d.A[i] = types.IntDatum(int64(v))
	}
	return d
}

func pgClassView() *expr.View {
	return &expr.View{
		Name: "pg_class", Oid: oidPgClass,
		Cols: Cols(oidPgClass,
			"oid", types.TypeOid, "relname", types.TypeName, "relnamespace", types.TypeOid, "reltype", types.TypeOid, "reloftype", types.TypeOid,
			"relowner", types.TypeOid, "relam", types.TypeOid, "relfilenode", types.TypeOid, "reltablespace", types.TypeOid, "relpages", types.TypeInt4,
			"reltuples", types.TypeFloat4, "relallvisible", types.TypeInt4, "reltoastrelid", types.TypeOid, "relhasindex", types.TypeBool,
			"relisshared", types.TypeBool, "relpersistence", types.TypeChar, "relkind", types.TypeChar, "relnatts", types.TypeInt2,
			"relchecks", types.TypeInt2, "relhasrules", types.TypeBool, "relhastriggers", types.TypeBool, "relhassubclass", types.TypeBool,
			"relrowsecurity", types.TypeBool, "relforcerowsecurity", types.TypeBool, "relispopulated", types.TypeBool,
			"relreplident", types.TypeChar, "relispartition", types.TypeBool, "relrewrite", types.TypeOid, "relfrozenxid", types.TypeXid,
			"relminmxid", types.TypeXid, "relacl", typeAclArray, "reloptions", types.TypeTextArray, "relpartbound", types.TypeNodeTree),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			s := ec.B
			cat := s.Cat()
			cons := funcs.ConstraintRows(s)
			for _, r := range s.Relations() {
				row := make([]types.Datum, 33)
				row[0], row[1], row[2] = types.OIDDatum(r.Oid), types.TextDatum(r.Name), types.OIDDatum(r.Nsp)
				row[3], row[4], row[5] = types.OIDDatum(0), types.OIDDatum(0), types.OIDDatum(catalog.BootstrapRoleOID)
				row[6], row[7], row[8] = types.OIDDatum(0), types.OIDDatum(0), types.OIDDatum(0)
				row[9], row[10], row[11], row[12] = types.IntDatum(0), types.FloatDatum(-1), types.IntDatum(0), types.OIDDatum(0)
				row[13], row[14], row[15], row[16] = types.BoolDatum(false), types.BoolDatum(false), charDatum('p'), charDatum(r.Kind)
				row[17], row[18] = types.IntDatum(0), types.IntDatum(0)
				for i := 19; i <= 25; i++ {
					row[i] = types.BoolDatum(false)
				}
				row[24] = types.BoolDatum(true) // relispopulated
				row[25] = charDatum('d')
				row[26], row[27], row[28], row[29] = types.BoolDatum(false), types.OIDDatum(0), types.IntDatum(0), types.IntDatum(0)
				row[30], row[31], row[32] = types.NullDatum, types.NullDatum, types.NullDatum
				switch {
				case r.Table != nil:
					t := r.Table
					if !t.Partitioned() {
						row[6] = types.OIDDatum(amHeap)
						row[7] = types.OIDDatum(t.RelFile)
					}
					if ts := cat.TableStats(t.OID); ts != nil { // as VACUUM, ANALYZE or CREATE INDEX last saw it
						row[9], row[10] = types.IntDatum(int64(ts.RelPages)), types.FloatDatum(ts.RelTuples)
						row[11] = types.IntDatum(int64(ts.RelAllVisible))
					}
					if t.Unlogged {
						row[15] = charDatum('u')
					}
					row[13] = types.BoolDatum(len(t.Indexes) > 0)
					row[17] = types.IntDatum(int64(t.Natts()))
					checks, triggers := 0, false
					for _, c := range cons {
						if c.Rel == t.OID && c.Kind == 'c' {
							checks++
						}
						if c.Kind == 'f' && (c.Rel == t.OID || c.RefRel == t.OID) {
							triggers = true
						}
					}
					row[18], row[20] = types.IntDatum(int64(checks)), types.BoolDatum(triggers)
					row[21] = types.BoolDatum(t.HasPartitions(cat))
					if t.Fillfactor != 0 {
						row[31] = types.Datum{A: []types.Datum{types.TextDatum("fillfactor=" + types.Itoa(int64(t.Fillfactor)))}}
					}
					if b, ok := t.PartitionBound(); ok {
						row[26] = types.BoolDatum(true)
						row[32] = types.TextDatum(b)
					}
				case r.Index != nil:
					ix := r.Index
					if r.Kind == 'i' {
						row[6] = types.OIDDatum(amBtree)
						row[7] = types.OIDDatum(ix.RelFile)
						tuples, pages := cat.IndexStats(ix.OID)
						if cat.TableStats(ix.OID) == nil { // made before lockd kept statistics
							pages, _, _ = s.IndexSize(ix)
						}
						row[9], row[10] = types.IntDatum(int64(pages)), types.FloatDatum(tuples)
					} else {
						row[6] = types.OIDDatum(amBtree)
						row[10] = types.FloatDatum(0) // a partitioned index, as PostgreSQL shows one
					}
					if t := cat.Tables[ix.Table]; t != nil && t.Unlogged {
						row[15] = charDatum('u')
					}
					row[17] = types.IntDatum(int64(len(ix.Cols)))
					row[25] = charDatum('n')
					row[26] = types.BoolDatum(ix.ParentIndex() != 0)
				case r.View != nil:
					row[17] = types.IntDatum(int64(len(r.View.Cols)))
					row[25] = charDatum('n')
				case r.Seq != nil:
					seqClassRow(row, r.Seq) // sequences.go
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgNamespaceView() *expr.View {
	return &expr.View{
		Name: "pg_namespace", Oid: oidPgNamespace,
		Cols: Cols(oidPgNamespace, "oid", types.TypeOid, "nspname", types.TypeName, "nspowner", types.TypeOid, "nspacl", typeAclArray),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, n := range catalog.Namespaces {
				if err := emit([]types.Datum{types.OIDDatum(n.Oid), types.TextDatum(n.Name), types.OIDDatum(n.Owner), types.NullDatum}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func attributeRows(s *expr.Backend) []catalog.AttrRow {
	var out []catalog.AttrRow
	for _, r := range s.Relations() {
		switch {
		case r.Table != nil:
			out = append(out, catalog.TableAttributes(r.Table)...) // sql/catalog/rowlayout.go
		case r.Index != nil:
			t := s.Cat().Tables[r.Index.Table]
			if t == nil {
				continue
			}
			for i, c := range r.Index.Cols {
				out = append(out, catalog.AttrRow{Rel: r.Oid, Name: r.Index.ColName(t, i), T: t.Cols[c].Type(), Num: int16(i + 1)})
			}
		case r.View != nil:
			for i, c := range r.View.Cols {
				out = append(out, catalog.AttrRow{Rel: r.Oid, Name: c.Name, T: c.Type, Num: int16(i + 1)})
			}
		case r.Seq != nil:
			out = append(out, seqAttributes(r.Oid)...)
		}
	}
	return out
}

func pgAttributeView() *expr.View {
	return &expr.View{
		Name: "pg_attribute", Oid: oidPgAttribute,
		Cols: Cols(oidPgAttribute,
			"attrelid", types.TypeOid, "attname", types.TypeName, "atttypid", types.TypeOid, "attstattarget", types.TypeInt4, "attlen", types.TypeInt2,
			"attnum", types.TypeInt2, "attndims", types.TypeInt4, "attcacheoff", types.TypeInt4, "atttypmod", types.TypeInt4, "attbyval", types.TypeBool,
			"attalign", types.TypeChar, "attstorage", types.TypeChar, "attcompression", types.TypeChar, "attnotnull", types.TypeBool,
			"atthasdef", types.TypeBool, "atthasmissing", types.TypeBool, "attidentity", types.TypeChar, "attgenerated", types.TypeChar,
			"attisdropped", types.TypeBool, "attislocal", types.TypeBool, "attinhcount", types.TypeInt4, "attcollation", types.TypeOid,
			"attacl", typeAclArray, "attoptions", types.TypeTextArray, "attfdwoptions", types.TypeTextArray,
			"attmissingval", types.TypeTextArray), // anyarray in PostgreSQL
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			colls := map[uint32]uint32{}
			for _, tr := range pgTypes() {
				colls[tr.t.OID] = tr.collate
			}
			for _, a := range attributeRows(ec.B) {
				ndims := int64(0)
				if types.IsArray(a.T) {
					ndims = 1
				}
				byval := a.T.Len > 0 && a.T.Len <= 8
				align, storage := typeAlignStorage(a.T)
				typ, stattarget := a.T.OID, int64(-1)
				if a.StatTarget != nil {
					stattarget = int64(*a.StatTarget)
				}
				if a.Dropped { // RemoveAttributeById keeps the storage properties only
					typ, stattarget = 0, 0
				}
				missing := types.NullDatum
				if a.Missing != nil {
					missing = types.Datum{A: []types.Datum{types.TextDatum(string(types.AppendText(nil, a.T, *a.Missing, nil)))}}
				}
				row := []types.Datum{
					types.OIDDatum(a.Rel), types.TextDatum(a.Name), types.OIDDatum(typ), types.IntDatum(stattarget), types.IntDatum(int64(a.T.Len)),
					types.IntDatum(int64(a.Num)), types.IntDatum(ndims), types.IntDatum(-1), types.IntDatum(int64(a.T.Mod)), types.BoolDatum(byval),
					charDatum(align), charDatum(storage), charDatum(0), types.BoolDatum(a.NotNull),
					types.BoolDatum(a.HasDef), types.BoolDatum(a.Missing != nil), charDatum(a.Identity), charDatum(0),
					types.BoolDatum(a.Dropped), types.BoolDatum(true), types.IntDatum(0), types.OIDDatum(colls[a.T.OID]),
					types.NullDatum, types.NullDatum, types.NullDatum, missing,
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgIndexView() *expr.View {
	return &expr.View{
		Name: "pg_index", Oid: oidPgIndex,
		Cols: Cols(oidPgIndex,
			"indexrelid", types.TypeOid, "indrelid", types.TypeOid, "indnatts", types.TypeInt2, "indnkeyatts", types.TypeInt2, "indisunique", types.TypeBool,
			"indnullsnotdistinct", types.TypeBool, "indisprimary", types.TypeBool, "indisexclusion", types.TypeBool, "indimmediate", types.TypeBool,
			"indisclustered", types.TypeBool, "indisvalid", types.TypeBool, "indcheckxmin", types.TypeBool, "indisready", types.TypeBool,
			"indislive", types.TypeBool, "indisreplident", types.TypeBool, "indkey", typeInt2Vector, "indcollation", typeOidVector,
			"indclass", typeOidVector, "indoption", typeInt2Vector, "indexprs", types.TypeNodeTree, "indpred", types.TypeNodeTree),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			cat := ec.B.Cat()
			for _, r := range ec.B.Relations() {
				ix := r.Index
				if ix == nil {
					continue
				}
				t := cat.Tables[ix.Table]
				if t == nil {
					continue
				}
				var keys, opts []int16
				coll := types.Datum{A: []types.Datum{}}
				class := types.Datum{A: []types.Datum{}}
				for _, c := range ix.Cols {
					keys = append(keys, t.Attnum(c))
					opts = append(opts, 0)
					coll.A = append(coll.A, types.OIDDatum(pgTypeCollation(t.Cols[c].TypeOID)))
					class.A = append(class.A, types.OIDDatum(0))
				}
				n := types.IntDatum(int64(len(ix.Cols)))
				row := []types.Datum{
					types.OIDDatum(ix.OID), types.OIDDatum(t.OID), n, n, types.BoolDatum(ix.Unique),
					types.BoolDatum(false), types.BoolDatum(ix.Primary), types.BoolDatum(false), types.BoolDatum(true),
					types.BoolDatum(false), types.BoolDatum(true), types.BoolDatum(ix.CheckXmin), types.BoolDatum(true),
					types.BoolDatum(true), types.BoolDatum(false), int2Vector(keys), coll,
					class, int2Vector(opts), types.NullDatum, types.NullDatum,
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgInheritsView() *expr.View {
	return &expr.View{
		Name: "pg_inherits", Oid: oidPgInherits,
		Cols: Cols(oidPgInherits, "inhrelid", types.TypeOid, "inhparent", types.TypeOid, "inhseqno", types.TypeInt4, "inhdetachpending", types.TypeBool),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, r := range ec.B.Relations() {
				var parent uint32
				switch {
				case r.Table != nil:
					parent = r.Table.ParentOID()
				case r.Index != nil:
					parent = r.Index.ParentIndex()
				}
				if parent == 0 {
					continue
				}
				if err := emit([]types.Datum{types.OIDDatum(r.Oid), types.OIDDatum(parent), types.IntDatum(1), types.BoolDatum(false)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgPartitionedTableView() *expr.View {
	return &expr.View{
		Name: "pg_partitioned_table", Oid: oidPgPartTable,
		Cols: Cols(oidPgPartTable, "partrelid", types.TypeOid, "partstrat", types.TypeChar, "partnatts", types.TypeInt2, "partdefid", types.TypeOid,
			"partattrs", typeInt2Vector, "partclass", typeOidVector, "partcollation", typeOidVector, "partexprs", types.TypeNodeTree),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			cat := ec.B.Cat()
			for _, r := range ec.B.Relations() {
				t := r.Table
				if t == nil || !t.Partitioned() {
					continue
				}
				strat, keys, def := t.PartitionKey(cat)
				class := types.Datum{A: []types.Datum{}}
				coll := types.Datum{A: []types.Datum{}}
				for _, k := range t.PartKey {
					class.A = append(class.A, types.OIDDatum(0))
					coll.A = append(coll.A, types.OIDDatum(pgTypeCollation(t.Cols[k].TypeOID)))
				}
				row := []types.Datum{types.OIDDatum(t.OID), charDatum(strat), types.IntDatum(int64(len(keys))), types.OIDDatum(def),
					int2Vector(keys), class, coll, types.NullDatum}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// inhCount is coninhcount: 1 for a constraint inherited from one parent.
func inhCount(inherited bool) int64 {
	if inherited {
		return 1
	}
	return 0
}

func int2Array(vals []int16) types.Datum {
	if vals == nil {
		return types.NullDatum
	}
	return int2Vector(vals)
}

func pgConstraintView() *expr.View {
	return &expr.View{
		Name: "pg_constraint", Oid: oidPgConstraint,
		Cols: Cols(oidPgConstraint,
			"oid", types.TypeOid, "conname", types.TypeName, "connamespace", types.TypeOid, "contype", types.TypeChar, "condeferrable", types.TypeBool,
			"condeferred", types.TypeBool, "convalidated", types.TypeBool, "conrelid", types.TypeOid, "contypid", types.TypeOid, "conindid", types.TypeOid,
			"conparentid", types.TypeOid, "confrelid", types.TypeOid, "confupdtype", types.TypeChar, "confdeltype", types.TypeChar,
			"confmatchtype", types.TypeChar, "conislocal", types.TypeBool, "coninhcount", types.TypeInt4, "connoinherit", types.TypeBool,
			"conkey", types.Type{OID: types.OIDInt2Array, Len: -1, Mod: -1, Name: "smallint[]"}, "confkey", types.Type{OID: types.OIDInt2Array, Len: -1, Mod: -1, Name: "smallint[]"},
			"conpfeqop", typeOidArray, "conppeqop", typeOidArray, "conffeqop", typeOidArray,
			"confdelsetcols", types.Type{OID: types.OIDInt2Array, Len: -1, Mod: -1, Name: "smallint[]"}, "conexclop", typeOidArray, "conbin", types.TypeNodeTree),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, c := range funcs.ConstraintRows(ec.B) {
				row := []types.Datum{
					types.OIDDatum(c.Oid), types.TextDatum(c.Name), types.OIDDatum(catalog.NspPublic), charDatum(c.Kind), types.BoolDatum(false),
					types.BoolDatum(false), types.BoolDatum(!c.NotValid), types.OIDDatum(c.Rel), types.OIDDatum(0), types.OIDDatum(c.Index),
					types.OIDDatum(c.Parent), types.OIDDatum(c.RefRel), charDatum(c.OnUpdate), charDatum(c.OnDelete),
					charDatum(c.Match), types.BoolDatum(!c.Inherited), types.IntDatum(inhCount(c.Inherited)), types.BoolDatum(c.NoInherit),
					int2Array(c.Cols), int2Array(c.RefCols),
					types.NullDatum, types.NullDatum, types.NullDatum,
					types.NullDatum, types.NullDatum, types.NullDatum,
				}
				if c.Kind == 'f' {
					row[12], row[13], row[14] = charDatum(c.OnUpdate), charDatum(c.OnDelete), charDatum(c.Match)
				} else {
					row[12], row[13], row[14] = charDatum(' '), charDatum(' '), charDatum(' ')
				}
				if c.Kind == 'c' {
					row[25] = types.TextDatum(c.Def)
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgDatabaseView() *expr.View {
	return &expr.View{
		Name: "pg_database", Oid: oidPgDatabase,
		Cols: Cols(oidPgDatabase,
			"oid", types.TypeOid, "datname", types.TypeName, "datdba", types.TypeOid, "encoding", types.TypeInt4, "datlocprovider", types.TypeChar,
			"datistemplate", types.TypeBool, "datallowconn", types.TypeBool, "datconnlimit", types.TypeInt4, "datfrozenxid", types.TypeXid,
			"datminmxid", types.TypeXid, "dattablespace", types.TypeOid, "datcollate", types.TypeText, "datctype", types.TypeText,
			"daticulocale", types.TypeText, "datcollversion", types.TypeText, "datacl", typeAclArray),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			// lockd serves one database, under whatever name a client
			// connects with.
			row := []types.Datum{
				types.OIDDatum(catalog.DatabaseOID), types.TextDatum(ec.B.Database), types.OIDDatum(catalog.BootstrapRoleOID), types.IntDatum(6), charDatum('c'),
				types.BoolDatum(false), types.BoolDatum(true), types.IntDatum(-1), types.IntDatum(0),
				types.IntDatum(1), types.OIDDatum(1663), types.TextDatum("C"), types.TextDatum("C"),
				types.NullDatum, types.NullDatum, types.NullDatum,
			}
			return emit(row)
		},
	}
}

func pgRolesView() *expr.View {
	return &expr.View{
		Name: "pg_roles", Oid: oidPgRoles,
		Cols: Cols(oidPgRoles,
			"rolname", types.TypeName, "rolsuper", types.TypeBool, "rolinherit", types.TypeBool, "rolcreaterole", types.TypeBool,
			"rolcreatedb", types.TypeBool, "rolcanlogin", types.TypeBool, "rolreplication", types.TypeBool, "rolconnlimit", types.TypeInt4,
			"rolpassword", types.TypeText, "rolvaliduntil", types.TypeTimestamptz, "rolbypassrls", types.TypeBool, "rolconfig", types.TypeTextArray,
			"oid", types.TypeOid),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			// pg_roles shows every role's password as asterisks.
			for _, r := range ec.B.Cat().RolesByOID() {
				if err := emit([]types.Datum{types.TextDatum(r.Name), types.BoolDatum(r.Super), types.BoolDatum(r.Inherit),
					types.BoolDatum(r.CreateRole), types.BoolDatum(r.CreateDB), types.BoolDatum(r.CanLogin), types.BoolDatum(r.Replication),
					types.IntDatum(int64(r.ConnLimit)), types.TextDatum("********"), validUntil(r), types.BoolDatum(r.BypassRLS),
					types.NullDatum, types.OIDDatum(r.OID)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// pgAuthidView is pg_authid, which only superusers may read: it holds
// the password verifiers.
func pgAuthidView() *expr.View {
	return &expr.View{
		Name: "pg_authid", Oid: oidPgAuthid,
		Cols: Cols(oidPgAuthid,
			"oid", types.TypeOid, "rolname", types.TypeName, "rolsuper", types.TypeBool, "rolinherit", types.TypeBool,
			"rolcreaterole", types.TypeBool, "rolcreatedb", types.TypeBool, "rolcanlogin", types.TypeBool, "rolreplication", types.TypeBool,
			"rolbypassrls", types.TypeBool, "rolconnlimit", types.TypeInt4, "rolpassword", types.TypeText, "rolvaliduntil", types.TypeTimestamptz),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if !ec.B.Superuser() {
				return pgerr.New(pgerr.InsufficientPrivilege, "permission denied for table pg_authid")
			}
			for _, r := range ec.B.Cat().RolesByOID() {
				pw := types.NullDatum
				if r.Password != "" {
					pw = types.TextDatum(r.Password)
				}
				if err := emit([]types.Datum{types.OIDDatum(r.OID), types.TextDatum(r.Name), types.BoolDatum(r.Super), types.BoolDatum(r.Inherit),
					types.BoolDatum(r.CreateRole), types.BoolDatum(r.CreateDB), types.BoolDatum(r.CanLogin), types.BoolDatum(r.Replication),
					types.BoolDatum(r.BypassRLS), types.IntDatum(int64(r.ConnLimit)), pw, validUntil(r)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// pgUserView is pg_user: the roles that can log in.
func pgUserView() *expr.View {
	return &expr.View{
		Name: "pg_user", Oid: oidPgUser,
		Cols: Cols(oidPgUser,
			"usename", types.TypeName, "usesysid", types.TypeOid, "usecreatedb", types.TypeBool, "usesuper", types.TypeBool,
			"userepl", types.TypeBool, "usebypassrls", types.TypeBool, "passwd", types.TypeText, "valuntil", types.TypeTimestamptz,
			"useconfig", types.TypeTextArray),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, r := range ec.B.Cat().RolesByOID() {
				if !r.CanLogin {
					continue
				}
				if err := emit([]types.Datum{types.TextDatum(r.Name), types.OIDDatum(r.OID), types.BoolDatum(r.CreateDB), types.BoolDatum(r.Super),
					types.BoolDatum(r.Replication), types.BoolDatum(r.BypassRLS), types.TextDatum("********"), validUntil(r), types.NullDatum}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func validUntil(r *catalog.RoleDef) types.Datum {
	if r.ValidUntil == nil {
		return types.NullDatum
	}
	return types.IntDatum(*r.ValidUntil)
}

func pgAmView() *expr.View {
	return &expr.View{
		Name: "pg_am", Oid: oidPgAm,
		Cols: Cols(oidPgAm, "oid", types.TypeOid, "amname", types.TypeName, "amhandler", types.TypeRegproc, "amtype", types.TypeChar),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if err := emit([]types.Datum{types.OIDDatum(amHeap), types.TextDatum("heap"), types.OIDDatum(3), charDatum('t')}); err != nil {
				return err
			}
			return emit([]types.Datum{types.OIDDatum(amBtree), types.TextDatum("btree"), types.OIDDatum(330), charDatum('i')})
		},
	}
}

func pgAttrdefView() *expr.View {
	return &expr.View{
		Name: "pg_attrdef", Oid: oidPgAttrdef,
		Cols: Cols(oidPgAttrdef, "oid", types.TypeOid, "adrelid", types.TypeOid, "adnum", types.TypeInt2, "adbin", types.TypeNodeTree),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, r := range ec.B.Relations() {
				if r.Table == nil {
					continue
				}
				for i, c := range r.Table.Cols {
					if c.Default == "" || c.Identity != "" {
						continue
					}
					// A stable OID per default: lockd keeps no OID for it.
					n := r.Table.Attnum(i)
					oid := r.Oid<<8 | uint32(n)&0xff
					row := []types.Datum{types.OIDDatum(oid), types.OIDDatum(r.Oid), types.IntDatum(int64(n)), types.TextDatum(defaultText(ec.B, &r.Table.Cols[i]))}
					if err := emit(row); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
}

func pgCollationView() *expr.View {
	return &expr.View{
		Name: "pg_collation", Oid: oidPgCollation,
		Cols: Cols(oidPgCollation, "oid", types.TypeOid, "collname", types.TypeName, "collnamespace", types.TypeOid, "collowner", types.TypeOid,
			"collprovider", types.TypeChar, "collisdeterministic", types.TypeBool, "collencoding", types.TypeInt4, "collcollate", types.TypeText,
			"collctype", types.TypeText, "colliculocale", types.TypeText, "collversion", types.TypeText),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			for _, c := range []struct {
				oid       uint32
				name, loc string
				prov      byte
			}{{100, "default", "", 'd'}, {950, "C", "C", 'c'}, {951, "POSIX", "POSIX", 'c'}} {
				loc := types.NullDatum
				if c.loc != "" {
					loc = types.TextDatum(c.loc)
				}
				row := []types.Datum{types.OIDDatum(c.oid), types.TextDatum(c.name), types.OIDDatum(catalog.NspPgCatalog), types.OIDDatum(catalog.BootstrapRoleOID),
					charDatum(c.prov), types.BoolDatum(true), types.IntDatum(-1), loc, loc, types.NullDatum, types.NullDatum}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgTablespaceView() *expr.View {
	return &expr.View{
		Name: "pg_tablespace", Oid: oidPgTablespace,
		Cols: Cols(oidPgTablespace, "oid", types.TypeOid, "spcname", types.TypeName, "spcowner", types.TypeOid, "spcacl", typeAclArray, "spcoptions", types.TypeTextArray),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			if err := emit([]types.Datum{types.OIDDatum(1663), types.TextDatum("pg_default"), types.OIDDatum(catalog.BootstrapRoleOID), types.NullDatum, types.NullDatum}); err != nil {
				return err
			}
			return emit([]types.Datum{types.OIDDatum(1664), types.TextDatum("pg_global"), types.OIDDatum(catalog.BootstrapRoleOID), types.NullDatum, types.NullDatum})
		},
	}
}

func pgTablesView() *expr.View {
	return &expr.View{
		Name: "pg_tables", Oid: oidPgTables,
		Cols: Cols(oidPgTables, "schemaname", types.TypeName, "tablename", types.TypeName, "tableowner", types.TypeName, "tablespace", types.TypeName,
			"hasindexes", types.TypeBool, "hasrules", types.TypeBool, "hastriggers", types.TypeBool, "rowsecurity", types.TypeBool),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			cons := funcs.ConstraintRows(ec.B)
			for _, r := range ec.B.Relations() {
				if r.Table == nil {
					continue
				}
				trig := false
				for _, c := range cons {
					if c.Kind == 'f' && (c.Rel == r.Oid || c.RefRel == r.Oid) {
						trig = true
					}
				}
				row := []types.Datum{types.TextDatum("public"), types.TextDatum(r.Name), types.TextDatum(ec.B.Cat().OwnerName()), types.NullDatum,
					types.BoolDatum(len(r.Table.Indexes) > 0), types.BoolDatum(false), types.BoolDatum(trig), types.BoolDatum(false)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgIndexesView() *expr.View {
	return &expr.View{
		Name: "pg_indexes", Oid: oidPgIndexes,
		Cols: Cols(oidPgIndexes, "schemaname", types.TypeName, "tablename", types.TypeName, "indexname", types.TypeName, "tablespace", types.TypeName, "indexdef", types.TypeText),
		Rows: func(ec *expr.EvalCtx, emit func([]types.Datum) error) error {
			cat := ec.B.Cat()
			for _, r := range ec.B.Relations() {
				if r.Index == nil {
					continue
				}
				t := cat.Tables[r.Index.Table]
				if t == nil {
					continue
				}
				row := []types.Datum{types.TextDatum("public"), types.TextDatum(t.Name), types.TextDatum(r.Name), types.NullDatum, types.TextDatum(funcs.IndexDef(ec.B, r.Index, false))}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// defaultText is how pg_get_expr prints a column default.
func defaultText(s *expr.Backend, c *catalog.ColumnDef) string {
	if text, ok := analyze.PrettyDefault(s, c); ok { // sql/analyze/ruleutils.go
		return text
	}
	return strings.TrimSpace(c.Default)
}

func Cols(oid uint32, spec ...any) []types.Column {
	var out []types.Column
	for i := 0; i < len(spec); i += 2 {
		out = append(out, types.Column{Name: spec[i].(string), Type: spec[i+1].(types.Type), TableOID: oid, Attnum: int16(i/2 + 1)})
	}
	return out
}

func nullableText(p *string) types.Datum {
	if p == nil {
		return types.NullDatum
	}
	return types.TextDatum(*p)
}

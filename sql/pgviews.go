package sql

import (
	"strings"

	"lockd/storage"
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
	oidPgPartTable   = 3350
	oidPgStatExt     = 3381
	oidPgCollation   = 3456
	oidPgPublication = 6104
	oidPgPubRel      = 6106
	oidPgPubNsp      = 6237
	oidPgRoles       = 12001
	oidPgTables      = 12014
	oidPgIndexes     = 12018
)

// Types of catalog columns that lockd represents with close stand-ins.
var (
	typeInt2Vector = Type{OIDInt2Array, -1, -1, "int2vector"}
	typeOidVector  = Type{1028, -1, -1, "oidvector"}
	typeOidArray   = Type{1028, -1, -1, "oid[]"}
	typeCharArray  = Type{1002, -1, -1, "\"char\"[]"}
	typeAclArray   = TypeTextArray // aclitem[]: always NULL here
)

func catalogViews() []*view {
	return []*view{
		pgClassView(), pgNamespaceView(), pgAttributeView(), pgTypeView(), pgIndexView(), pgInheritsView(),
		pgPartitionedTableView(), pgConstraintView(), pgDatabaseView(), pgRolesView(), pgAmView(),
		pgAttrdefView(), pgCollationView(), pgTablespaceView(), pgTablesView(), pgIndexesView(),
		emptyView("pg_auth_members", oidPgAuthMembers, "oid", TypeOid, "roleid", TypeOid, "member", TypeOid, "grantor", TypeOid, "admin_option", TypeBool),
		emptyView("pg_description", oidPgDescription, "objoid", TypeOid, "classoid", TypeOid, "objsubid", TypeInt4, "description", TypeText),
		emptyView("pg_policy", oidPgPolicy, "oid", TypeOid, "polname", TypeName, "polrelid", TypeOid, "polcmd", TypeChar,
			"polpermissive", TypeBool, "polroles", typeOidArray, "polqual", TypeNodeTree, "polwithcheck", TypeNodeTree),
		emptyView("pg_statistic_ext", oidPgStatExt, "oid", TypeOid, "stxrelid", TypeOid, "stxname", TypeName,
			"stxnamespace", TypeOid, "stxowner", TypeOid, "stxstattarget", TypeInt4, "stxkeys", typeInt2Vector,
			"stxkind", typeCharArray, "stxexprs", TypeNodeTree),
		emptyView("pg_publication", oidPgPublication, "oid", TypeOid, "pubname", TypeName, "pubowner", TypeOid,
			"puballtables", TypeBool, "pubinsert", TypeBool, "pubupdate", TypeBool, "pubdelete", TypeBool,
			"pubtruncate", TypeBool, "pubviaroot", TypeBool),
		emptyView("pg_publication_namespace", oidPgPubNsp, "oid", TypeOid, "pnpubid", TypeOid, "pnnspid", TypeOid),
		emptyView("pg_publication_rel", oidPgPubRel, "oid", TypeOid, "prpubid", TypeOid, "prrelid", TypeOid,
			"prqual", TypeNodeTree, "prattrs", typeInt2Vector),
		emptyView("pg_trigger", oidPgTrigger, "oid", TypeOid, "tgrelid", TypeOid, "tgparentid", TypeOid, "tgname", TypeName,
			"tgfoid", TypeOid, "tgtype", TypeInt2, "tgenabled", TypeChar, "tgisinternal", TypeBool,
			"tgconstrrelid", TypeOid, "tgconstrindid", TypeOid, "tgconstraint", TypeOid, "tgdeferrable", TypeBool,
			"tginitdeferred", TypeBool, "tgnargs", TypeInt2, "tgattr", typeInt2Vector, "tgqual", TypeNodeTree,
			"tgoldtable", TypeName, "tgnewtable", TypeName),
	}
}

func emptyView(name string, oid uint32, spec ...any) *view {
	return &view{name: name, oid: oid, cols: cols(oid, spec...), rows: func(*evalCtx, func([]Datum) error) error { return nil }}
}

func oidDatum(o uint32) Datum { return intDatum(int64(o)) }

func charDatum(c byte) Datum {
	if c == 0 {
		return textDatum("")
	}
	return textDatum(string(c))
}

func int2Vector(vals []int16) Datum {
	d := Datum{A: make([]Datum, len(vals))}
	for i, v := range vals {
		d.A[i] = intDatum(int64(v))
	}
	return d
}

func pgClassView() *view {
	return &view{
		name: "pg_class", oid: oidPgClass,
		cols: cols(oidPgClass,
			"oid", TypeOid, "relname", TypeName, "relnamespace", TypeOid, "reltype", TypeOid, "reloftype", TypeOid,
			"relowner", TypeOid, "relam", TypeOid, "relfilenode", TypeOid, "reltablespace", TypeOid, "relpages", TypeInt4,
			"reltuples", TypeFloat4, "relallvisible", TypeInt4, "reltoastrelid", TypeOid, "relhasindex", TypeBool,
			"relisshared", TypeBool, "relpersistence", TypeChar, "relkind", TypeChar, "relnatts", TypeInt2,
			"relchecks", TypeInt2, "relhasrules", TypeBool, "relhastriggers", TypeBool, "relhassubclass", TypeBool,
			"relrowsecurity", TypeBool, "relforcerowsecurity", TypeBool, "relispopulated", TypeBool,
			"relreplident", TypeChar, "relispartition", TypeBool, "relrewrite", TypeOid, "relfrozenxid", TypeXid,
			"relminmxid", TypeXid, "relacl", typeAclArray, "reloptions", TypeTextArray, "relpartbound", TypeNodeTree),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			s := ec.s
			cat := s.cat()
			cons := constraintRows(s)
			for _, r := range s.relations() {
				row := make([]Datum, 33)
				row[0], row[1], row[2] = oidDatum(r.oid), textDatum(r.name), oidDatum(r.nsp)
				row[3], row[4], row[5] = oidDatum(0), oidDatum(0), oidDatum(bootstrapRoleOID)
				row[6], row[7], row[8] = oidDatum(0), oidDatum(0), oidDatum(0)
				row[9], row[10], row[11], row[12] = intDatum(0), floatDatum(-1), intDatum(0), oidDatum(0)
				row[13], row[14], row[15], row[16] = boolDatum(false), boolDatum(false), charDatum('p'), charDatum(r.kind)
				row[17], row[18] = intDatum(0), intDatum(0)
				for i := 19; i <= 25; i++ {
					row[i] = boolDatum(false)
				}
				row[24] = boolDatum(true) // relispopulated
				row[25] = charDatum('d')
				row[26], row[27], row[28], row[29] = boolDatum(false), oidDatum(0), intDatum(0), intDatum(0)
				row[30], row[31], row[32] = NullDatum, NullDatum, NullDatum
				switch {
				case r.table != nil:
					t := r.table
					if !t.Partitioned() {
						row[6] = oidDatum(amHeap)
						row[7] = oidDatum(t.RelFile)
						n, _ := s.store.RelationPages(storage.RelID(t.RelFile))
						row[9] = intDatum(int64(n))
					}
					if t.Unlogged {
						row[15] = charDatum('u')
					}
					row[13] = boolDatum(len(t.Indexes) > 0)
					row[17] = intDatum(int64(t.natts()))
					checks, triggers := 0, false
					for _, c := range cons {
						if c.rel == t.OID && c.kind == 'c' {
							checks++
						}
						if c.kind == 'f' && (c.rel == t.OID || c.refRel == t.OID) {
							triggers = true
						}
					}
					row[18], row[20] = intDatum(int64(checks)), boolDatum(triggers)
					row[21] = boolDatum(t.hasPartitions(cat))
					if t.Fillfactor != 0 {
						row[31] = Datum{A: []Datum{textDatum("fillfactor=" + itoa(int64(t.Fillfactor)))}}
					}
					if b, ok := t.partitionBound(); ok {
						row[26] = boolDatum(true)
						row[32] = textDatum(b)
					}
				case r.index != nil:
					ix := r.index
					if r.kind == 'i' {
						row[6] = oidDatum(amBtree)
						row[7] = oidDatum(ix.RelFile)
						row[9] = intDatum(int64(s.store.IndexPages(storage.RelID(ix.RelFile))))
					} else {
						row[6] = oidDatum(amBtree)
					}
					if t := cat.Tables[ix.Table]; t != nil && t.Unlogged {
						row[15] = charDatum('u')
					}
					row[17] = intDatum(int64(len(ix.Cols)))
					row[25] = charDatum('n')
					row[26] = boolDatum(ix.parentIndex() != 0)
				case r.view != nil:
					row[17] = intDatum(int64(len(r.view.cols)))
					row[25] = charDatum('n')
				case r.seq != nil:
					seqClassRow(row, r.seq) // seqcatalog.go
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgNamespaceView() *view {
	return &view{
		name: "pg_namespace", oid: oidPgNamespace,
		cols: cols(oidPgNamespace, "oid", TypeOid, "nspname", TypeName, "nspowner", TypeOid, "nspacl", typeAclArray),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, n := range namespaces {
				if err := emit([]Datum{oidDatum(n.oid), textDatum(n.name), oidDatum(n.owner), NullDatum}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// attrRow describes one pg_attribute row.
type attrRow struct {
	rel     uint32
	name    string
	t       Type
	num     int16
	notNull bool
	hasDef  bool
	dropped bool   // attisdropped: t is the type the attribute had
	missing *Datum // attmissingval, atthasmissing

	identity byte // attidentity
}

func attributeRows(s *Backend) []attrRow {
	var out []attrRow
	for _, r := range s.relations() {
		switch {
		case r.table != nil:
			out = append(out, tableAttributes(r.table)...) // rowlayout.go
		case r.index != nil:
			t := s.cat().Tables[r.index.Table]
			if t == nil {
				continue
			}
			for i, c := range r.index.Cols {
				out = append(out, attrRow{rel: r.oid, name: r.index.colName(t, i), t: t.Cols[c].Type(), num: int16(i + 1)})
			}
		case r.view != nil:
			for i, c := range r.view.cols {
				out = append(out, attrRow{rel: r.oid, name: c.Name, t: c.Type, num: int16(i + 1)})
			}
		case r.seq != nil:
			out = append(out, seqAttributes(r.oid)...)
		}
	}
	return out
}

func pgAttributeView() *view {
	return &view{
		name: "pg_attribute", oid: oidPgAttribute,
		cols: cols(oidPgAttribute,
			"attrelid", TypeOid, "attname", TypeName, "atttypid", TypeOid, "attstattarget", TypeInt4, "attlen", TypeInt2,
			"attnum", TypeInt2, "attndims", TypeInt4, "attcacheoff", TypeInt4, "atttypmod", TypeInt4, "attbyval", TypeBool,
			"attalign", TypeChar, "attstorage", TypeChar, "attcompression", TypeChar, "attnotnull", TypeBool,
			"atthasdef", TypeBool, "atthasmissing", TypeBool, "attidentity", TypeChar, "attgenerated", TypeChar,
			"attisdropped", TypeBool, "attislocal", TypeBool, "attinhcount", TypeInt4, "attcollation", TypeOid,
			"attacl", typeAclArray, "attoptions", TypeTextArray, "attfdwoptions", TypeTextArray,
			"attmissingval", TypeTextArray), // anyarray in PostgreSQL
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			colls := map[uint32]uint32{}
			for _, tr := range pgTypes() {
				colls[tr.t.OID] = tr.collate
			}
			for _, a := range attributeRows(ec.s) {
				ndims := int64(0)
				if isArray(a.t) {
					ndims = 1
				}
				byval := a.t.Len > 0 && a.t.Len <= 8
				align, storage := typeAlignStorage(a.t)
				typ, stattarget := a.t.OID, int64(-1)
				if a.dropped { // RemoveAttributeById keeps the storage properties only
					typ, stattarget = 0, 0
				}
				missing := NullDatum
				if a.missing != nil {
					missing = Datum{A: []Datum{textDatum(string(appendText(nil, a.t, *a.missing, nil)))}}
				}
				row := []Datum{
					oidDatum(a.rel), textDatum(a.name), oidDatum(typ), intDatum(stattarget), intDatum(int64(a.t.Len)),
					intDatum(int64(a.num)), intDatum(ndims), intDatum(-1), intDatum(int64(a.t.Mod)), boolDatum(byval),
					charDatum(align), charDatum(storage), charDatum(0), boolDatum(a.notNull),
					boolDatum(a.hasDef), boolDatum(a.missing != nil), charDatum(a.identity), charDatum(0),
					boolDatum(a.dropped), boolDatum(true), intDatum(0), oidDatum(colls[a.t.OID]),
					NullDatum, NullDatum, NullDatum, missing,
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgTypeView() *view {
	return &view{
		name: "pg_type", oid: oidPgType,
		cols: cols(oidPgType,
			"oid", TypeOid, "typname", TypeName, "typnamespace", TypeOid, "typowner", TypeOid, "typlen", TypeInt2,
			"typbyval", TypeBool, "typtype", TypeChar, "typcategory", TypeChar, "typispreferred", TypeBool,
			"typisdefined", TypeBool, "typdelim", TypeChar, "typrelid", TypeOid, "typelem", TypeOid, "typarray", TypeOid,
			"typnotnull", TypeBool, "typbasetype", TypeOid, "typtypmod", TypeInt4, "typndims", TypeInt4,
			"typcollation", TypeOid, "typdefaultbin", TypeNodeTree, "typdefault", TypeText, "typacl", typeAclArray),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, tr := range pgTypes() {
				typtype := byte('b')
				if tr.t.OID == OIDVoid || tr.t.OID == OIDUnknown {
					typtype = 'p'
				}
				row := []Datum{
					oidDatum(tr.t.OID), textDatum(tr.name), oidDatum(nspPgCatalog), oidDatum(bootstrapRoleOID), intDatum(int64(tr.t.Len)),
					boolDatum(tr.t.Len > 0 && tr.t.Len <= 8), charDatum(typtype), charDatum(tr.category), boolDatum(false),
					boolDatum(true), charDatum(','), oidDatum(0), oidDatum(tr.elem), oidDatum(tr.array),
					boolDatum(false), oidDatum(0), intDatum(-1), intDatum(0),
					oidDatum(tr.collate), NullDatum, NullDatum, NullDatum,
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgIndexView() *view {
	return &view{
		name: "pg_index", oid: oidPgIndex,
		cols: cols(oidPgIndex,
			"indexrelid", TypeOid, "indrelid", TypeOid, "indnatts", TypeInt2, "indnkeyatts", TypeInt2, "indisunique", TypeBool,
			"indnullsnotdistinct", TypeBool, "indisprimary", TypeBool, "indisexclusion", TypeBool, "indimmediate", TypeBool,
			"indisclustered", TypeBool, "indisvalid", TypeBool, "indcheckxmin", TypeBool, "indisready", TypeBool,
			"indislive", TypeBool, "indisreplident", TypeBool, "indkey", typeInt2Vector, "indcollation", typeOidVector,
			"indclass", typeOidVector, "indoption", typeInt2Vector, "indexprs", TypeNodeTree, "indpred", TypeNodeTree),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			cat := ec.s.cat()
			for _, r := range ec.s.relations() {
				ix := r.index
				if ix == nil {
					continue
				}
				t := cat.Tables[ix.Table]
				if t == nil {
					continue
				}
				var keys, opts []int16
				coll := Datum{A: []Datum{}}
				class := Datum{A: []Datum{}}
				for _, c := range ix.Cols {
					keys = append(keys, t.attnum(c))
					opts = append(opts, 0)
					coll.A = append(coll.A, oidDatum(pgTypeCollation(t.Cols[c].TypeOID)))
					class.A = append(class.A, oidDatum(0))
				}
				n := intDatum(int64(len(ix.Cols)))
				row := []Datum{
					oidDatum(ix.OID), oidDatum(t.OID), n, n, boolDatum(ix.Unique),
					boolDatum(false), boolDatum(ix.Primary), boolDatum(false), boolDatum(true),
					boolDatum(false), boolDatum(true), boolDatum(false), boolDatum(true),
					boolDatum(true), boolDatum(false), int2Vector(keys), coll,
					class, int2Vector(opts), NullDatum, NullDatum,
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgTypeCollation(oid uint32) uint32 {
	switch oid {
	case OIDText, OIDVarchar, OIDBpchar:
		return 100
	case OIDName:
		return 950
	}
	return 0
}

func pgInheritsView() *view {
	return &view{
		name: "pg_inherits", oid: oidPgInherits,
		cols: cols(oidPgInherits, "inhrelid", TypeOid, "inhparent", TypeOid, "inhseqno", TypeInt4, "inhdetachpending", TypeBool),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, r := range ec.s.relations() {
				var parent uint32
				switch {
				case r.table != nil:
					parent = r.table.parentOID()
				case r.index != nil:
					parent = r.index.parentIndex()
				}
				if parent == 0 {
					continue
				}
				if err := emit([]Datum{oidDatum(r.oid), oidDatum(parent), intDatum(1), boolDatum(false)}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgPartitionedTableView() *view {
	return &view{
		name: "pg_partitioned_table", oid: oidPgPartTable,
		cols: cols(oidPgPartTable, "partrelid", TypeOid, "partstrat", TypeChar, "partnatts", TypeInt2, "partdefid", TypeOid,
			"partattrs", typeInt2Vector, "partclass", typeOidVector, "partcollation", typeOidVector, "partexprs", TypeNodeTree),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			cat := ec.s.cat()
			for _, r := range ec.s.relations() {
				t := r.table
				if t == nil || !t.Partitioned() {
					continue
				}
				strat, keys, def := t.partitionKey(cat)
				class := Datum{A: []Datum{}}
				coll := Datum{A: []Datum{}}
				for _, k := range t.PartKey {
					class.A = append(class.A, oidDatum(0))
					coll.A = append(coll.A, oidDatum(pgTypeCollation(t.Cols[k].TypeOID)))
				}
				row := []Datum{oidDatum(t.OID), charDatum(strat), intDatum(int64(len(keys))), oidDatum(def),
					int2Vector(keys), class, coll, NullDatum}
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

func int2Array(vals []int16) Datum {
	if vals == nil {
		return NullDatum
	}
	return int2Vector(vals)
}

func pgConstraintView() *view {
	return &view{
		name: "pg_constraint", oid: oidPgConstraint,
		cols: cols(oidPgConstraint,
			"oid", TypeOid, "conname", TypeName, "connamespace", TypeOid, "contype", TypeChar, "condeferrable", TypeBool,
			"condeferred", TypeBool, "convalidated", TypeBool, "conrelid", TypeOid, "contypid", TypeOid, "conindid", TypeOid,
			"conparentid", TypeOid, "confrelid", TypeOid, "confupdtype", TypeChar, "confdeltype", TypeChar,
			"confmatchtype", TypeChar, "conislocal", TypeBool, "coninhcount", TypeInt4, "connoinherit", TypeBool,
			"conkey", Type{OIDInt2Array, -1, -1, "smallint[]"}, "confkey", Type{OIDInt2Array, -1, -1, "smallint[]"},
			"conpfeqop", typeOidArray, "conppeqop", typeOidArray, "conffeqop", typeOidArray,
			"confdelsetcols", Type{OIDInt2Array, -1, -1, "smallint[]"}, "conexclop", typeOidArray, "conbin", TypeNodeTree),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, c := range constraintRows(ec.s) {
				row := []Datum{
					oidDatum(c.oid), textDatum(c.name), oidDatum(nspPublic), charDatum(c.kind), boolDatum(false),
					boolDatum(false), boolDatum(!c.notValid), oidDatum(c.rel), oidDatum(0), oidDatum(c.index),
					oidDatum(c.parent), oidDatum(c.refRel), charDatum(c.onUpdate), charDatum(c.onDelete),
					charDatum(c.match), boolDatum(!c.inherited), intDatum(inhCount(c.inherited)), boolDatum(c.noInherit),
					int2Array(c.cols), int2Array(c.refCols),
					NullDatum, NullDatum, NullDatum,
					NullDatum, NullDatum, NullDatum,
				}
				if c.kind == 'f' {
					row[12], row[13], row[14] = charDatum(c.onUpdate), charDatum(c.onDelete), charDatum(c.match)
				} else {
					row[12], row[13], row[14] = charDatum(' '), charDatum(' '), charDatum(' ')
				}
				if c.kind == 'c' {
					row[25] = textDatum(c.def)
				}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgDatabaseView() *view {
	return &view{
		name: "pg_database", oid: oidPgDatabase,
		cols: cols(oidPgDatabase,
			"oid", TypeOid, "datname", TypeName, "datdba", TypeOid, "encoding", TypeInt4, "datlocprovider", TypeChar,
			"datistemplate", TypeBool, "datallowconn", TypeBool, "datconnlimit", TypeInt4, "datfrozenxid", TypeXid,
			"datminmxid", TypeXid, "dattablespace", TypeOid, "datcollate", TypeText, "datctype", TypeText,
			"daticulocale", TypeText, "datcollversion", TypeText, "datacl", typeAclArray),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			// lockd serves one database, under whatever name a client
			// connects with.
			row := []Datum{
				oidDatum(DatabaseOID), textDatum(ec.s.database), oidDatum(bootstrapRoleOID), intDatum(6), charDatum('c'),
				boolDatum(false), boolDatum(true), intDatum(-1), intDatum(0),
				intDatum(1), oidDatum(1663), textDatum("C"), textDatum("C"),
				NullDatum, NullDatum, NullDatum,
			}
			return emit(row)
		},
	}
}

func pgRolesView() *view {
	return &view{
		name: "pg_roles", oid: oidPgRoles,
		cols: cols(oidPgRoles,
			"rolname", TypeName, "rolsuper", TypeBool, "rolinherit", TypeBool, "rolcreaterole", TypeBool,
			"rolcreatedb", TypeBool, "rolcanlogin", TypeBool, "rolreplication", TypeBool, "rolconnlimit", TypeInt4,
			"rolpassword", TypeText, "rolvaliduntil", TypeTimestamptz, "rolbypassrls", TypeBool, "rolconfig", TypeTextArray,
			"oid", TypeOid),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			t, f := boolDatum(true), boolDatum(false)
			if err := emit([]Datum{textDatum(bootstrapRole), t, t, t, t, t, t, intDatum(-1), textDatum("********"),
				NullDatum, t, NullDatum, oidDatum(bootstrapRoleOID)}); err != nil {
				return err
			}
			return emit([]Datum{textDatum(dbOwnerRole), f, t, f, f, f, f, intDatum(-1), textDatum("********"),
				NullDatum, f, NullDatum, oidDatum(dbOwnerRoleOID)})
		},
	}
}

func pgAmView() *view {
	return &view{
		name: "pg_am", oid: oidPgAm,
		cols: cols(oidPgAm, "oid", TypeOid, "amname", TypeName, "amhandler", TypeRegproc, "amtype", TypeChar),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			if err := emit([]Datum{oidDatum(amHeap), textDatum("heap"), oidDatum(3), charDatum('t')}); err != nil {
				return err
			}
			return emit([]Datum{oidDatum(amBtree), textDatum("btree"), oidDatum(330), charDatum('i')})
		},
	}
}

func pgAttrdefView() *view {
	return &view{
		name: "pg_attrdef", oid: oidPgAttrdef,
		cols: cols(oidPgAttrdef, "oid", TypeOid, "adrelid", TypeOid, "adnum", TypeInt2, "adbin", TypeNodeTree),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, r := range ec.s.relations() {
				if r.table == nil {
					continue
				}
				for i, c := range r.table.Cols {
					if c.Default == "" || c.Identity != "" {
						continue
					}
					// A stable OID per default: lockd keeps no OID for it.
					n := r.table.attnum(i)
					oid := r.oid<<8 | uint32(n)&0xff
					row := []Datum{oidDatum(oid), oidDatum(r.oid), intDatum(int64(n)), textDatum(defaultText(ec.s, &r.table.Cols[i]))}
					if err := emit(row); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
}

func pgCollationView() *view {
	return &view{
		name: "pg_collation", oid: oidPgCollation,
		cols: cols(oidPgCollation, "oid", TypeOid, "collname", TypeName, "collnamespace", TypeOid, "collowner", TypeOid,
			"collprovider", TypeChar, "collisdeterministic", TypeBool, "collencoding", TypeInt4, "collcollate", TypeText,
			"collctype", TypeText, "colliculocale", TypeText, "collversion", TypeText),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			for _, c := range []struct {
				oid       uint32
				name, loc string
				prov      byte
			}{{100, "default", "", 'd'}, {950, "C", "C", 'c'}, {951, "POSIX", "POSIX", 'c'}} {
				loc := NullDatum
				if c.loc != "" {
					loc = textDatum(c.loc)
				}
				row := []Datum{oidDatum(c.oid), textDatum(c.name), oidDatum(nspPgCatalog), oidDatum(bootstrapRoleOID),
					charDatum(c.prov), boolDatum(true), intDatum(-1), loc, loc, NullDatum, NullDatum}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgTablespaceView() *view {
	return &view{
		name: "pg_tablespace", oid: oidPgTablespace,
		cols: cols(oidPgTablespace, "oid", TypeOid, "spcname", TypeName, "spcowner", TypeOid, "spcacl", typeAclArray, "spcoptions", TypeTextArray),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			if err := emit([]Datum{oidDatum(1663), textDatum("pg_default"), oidDatum(bootstrapRoleOID), NullDatum, NullDatum}); err != nil {
				return err
			}
			return emit([]Datum{oidDatum(1664), textDatum("pg_global"), oidDatum(bootstrapRoleOID), NullDatum, NullDatum})
		},
	}
}

func pgTablesView() *view {
	return &view{
		name: "pg_tables", oid: oidPgTables,
		cols: cols(oidPgTables, "schemaname", TypeName, "tablename", TypeName, "tableowner", TypeName, "tablespace", TypeName,
			"hasindexes", TypeBool, "hasrules", TypeBool, "hastriggers", TypeBool, "rowsecurity", TypeBool),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			cons := constraintRows(ec.s)
			for _, r := range ec.s.relations() {
				if r.table == nil {
					continue
				}
				trig := false
				for _, c := range cons {
					if c.kind == 'f' && (c.rel == r.oid || c.refRel == r.oid) {
						trig = true
					}
				}
				row := []Datum{textDatum("public"), textDatum(r.name), textDatum(bootstrapRole), NullDatum,
					boolDatum(len(r.table.Indexes) > 0), boolDatum(false), boolDatum(trig), boolDatum(false)}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func pgIndexesView() *view {
	return &view{
		name: "pg_indexes", oid: oidPgIndexes,
		cols: cols(oidPgIndexes, "schemaname", TypeName, "tablename", TypeName, "indexname", TypeName, "tablespace", TypeName, "indexdef", TypeText),
		rows: func(ec *evalCtx, emit func([]Datum) error) error {
			cat := ec.s.cat()
			for _, r := range ec.s.relations() {
				if r.index == nil {
					continue
				}
				t := cat.Tables[r.index.Table]
				if t == nil {
					continue
				}
				row := []Datum{textDatum("public"), textDatum(t.Name), textDatum(r.name), NullDatum, textDatum(indexDef(ec.s, r.index, false))}
				if err := emit(row); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// defaultText is how pg_get_expr prints a column default.
func defaultText(s *Backend, c *ColumnDef) string {
	if text, ok := prettyDefault(s, c); ok { // altercol.go
		return text
	}
	return strings.TrimSpace(c.Default)
}

// typeAlignStorage is pg_type's typalign and typstorage for t.
func typeAlignStorage(t Type) (align, storage byte) {
	switch {
	case t.OID == OIDNumeric:
		return 'i', 'm'
	case t.OID == OIDName:
		return 'c', 'p'
	case t.Len == -1:
		return 'i', 'x'
	case t.Len == 1:
		return 'c', 'p'
	case t.Len == 2:
		return 's', 'p'
	case t.Len == 8:
		return 'd', 'p'
	case t.OID == OIDTid:
		return 's', 'p'
	case t.OID == OIDInterval:
		return 'd', 'p'
	}
	return 'i', 'p'
}

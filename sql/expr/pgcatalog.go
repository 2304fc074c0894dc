package expr

import (
	"sort"

	"lockd/sql/catalog"
)

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

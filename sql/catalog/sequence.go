package catalog

import (
	"sort"

	"lockd/sql/types"
)

// sequencesByOID lists the session's sequences in OID order.
func (c *CatalogState) SequencesByOID() []*SequenceDef {
	out := make([]*SequenceDef, 0, len(c.Sequences))
	for _, q := range c.Sequences {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// seqColumns are a sequence relation's columns.
var SeqColumns = []types.Column{{Name: "last_value", Type: types.TypeInt8}, {Name: "log_cnt", Type: types.TypeInt8}, {Name: "is_called", Type: types.TypeBool}}

// Sequences: their catalog entries (pg_sequence plus the column that owns
// them) and CREATE / ALTER / DROP SEQUENCE, following PostgreSQL 15's
// commands/sequence.c. A sequence's definition is transactional, like
// every catalog change; its value is not (seqstore.go keeps it, sql/funcs/sequence.go
// changes it). ALTER SEQUENCE that changes how values are generated, and
// RESTART, give the sequence new storage (a new RelFile holding the new
// state), as PostgreSQL gives it a new relfilenode: a rollback goes back to
// the old storage and so to the old state.

// codeSequenceLimit is sequence_generator_limit_exceeded.
const CodeSequenceLimit = "2200H"

const (
	SequenceLogVals       = 32 // SEQ_LOG_VALS: values logged ahead by one nextval
	SequenceNamespaceName = "public"
)

// SequenceDef is a sequence: its pg_sequence row, its storage and the
// column that owns it (pg_depend: 'a' for OWNED BY and serial columns, 'i'
// for identity columns). A SequenceDef in a published catalog is never
// changed; ALTER SEQUENCE replaces it.
type SequenceDef struct {
	OID       uint32 `json:"oid"`
	Name      string `json:"name"`
	RelFile   uint32 `json:"relfile"` // key of its state in the engine's sequence store
	TypeOID   uint32 `json:"type"`    // seqtypid: int2, int4 or int8
	Start     int64  `json:"start"`
	Increment int64  `json:"increment"`
	Max       int64  `json:"max"`
	Min       int64  `json:"min"`
	Cache     int64  `json:"cache"`
	Cycle     bool   `json:"cycle,omitempty"`
	Unlogged  bool   `json:"unlogged,omitempty"`
	// OwnedTable and OwnedCol (1-based) name the owning column; 0: none.
	OwnedTable uint32 `json:"owned_table,omitempty"`
	OwnedCol   int    `json:"owned_col,omitempty"`
	Identity   bool   `json:"identity,omitempty"` // the owner is an identity column
}

// applySequence applies a createseq, setseq or dropseq operation.
func (c *CatalogState) applySequence(op *CatOp) {
	switch op.Kind {
	case "createseq", "setseq":
		if c.Sequences == nil {
			c.Sequences = map[uint32]*SequenceDef{}
		}
		q := *op.Seq
		c.Sequences[q.OID] = &q
	case "dropseq":
		delete(c.Sequences, op.Oid)
	}
}

// sequence finds a sequence by name.
func (c *CatalogState) Sequence(name string) *SequenceDef {
	if oid, ok := c.ByName[name]; ok {
		return c.Sequences[oid]
	}
	return nil
}

// ownedSequences lists the sequences owned by columns of table, in OID
// order.
func (c *CatalogState) OwnedSequences(table uint32) []*SequenceDef {
	var out []*SequenceDef
	for _, q := range c.Sequences {
		if q.OwnedTable == table {
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].OID < out[j].OID })
	return out
}

// relationKind names what a relation name refers to, for errors about the
// wrong kind of relation: "table", "index", "sequence" or "" (none).
func (c *CatalogState) RelationKind(name string) string {
	oid, ok := c.ByName[name]
	switch {
	case !ok:
		return ""
	case c.Sequences[oid] != nil:
		return "sequence"
	case c.Indexes[oid] != nil:
		return "index"
	}
	return "table"
}

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

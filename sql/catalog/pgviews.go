package catalog

import (
	"lockd/sql/types"
)

// attrRow describes one pg_attribute row.
type AttrRow struct {
	Rel     uint32
	Name    string
	T       types.Type
	Num     int16
	NotNull bool
	HasDef  bool
	Dropped bool         // attisdropped: t is the type the attribute had
	Missing *types.Datum // attmissingval, atthasmissing

	Identity byte // attidentity
}

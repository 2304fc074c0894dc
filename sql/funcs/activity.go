package funcs

import (
	"time"

	"lockd/sql/types"
)

func TsDatum(t time.Time) types.Datum {
	if t.IsZero() {
		return types.NullDatum
	}
	return types.IntDatum(t.UnixMicro())
}

func TextOrNull(s string) types.Datum {
	if s == "" {
		return types.NullDatum
	}
	return types.TextDatum(s)
}

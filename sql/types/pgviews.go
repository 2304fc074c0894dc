package types

import ()

func OidDatum(o uint32) Datum { return IntDatum(int64(o)) }

package expr

import (
	"lockd/pgerr"
)

func PosErr(e *pgerr.Error, loc int32) *pgerr.Error {
	if loc >= 0 && e.Position == 0 {
		e.Position = loc + 1
	}
	return e
}

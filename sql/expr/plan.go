package expr

import (
	"context"
)

// checkCancel returns the cancellation cause of a running statement.
func CheckCancel(ec *EvalCtx) error {
	if ec.Ctx == nil {
		return nil
	}
	if err := ec.Ctx.Err(); err != nil {
		return context.Cause(ec.Ctx)
	}
	return nil
}

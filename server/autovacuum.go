package server

import (
	"context"
	"time"

	"lockd/guc"
)

// The autovacuum launcher: a goroutine of the instance that wakes every
// autovacuum_naptime and, while autovacuum is on, has the SQL engine run
// a round of autovacuum as a worker backend with a pid of its own
// (sql/autovacuum.go). A changed naptime or autovacuum takes effect
// at once. Shutdown cancels a running round and waits for it.

func (in *instance) startAutovacuum(newPID func() int32) {
	ctx, cancel := context.WithCancel(context.Background())
	in.avCancel, in.avDone, in.avWake = cancel, make(chan struct{}), make(chan struct{}, 1)
	wake := func(guc.Value) {
		select {
		case in.avWake <- struct{}{}:
		default:
		}
	}
	in.settings.OnChange("autovacuum", func(v guc.Value) { in.avOn.Store(v.Bool); wake(v) })
	in.settings.OnChange("autovacuum_naptime", func(v guc.Value) { in.avNaptime.Store(v.Int); wake(v) })
	gs, errs := in.settings.NewSession(nil)
	if len(errs) > 0 { // the defaults of every setting are valid: not reached
		in.log.Error("autovacuum: settings", "err", errs[0])
	}
	go in.autovacuumLauncher(ctx, gs, newPID)
}

func (in *instance) autovacuumLauncher(ctx context.Context, gs *guc.Session, newPID func() int32) {
	defer close(in.avDone)
	last := time.Now()
	for {
		nap := time.Duration(in.avNaptime.Load()) * time.Second
		t := time.NewTimer(time.Until(last.Add(nap)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-in.avWake:
			t.Stop()
			continue // settings changed: the next round is due naptime after the last
		case <-t.C:
		}
		last = time.Now()
		if in.avOn.Load() {
			in.engine.Autovacuum(ctx, newPID, gs, in.log)
		}
	}
}

// stopAutovacuum ends the launcher, cancelling a running round.
func (in *instance) stopAutovacuum() {
	in.avCancel()
	<-in.avDone
}

package server

import (
	"errors"
	"fmt"
	"time"

	"lockd/wal"
)

// The checkpointer (PostgreSQL's checkpointer.c): one goroutine that runs
// every checkpoint — every checkpoint_timeout, when max_wal_size worth of
// log has been written since the last one (the log asks), when a client
// runs CHECKPOINT — plus the shutdown and end-of-recovery checkpoints,
// which the instance runs itself while no session exists.

// ckptRequest asks the checkpointer for a checkpoint; done (if not nil)
// receives the outcome.
type ckptRequest struct {
	flags wal.CheckpointFlags
	done  chan error
}

// errShutdown answers a checkpoint request that the shutdown overtook.
var errShutdown = errors.New("the server is shutting down")

// requestCheckpoint asks for a checkpoint (RequestCheckpoint). With
// CkptWait it waits for one that started after the request to finish.
func (in *instance) requestCheckpoint(flags wal.CheckpointFlags) error {
	req := ckptRequest{flags: flags}
	if flags&wal.CkptWait != 0 {
		req.done = make(chan error, 1)
	}
	select {
	case in.ckptReq <- req:
	case <-in.ckptStop:
		return errShutdown
	}
	if req.done == nil {
		return nil
	}
	select {
	case err := <-req.done:
		return err
	case <-in.ckptDone:
		return errShutdown
	}
}

// checkpointer runs checkpoints until the instance stops.
func (in *instance) checkpointer() {
	defer close(in.ckptDone)
	last := time.Now()
	lastXLOG := time.Time{}
	for {
		timeout := time.Duration(in.ckptTimeout.Load()) * time.Second
		t := time.NewTimer(max(time.Until(last.Add(timeout)), 0))
		var flags wal.CheckpointFlags
		var waiting []chan error
		select {
		case <-t.C:
			flags = wal.CkptCauseTime
		case req := <-in.ckptReq:
			t.Stop()
			flags = req.flags
			if req.done != nil {
				waiting = append(waiting, req.done)
			}
		case <-in.ckptStop:
			t.Stop()
			return
		}
		// Merge the requests that came meanwhile (the flags are ORed, as
		// in CheckpointerShmem->ckpt_flags).
	drain:
		for {
			select {
			case req := <-in.ckptReq:
				flags |= req.flags
				if req.done != nil {
					waiting = append(waiting, req.done)
				}
			default:
				break drain
			}
		}
		start := time.Now()
		if flags&wal.CkptCauseXLOG != 0 {
			if warn := time.Duration(in.ckptWarning.Load()) * time.Second; warn > 0 && !lastXLOG.IsZero() && start.Sub(last) < warn {
				in.log.Info(fmt.Sprintf("checkpoints are occurring too frequently (%d seconds apart)", int(start.Sub(last).Seconds())),
					"hint", "Consider increasing the configuration parameter \"max_wal_size\".")
			}
			lastXLOG = start
		}
		err := in.checkpoint(flags)
		if err != nil {
			in.log.Error("checkpoint failed", "err", err)
		}
		last = start
		for _, w := range waiting {
			w <- err
		}
	}
}

// checkpoint runs one checkpoint (CreateCheckPoint): the log's redo point
// moves, then everything changed before it is written — catalog and
// sequences, commit log and multixacts, dirty buffers (paced over
// checkpoint_completion_target of the interval unless immediate), the
// relation files' fsyncs, free space maps and indexes — and the checkpoint
// record makes it the start of any recovery. Only one runs at a time.
func (in *instance) checkpoint(flags wal.CheckpointFlags) error {
	in.ckptMu.Lock()
	defer in.ckptMu.Unlock()
	p := in.ckptProc
	c, ok := in.wal.BeginCheckpoint(p, flags)
	if !ok {
		return nil
	}
	var errs []error
	if err := in.engine.Checkpoint(); err != nil {
		errs = append(errs, err)
	}
	if err := in.txns.Checkpoint(); err != nil {
		errs = append(errs, err)
	}
	writeStart := time.Now()
	written, total, err := in.store.CheckpointBuffers(p, func(progress float64) {
		select {
		case <-in.ckptStop:
			// a shutdown waits for this checkpoint: no more pacing
			// (CheckpointWriteDelay's ShutdownRequestPending)
			return
		default:
		}
		in.wal.WriteDelay(p, c, progress)
	})
	if err != nil {
		errs = append(errs, err)
	}
	syncStart := time.Now()
	files, longest, err := in.store.SyncFiles(p)
	if err != nil {
		errs = append(errs, err)
	}
	syncTime := time.Since(syncStart)
	if err := in.store.SaveMaps(p); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		// The redo point stays where the last complete checkpoint put it.
		return errors.Join(errs...)
	}
	mxNext, mxOff := in.txns.NextMulti()
	in.wal.EndCheckpoint(p, c, wal.CheckpointInfo{NextXid: uint32(in.txns.NextXid()), NextOid: in.engine.NextOID(),
		NextMulti: mxNext, NextMultiOff: mxOff, BuffersWritten: written, BuffersTotal: in.sharedBuffers,
		WriteTime: syncStart.Sub(writeStart), SyncTime: syncTime, SyncFiles: files, LongestSync: longest})
	_ = total
	return nil
}

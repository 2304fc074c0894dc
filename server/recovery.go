package server

import (
	"fmt"

	"lockd/storage"
	"lockd/txn"
	"lockd/wal"
)

// startup is the start-up process's work (StartupXLOG): it replays the
// write-ahead log if the server did not shut down cleanly, handing every
// record to the subsystem that owns what it changed, then finishes
// recovery in each of them and writes an end-of-recovery checkpoint, as
// PostgreSQL does after crash recovery.
func (in *instance) startup() error {
	var redo [256]wal.RedoFunc
	redo[wal.RmgrXLOG] = func(r *wal.Record) error {
		switch r.Info {
		case wal.InfoCheckpointShutdown, wal.InfoCheckpointOnline:
			if ck, ok := wal.DecodeCheckPoint(r.Main); ok {
				in.engine.RedoNextOID(ck.NextOid)
			}
		case wal.InfoNextOID:
			if len(r.Main) >= 4 {
				in.engine.RedoNextOID(uint32(r.Main[0]) | uint32(r.Main[1])<<8 | uint32(r.Main[2])<<16 | uint32(r.Main[3])<<24)
			}
		case wal.InfoFPI:
			return in.store.Redo(r)
		}
		return nil
	}
	redo[wal.RmgrXact] = func(r *wal.Record) error {
		x, err := txn.DecodeXactRecord(r)
		if err != nil {
			return err
		}
		in.txns.RedoXact(x)
		for _, f := range x.Rels {
			rel := storage.RelID(f)
			if in.store.IsIndex(rel) {
				_ = in.store.DropIndex(rel)
			} else {
				_ = in.store.DropRelation(rel)
			}
		}
		if x.Catalog != nil {
			return in.engine.RedoCatalog(r.EndLSN, x.Catalog)
		}
		return nil
	}
	redo[wal.RmgrStorage] = in.store.Redo
	redo[wal.RmgrHeap] = in.store.Redo
	redo[wal.RmgrHeap2] = in.store.Redo
	redo[wal.RmgrBtree] = in.store.Redo
	redo[wal.RmgrMultiXact] = in.txns.RedoMultiXact
	redo[wal.RmgrSequence] = in.engine.RedoSequence

	res, err := in.wal.StartupXLOG(redo)
	if err != nil {
		return err
	}
	in.recovery = res
	if err := in.txns.EndRecovery(in.txns.NextXid()); err != nil {
		return fmt.Errorf("end of recovery: %w", err)
	}
	if res.Recovered {
		if err := in.engine.EndRecovery(); err != nil {
			return fmt.Errorf("end of recovery: %w", err)
		}
		if err := in.checkpoint(wal.CkptEndOfRecovery | wal.CkptImmediate | wal.CkptWait); err != nil {
			return fmt.Errorf("end-of-recovery checkpoint: %w", err)
		}
	}
	return nil
}

package exec

import (
	"lockd/locks"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
	"lockd/txn"
)

// scanRows calls fn for every visible row of t (of its leaf partitions
// if it is partitioned).
func (s *Executor) ScanRows(ec *expr.EvalCtx, t *catalog.TableDef, fn func(row []types.Datum) error) error {
	for _, leaf := range s.Cat().LeafPartitions(t) {
		if err := s.ScanTable(ec, plan.NewTableSource(leaf, leaf.Name), fn); err != nil {
			return err
		}
	}
	return nil
}

// openPartitions locks the partitions of ps for this execution and
// returns the leaf partitions to read, in order, pruned on constants and
// parameters (PostgreSQL's plan-time and initial pruning). It runs once
// per execution, however often the execution scans ps (the inner side of
// a nested loop, a correlated subquery): later calls return the same
// leaves. Pruning on values only the executor has is partitionsToScan's.
func (x *Executor) openPartitions(ec *expr.EvalCtx, ps *plan.PartitionedSource) ([]*plan.PartNode, error) {
	if ps.Only {
		return nil, nil
	}
	if ec.Run == 0 {
		ec.Run = expr.NewRun()
	}
	s := x
	if cat := s.Cat(); ps.Tree == nil || ps.Gen != cat.Gen {
		ps.Build(cat)
	}
	if ps.OpenRun == ec.Run {
		return ps.Opened, nil
	}
	leaves := ps.LeafBuf[:0]
	defer func() { ps.LeafBuf = leaves }()
	if err := x.openPartitionNode(ec, ps, ps.Tree, &leaves, true); err != nil {
		return nil, err
	}
	if ps.Gen != s.Cat().Gen {
		// a partition changed (TRUNCATE, CREATE INDEX) while its lock was
		// waited for: plan the partitions again; the locks are held now
		ps.Build(s.Cat())
		leaves = leaves[:0]
		if err := x.openPartitionNode(ec, ps, ps.Tree, &leaves, true); err != nil {
			return nil, err
		}
	}
	ps.OpenRun, ps.Opened = ec.Run, leaves
	return leaves, nil
}

// partitionsToScan returns the leaf partitions one scan of ps reads: those
// opened for the execution, pruned further on the values only the
// executor has — the current outer row of a nested loop (PostgreSQL's
// exec-time pruning of a parameterised Append), of a correlated subquery,
// or a subquery's result.
func (x *Executor) partitionsToScan(ec *expr.EvalCtx, ps *plan.PartitionedSource) ([]*plan.PartNode, error) {
	leaves, err := x.openPartitions(ec, ps)
	if err != nil || !ps.ExecPrune {
		return leaves, err
	}
	out := ps.ScanBuf[:0]
	err = pruneForScan(ec, ps.Tree, &out)
	ps.ScanBuf = out
	return out, err
}

// pruneForScan collects the opened leaves under n that the exec-time
// pruning steps keep.
func pruneForScan(ec *expr.EvalCtx, n *plan.PartNode, out *[]*plan.PartNode) error {
	if n == nil || n.OpenRun != ec.Run {
		return nil
	}
	if n.Desc == nil {
		*out = append(*out, n)
		return nil
	}
	var keep []bool
	if n.Prune != nil && n.Prune.Deps() == expr.DepExec {
		var err error
		if keep, err = n.Prune.Eval(ec, n.Desc); err != nil {
			return err
		}
	}
	for i, kid := range n.Kids {
		if keep != nil && !keep[i] {
			continue
		}
		if err := pruneForScan(ec, kid, out); err != nil {
			return err
		}
	}
	return nil
}

// openNode locks n's partitions and collects the leaves to read. scan is
// false under a partition that run-time pruning removed but a generic
// plan still locks.
func (x *Executor) openPartitionNode(ec *expr.EvalCtx, ps *plan.PartitionedSource, n *plan.PartNode, leaves *[]*plan.PartNode, scan bool) error {
	if n == nil {
		return nil
	}
	if scan {
		n.OpenRun = ec.Run
	}
	if n.Desc == nil {
		if scan {
			*leaves = append(*leaves, n)
		}
		return nil
	}
	// planKeep is what the plan holds, runKeep what this execution opens:
	// the same for a custom plan, which prunes on the parameter values
	// when it is planned; a generic plan prunes only on constants when it
	// is planned and on parameters when the executor starts (PostgreSQL's
	// initial pruning), after every planned partition is locked. Values
	// only the executor has prune at each scan (partitionsToScan), among
	// the partitions opened here.
	var planKeep, runKeep []bool
	if n.Prune != nil {
		var err error
		upTo := ec.Plan.PruneUpTo()
		ec.PruneUpTo = upTo
		planKeep, err = n.Prune.Eval(ec, n.Desc)
		ec.PruneUpTo = 0
		if err != nil {
			return err
		}
		if deps := n.Prune.Deps(); deps <= upTo || upTo == expr.DepParam {
			runKeep = planKeep
		} else {
			planKeep = append([]bool(nil), planKeep...) // eval reuses its buffer
			ec.PruneUpTo = expr.DepParam
			runKeep, err = n.Prune.Eval(ec, n.Desc)
			ec.PruneUpTo = 0
			if err != nil {
				return err
			}
			if !plan.SameKeep(planKeep, runKeep) {
				ec.RuntimePruned = true
			}
		}
	}
	s := x
	for i, kid := range n.Kids {
		if kid == nil || planKeep != nil && !planKeep[i] {
			continue
		}
		run := scan && (runKeep == nil || runKeep[i])
		if err := s.LockNow(ec, kid.T.OID, ps.Mode); err != nil {
			return err
		}
		switch {
		case ec.Plan != expr.GenericReuse || ps.Mode != locks.AccessShareLock:
			// the planner opens every index of a partition it plans
			// (get_relation_info), and the executor every index of a
			// partition it writes (ExecOpenIndices)
			for _, ix := range kid.Idx {
				if err := s.LockNow(ec, ix.OID, ps.Mode); err != nil {
					return err
				}
			}
		case run && kid.Ts != nil && kid.Ts.Index != nil:
			// a cached generic plan that reads: the executor opens only
			// the index a surviving partition is scanned by (or, below,
			// each index of its bitmap scan)
			if err := s.LockNow(ec, kid.Ts.Index.OID, ps.Mode); err != nil {
				return err
			}
		case run && kid.Ts != nil && kid.Ts.Bitmap != nil:
			for _, ix := range kid.Ts.ScanIndexes() {
				if err := s.LockNow(ec, ix.OID, ps.Mode); err != nil {
					return err
				}
			}
		}
		if err := x.openPartitionNode(ec, ps, kid, leaves, run); err != nil {
			return err
		}
	}
	return nil
}

// scan calls fn for every visible row of every partition not pruned.
func (x *Executor) scanPartitioned(ec *expr.EvalCtx, ps *plan.PartitionedSource, fn func(row []types.Datum) error) error {
	dst := x.leafDst // offered to each partition's scan in turn
	x.leafDst = nil
	leaves, err := x.partitionsToScan(ec, ps)
	if err != nil {
		return err
	}
	for _, lf := range leaves {
		x.leafDst = dst
		if st := ec.Stats(lf); st != nil {
			// each partition's scan counts as a node of its own, with the
			// rows the item's filters keep (runLeaf takes back the others)
			saved := ec.PartStats
			ec.PartStats = st
			err := timed(st, func(count func(func() error) error) error {
				return x.ScanTable(ec, lf.Ts, func(row []types.Datum) error {
					return count(func() error { return fn(row) })
				})
			})
			ec.PartStats = saved
			if err != nil {
				return err
			}
			continue
		}
		if err := x.ScanTable(ec, lf.Ts, fn); err != nil {
			return err
		}
	}
	return nil
}

// scan calls fn for every tuple visible to the statement's snapshot.
func (x *Executor) ScanTable(ec *expr.EvalCtx, ts *plan.TableSource, fn func([]types.Datum) error) error {
	return x.scanTableLevel(ec, ts, nil, fn)
}

// scanLevel is scan with the index keys evaluated over the level row.
func (x *Executor) scanTableLevel(ec *expr.EvalCtx, ts *plan.TableSource, level []types.Datum, fn func([]types.Datum) error) error {
	return x.scanTableTIDsLevel(ec, ts, level, func(_ storage.TID, row []types.Datum) error { return fn(row) })
}

func (x *Executor) ScanTableTIDs(ec *expr.EvalCtx, ts *plan.TableSource, fn func(storage.TID, []types.Datum) error) error {
	return x.scanTableTIDsLevel(ec, ts, nil, fn)
}

// takeLeafDst returns the span runLeaf offered for the scan's rows if it
// has the row's width, else a new row; the offer holds for one scan only
// (a scan inside the leaf's — another partition, a subquery — gets its
// own row).
func (x *Executor) takeLeafDst(width int) []types.Datum {
	dst := x.leafDst
	x.leafDst = nil
	if len(dst) == width {
		return dst
	}
	return make([]types.Datum, width)
}

func tidDatum(tid storage.TID) types.Datum {
	return types.IntDatum(int64(tid.Block)<<16 | int64(tid.Offset))
}

func (x *Executor) scanTableTIDsLevel(ec *expr.EvalCtx, ts *plan.TableSource, level []types.Datum, fn0 func(storage.TID, []types.Datum) error) error {
	s := x
	n := len(ts.Defs)
	row := x.takeLeafDst(n + plan.NumSysCols)
	row[n+plan.SysColTableoid] = types.IntDatum(int64(ts.T.OID))
	var rows int64 // visible rows the scan returned, for pg_stat_all_tables
	fn := func(tid storage.TID, row []types.Datum) error {
		rows++
		row[n+plan.SysColCtid].SetInt(int64(tid.Block)<<16 | int64(tid.Offset)) // tidDatum
		return fn0(tid, row)
	}
	st := s.Store
	relfile := storage.RelID(ts.T.RelFile)
	switch {
	case ts.IndexOnly:
		var read, fetched int64
		err := x.scanIndexOnly(ec, ts, level, row, &read, &fetched, fn)
		s.TabStats.IndexScanned(ts.T.OID, fetched)
		s.TabStats.IndexUsed(ts.Index.OID, read, fetched)
		return err
	case ts.ExactLookup():
		var read int64
		err := x.lookupExact(ec, ts, level, row, &read, fn)
		s.TabStats.IndexScanned(ts.T.OID, rows)
		s.TabStats.IndexUsed(ts.Index.OID, read, rows)
		return err
	case ts.Bitmap != nil:
		err := x.scanBitmap(ec, ts, level, row, fn)
		s.TabStats.IndexScanned(ts.T.OID, rows)
		return err
	case ts.Index != nil:
		var read int64
		err := x.scanIndex(ec, ts, level, row, &read, fn)
		s.TabStats.IndexScanned(ts.T.OID, rows)
		s.TabStats.IndexUsed(ts.Index.OID, read, rows)
		return err
	}
	dec := catalog.NewRowDecoder(ts.T, ts.DecodeLen())
	err := st.Scan(ec.Ctx, s.Proc, &s.Txn, relfile, func(tid storage.TID, data []byte) error {
		if err := dec.Decode(data, row); err != nil {
			return err
		}
		return fn(tid, row)
	})
	s.TabStats.SeqScanned(ts.T.OID, rows)
	return err
}

// lookupExact reads the tuples under one key of ts's index (every key
// column pinned by equality), adding the index entries it read to *read.
func (x *Executor) lookupExact(ec *expr.EvalCtx, ts *plan.TableSource, level, row []types.Datum, read *int64, fn func(storage.TID, []types.Datum) error) error {
	s := x
	st := s.Store
	relfile := storage.RelID(ts.T.RelFile)
	// the key and the TIDs under it on the stack (fn may run lookups
	// of its own, a nested loop's inner side)
	var keyBuf [32]byte
	key, ok, err := x.tableLookupKey(ec, ts, level, keyBuf[:0])
	if err != nil || !ok {
		return err
	}
	var tidBuf [4]storage.TID
	tids := tidBuf[:0]
	if err := st.IndexLookup(s.Proc, storage.RelID(ts.Index.RelFile), key, func(tid storage.TID) bool {
		tids = append(tids, tid)
		return true
	}); err != nil {
		return err
	}
	*read += int64(len(tids))
	// Like PostgreSQL's kill_prior_tuple, index entries whose tuple
	// is dead to every transaction are removed as the lookup meets
	// them, so a row updated many times does not make every lookup
	// walk all of its old versions until the next VACUUM. Under one
	// key of a unique index only one version is visible, so a lookup
	// that finds more is judged against a horizon as it fetches.
	var deadBuf [4]storage.TID
	dead := deadBuf[:0]
	var horizon txn.Xid
	if len(tids) > 1 {
		horizon = s.Txns.OldestXmin()
	}
	var derr error
	decode := func(_ *plan.TxnHeader, data []byte) {
		derr = catalog.DecodeRowPrefix(data, ts.T, row, ts.DecodeLen())
	}
	for _, tid := range tids {
		at, visible, isDead, err := st.FetchJudged(s.Proc, &s.Txn, relfile, tid, horizon, decode)
		if err != nil {
			return err
		}
		if derr != nil {
			return derr
		}
		if isDead {
			dead = append(dead, tid)
		}
		if visible {
			if err := fn(at, row); err != nil {
				return err
			}
		}
	}
	for _, tid := range dead {
		if err := st.IndexDelete(s.Proc, storage.RelID(ts.Index.RelFile), key, tid); err != nil {
			return err
		}
	}
	return nil
}

// tableLookupKey evaluates the key values and appends their key to buf;
// a NULL key matches nothing.
func (x *Executor) tableLookupKey(ec *expr.EvalCtx, ts *plan.TableSource, level []types.Datum, buf []byte) ([]byte, bool, error) {
	var valBuf [4]types.Datum // on the stack for keys of up to four columns
	var vals []types.Datum
	if len(ts.KeyArgs) <= len(valBuf) {
		vals = valBuf[:len(ts.KeyArgs)]
	} else {
		vals = make([]types.Datum, len(ts.KeyArgs))
	}
	for i, a := range ts.KeyArgs {
		if _, ok := a.(*plan.NullKey); ok {
			vals[i] = types.NullDatum // IS NULL
			continue
		}
		v, err := a.Eval(ec, level)
		if err != nil {
			return nil, false, err
		}
		if v.Null {
			return nil, false, nil
		}
		vals[i] = v
	}
	return catalog.AppendKey(buf, ts.KeyTyps, vals), true, nil
}

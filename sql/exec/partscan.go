package exec

import (
	"lockd/locks"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
)

// open prunes and locks the partitions for one execution and returns the
// leaf partitions to read, in order.
func (x *Executor) openPartitions(ec *expr.EvalCtx, ps *plan.PartitionedSource) ([]*plan.PartNode, error) {
	if ps.Only {
		return nil, nil
	}
	s := x
	if cat := s.Cat(); ps.Tree == nil || ps.Gen != cat.Gen {
		ps.Build(cat)
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
	return leaves, nil
}

// openNode locks n's partitions and collects the leaves to read. scan is
// false under a partition that run-time pruning removed but a generic
// plan still locks.
func (x *Executor) openPartitionNode(ec *expr.EvalCtx, ps *plan.PartitionedSource, n *plan.PartNode, leaves *[]*plan.PartNode, scan bool) error {
	if n == nil {
		return nil
	}
	if n.Desc == nil {
		if scan {
			*leaves = append(*leaves, n)
		}
		return nil
	}
	// planKeep is what the plan holds, runKeep what this execution reads:
	// the same for a custom plan, which prunes on the parameter values
	// when it is planned; a generic plan prunes only on constants when it
	// is planned and on parameters when the executor starts (PostgreSQL's
	// initial pruning), after every planned partition is locked
	var planKeep, runKeep []bool
	if n.Prune != nil {
		var err error
		if upTo := ec.Plan.PruneUpTo(); n.Prune.Deps() <= upTo {
			if runKeep, err = n.Prune.Eval(ec, n.Desc); err != nil {
				return err
			}
			planKeep = runKeep
		} else {
			ec.PruneUpTo = upTo
			planKeep, err = n.Prune.Eval(ec, n.Desc)
			ec.PruneUpTo = 0
			if err != nil {
				return err
			}
			planKeep = append([]bool(nil), planKeep...) // eval reuses its buffer
			if runKeep, err = n.Prune.Eval(ec, n.Desc); err != nil {
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
			// the index a surviving partition is scanned by
			if err := s.LockNow(ec, kid.Ts.Index.OID, ps.Mode); err != nil {
				return err
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
	leaves, err := x.openPartitions(ec, ps)
	if err != nil {
		return err
	}
	for _, lf := range leaves {
		if err := x.ScanTable(ec, lf.Ts, fn); err != nil {
			return err
		}
	}
	return nil
}

// execModifyPartitioned runs an UPDATE or DELETE of a partitioned table:
// each partition not pruned is modified as a table of its own, and rows
// whose partition key an UPDATE changes move to their new partition.
func (s *Executor) execModifyPartitioned(ec *expr.EvalCtx, p *plan.ModifyPlan, emit func([]types.Datum) error) (int64, error) {
	leaves, err := s.openPartitions(ec, p.Parts)
	if err != nil {
		return 0, err
	}
	var pu *plan.PartUpdate
	if !p.Delete {
		pu = &p.Parts.Pu
		*pu = plan.PartUpdate{Root: p.T.OID, Router: pu.Router}
		defer s.finishPartUpdate(pu)
	}
	var n int64
	sub := &p.Parts.Sub
	for _, lf := range leaves {
		*sub = plan.ModifyPlan{T: lf.T, Src: lf.Ts, Where: p.Where, Set: p.Set, Indexes: lf.Idx, Delete: p.Delete, Part: pu, Ret: p.Ret}
		k, err := s.execModify(ec, sub, emit)
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

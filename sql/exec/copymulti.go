package exec

import (
	"strconv"

	"lockd/pgerr"
	"lockd/sql/catalog"
	"lockd/sql/expr"
	"lockd/sql/plan"
	"lockd/sql/types"
	"lockd/storage"
)

// COPY FROM's buffered insertion (PostgreSQL's CopyMultiInsertInfo): rows
// are checked (NOT NULL, CHECK, partition bounds) as they are read, then
// kept until 1,000 rows or 64 kB of tuples wait, and go to the heap a
// page at a time (storage.MultiInsert: one buffer lock and one WAL record
// per page); their index entries, unique checks and foreign-key events
// follow row by row in input order, so a duplicate key is reported on the
// same row as with one insert at a time. A buffer holds rows for one table;
// a routed row for another partition flushes it first (PostgreSQL keeps
// up to 32 partitions' buffers; input in partition order — pgbench's — is
// the case this serves). Tables with volatile defaults (nextval, say)
// insert row by row, as in PostgreSQL, since a default may read the
// table.

const (
	copyBatchRows  = 1000  // MAX_BUFFERED_TUPLES
	copyBatchBytes = 65535 // MAX_BUFFERED_BYTES
)

type copyBatch struct {
	name    string // COPY's table, for errors' context
	frozen  bool   // COPY FREEZE (storage.MultiInsert)
	t       *catalog.TableDef
	indexes []*catalog.IndexDef
	width   int           // datums per row
	datums  []types.Datum // the rows, width each
	lines   []int64       // each row's input line, for errors
	data    []byte        // the tuples, one after another
	ends    []int         // each tuple's end in data
	tuples  [][]byte
	tids    []storage.TID
}

func (b *copyBatch) len() int { return len(b.lines) }

// full reports whether the batch should be flushed before another row.
func (b *copyBatch) full() bool {
	return len(b.lines) >= copyBatchRows || len(b.data) >= copyBatchBytes
}

// add keeps row (copied) for table t; the caller has checked it, and
// flushed the batch if it held another table's rows.
func (b *copyBatch) add(t *catalog.TableDef, indexes []*catalog.IndexDef, row []types.Datum, line int64) {
	if b.len() == 0 {
		b.t, b.indexes, b.width = t, indexes, len(row)
	}
	b.datums = append(b.datums, row...)
	b.lines = append(b.lines, line)
	b.data = catalog.AppendRow(b.data, t, row)
	b.ends = append(b.ends, len(b.data))
}

// reset empties the batch, keeping its memory, and drops its references
// to the rows' values.
func (b *copyBatch) reset() {
	clear(b.datums)
	b.datums, b.lines, b.data, b.ends = b.datums[:0], b.lines[:0], b.data[:0], b.ends[:0]
	b.t, b.indexes = nil, nil
}

// flushCopyBatch inserts the batch's rows. An error's context names the
// input line of the row that failed, without its text (the line is no
// longer at hand: PostgreSQL's line_buf_valid is false then too).
func (s *Executor) flushCopyBatch(ec *expr.EvalCtx, b *copyBatch) error {
	n := b.len()
	if n == 0 {
		return nil
	}
	defer b.reset()
	fail := func(i int, err error) error {
		return copyErr(err, "COPY "+b.name+", line "+strconv.FormatInt(b.lines[i], 10))
	}
	if _, err := s.Txn.AssignXid(); err != nil {
		return fail(0, err)
	}
	b.tuples = b.tuples[:0]
	start := 0
	for _, end := range b.ends {
		b.tuples = append(b.tuples, b.data[start:end])
		start = end
	}
	b.tids = append(b.tids[:0], make([]storage.TID, n)...)
	t := b.t
	if err := s.Store.MultiInsert(ec.Ctx, s.Proc, &s.Txn, storage.RelID(t.RelFile), b.tuples, plan.Fillfactor(t), b.tids, b.frozen); err != nil {
		return fail(0, err)
	}
	s.TabStats.Inserted(t.OID, int64(n)) // pg_stat_all_tables (sql/stats)
	for i := range n {
		row := b.datums[i*b.width : (i+1)*b.width]
		if err := s.insertIndexEntries(ec, t, b.indexes, row, b.tids[i]); err != nil {
			return fail(i, err)
		}
		if err := s.afterInsertRow(t, b.tids[i], row); err != nil {
			return fail(i, err)
		}
	}
	return nil
}

// copyBatchable reports whether COPY into t may buffer its rows: no
// column default it fills in calls a volatile function.
func copyBatchable(defaults []expr.Expr) bool {
	for _, d := range defaults {
		if d != nil && expr.IsVolatile(d) {
			return false
		}
	}
	return true
}

// bufferCopyRow checks row (read at line) as an insert would, routes it
// to its partition, and adds it to the batch, flushing the batch first
// when it is full or holds another table's rows. A flush's error comes
// with its context; the row's own errors without.
func (s *Executor) bufferCopyRow(ec *expr.EvalCtx, p *copyPlan, b *copyBatch, row []types.Datum, line int64) error {
	t, indexes := p.t, p.indexes
	var r *plan.PartRouter
	if p.route != nil {
		r = p.route
		cat := s.Cat()
		if t = cat.Tables[r.Target]; t == nil {
			return pgerr.New(pgerr.UndefinedTable, "relation with OID %d does not exist", r.Target)
		}
		if t.Partitioned() {
			lf, err := s.routeRow(ec, r, t, row)
			if err != nil {
				return err
			}
			t, indexes = lf.T, lf.Indexes
			r = nil // the leaf's bounds held: routing chose it
		} else {
			indexes = cat.TableIndexes(t)
		}
	}
	// ExecConstraints (NOT NULL, CHECK), then ExecPartitionCheck for a
	// partition named as COPY's target.
	if err := plan.CheckNotNull(t, row); err != nil {
		return err
	}
	if err := s.checkConstraints(ec, t, row); err != nil {
		return err
	}
	if r != nil && !fitsPartition(s.Cat(), t, row) {
		return partitionViolation(t, row)
	}
	if b.len() > 0 && (b.t != t || b.full()) {
		if err := s.flushCopyBatch(ec, b); err != nil {
			return err
		}
	}
	b.add(t, indexes, row, line)
	return nil
}

package funcs

import (
	"math/big"

	"lockd/pgerr"
	"lockd/sql/expr"
	"lockd/sql/types"
	"lockd/wal"
)

// Write-ahead log functions (PostgreSQL's xlogfuncs.c and pg_lsn.c).
var walFuncs = map[string][]Builtin{
	// pg_current_wal_lsn: how far the log has been written to the kernel.
	"pg_current_wal_lsn": {{Result: fixed(types.TypePgLsn), Volatile: true, Fn: walPosition(func(w *wal.WAL) wal.LSN { return w.WritePosition() })}},
	// pg_current_wal_insert_lsn: the end of the log reserved so far.
	"pg_current_wal_insert_lsn": {{Result: fixed(types.TypePgLsn), Volatile: true, Fn: walPosition(func(w *wal.WAL) wal.LSN { return w.InsertPosition() })}},
	// pg_current_wal_flush_lsn: how far the log is durable.
	"pg_current_wal_flush_lsn": {{Result: fixed(types.TypePgLsn), Volatile: true, Fn: walPosition(func(w *wal.WAL) wal.LSN { return w.FlushPosition() })}},
	// pg_walfile_name: the segment file holding the byte before the LSN.
	"pg_walfile_name": {{args: []types.Type{types.TypePgLsn}, Result: fixed(types.TypeText), Fn: func(ec *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		w, err := theWAL(ec)
		if err != nil {
			return types.Datum{}, err
		}
		return types.TextDatum(w.WALFileName(wal.LSN(uint64(a[0].I)))), nil
	}}},
	// pg_wal_lsn_diff: the difference in bytes, as numeric.
	"pg_wal_lsn_diff": {{args: []types.Type{types.TypePgLsn, types.TypePgLsn}, Result: fixed(types.TypeNumeric), Fn: func(_ *expr.EvalCtx, a []types.Datum) (types.Datum, error) {
		d := new(big.Int).Sub(new(big.Int).SetUint64(uint64(a[0].I)), new(big.Int).SetUint64(uint64(a[1].I)))
		return types.TextDatum(d.String()), nil
	}}},
}

func theWAL(ec *expr.EvalCtx) (*wal.WAL, error) {
	if ec.B.Store == nil || ec.B.Store.WAL() == nil {
		return nil, pgerr.New(pgerr.ObjectNotInPrerequisiteState, "WAL is not available")
	}
	return ec.B.Store.WAL(), nil
}

func walPosition(pos func(*wal.WAL) wal.LSN) func(*expr.EvalCtx, []types.Datum) (types.Datum, error) {
	return func(ec *expr.EvalCtx, _ []types.Datum) (types.Datum, error) {
		w, err := theWAL(ec)
		if err != nil {
			return types.Datum{}, err
		}
		return types.IntDatum(int64(pos(w))), nil
	}
}

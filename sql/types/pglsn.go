package types

import (
	"strconv"
	"strings"

	"lockd/pgerr"
)

// The pg_lsn type (PostgreSQL's utils/adt/pg_lsn.c): a write-ahead log
// position, written as two hexadecimal numbers of at most 8 digits — the
// high and low 32 bits — separated by a slash.

// appendLSN is pg_lsn_out: upper-case hexadecimal.
func appendLSN(buf []byte, l uint64) []byte {
	buf = append(buf, strings.ToUpper(strconv.FormatUint(l>>32, 16))...)
	buf = append(buf, '/')
	return append(buf, strings.ToUpper(strconv.FormatUint(l&0xffffffff, 16))...)
}

// parseLSN is pg_lsn_in.
func parseLSN(s string) (Datum, error) {
	hi, lo, ok := strings.Cut(s, "/")
	bad := pgerr.New(pgerr.InvalidTextRepresentation, "invalid input syntax for type pg_lsn: \"%s\"", s)
	if !ok || len(hi) == 0 || len(lo) == 0 || len(hi) > 8 || len(lo) > 8 {
		return Datum{}, bad
	}
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if err1 != nil || err2 != nil {
		return Datum{}, bad
	}
	return IntDatum(int64(h<<32 | l)), nil
}

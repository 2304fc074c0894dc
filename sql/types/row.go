package types

import ()

// trimBlanks drops the trailing blanks of a char(n) value (stored padded;
// output, comparisons and hashing ignore them). Eight at a time:
// pgbench_accounts' filler is 84 blanks in every row, and a scan reads it
// for each one.
func TrimBlanks[T ~string | ~[]byte](v T) T {
	for len(v) >= 8 && string(v[len(v)-8:]) == "        " {
		v = v[:len(v)-8]
	}
	for len(v) > 0 && v[len(v)-1] == ' ' {
		v = v[:len(v)-1]
	}
	return v
}

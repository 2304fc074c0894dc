//go:build ignore

// gen_pgproc prints the names of the functions lockd can call, one a line,
// for scripts/gen-pg-proc.sh, which dumps PostgreSQL 15's pg_proc entries
// for them into sql/catalog/pg15_proc.tsv.
package main

import (
	"fmt"
	"sort"

	"lockd/sql/analyze"
)

func main() {
	names := analyze.FunctionNames()
	sort.Strings(names)
	for i, n := range names {
		if i == 0 || n != names[i-1] {
			fmt.Println(n)
		}
	}
}

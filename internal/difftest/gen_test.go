package difftest

import (
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var paramRef = regexp.MustCompile(`\$(\d+)`)

// TestGeneratorParams checks, without servers, that every parameter a
// prepared query registers is used in its text and no other is.
func TestGeneratorParams(t *testing.T) {
	for seed := range uint64(100) {
		s := genSchema(rand.New(rand.NewPCG(seed, streamSchema)))
		for i := range 300 {
			q := genQueryN(seed, s, Known, i)
			if q.params == nil {
				continue
			}
			sql := q.sql()
			seen := map[int]bool{}
			for _, m := range paramRef.FindAllStringSubmatch(sql, -1) {
				n, _ := strconv.Atoi(m[1])
				seen[n] = true
			}
			for n := 1; n <= len(q.params); n++ {
				if !seen[n] {
					t.Fatalf("seed %d query %d: $%d registered but not used: %s", seed, i, n, sql)
				}
			}
			if len(seen) != len(q.params) {
				t.Fatalf("seed %d query %d: %d parameters registered, %d used: %s", seed, i, len(q.params), len(seen), sql)
			}
		}
	}
}

// TestGeneratorDeterministic: a seed and a query number give the same
// schema and the same query, whatever ran before (so a failure is
// reproduced from its seed and number alone).
func TestGeneratorDeterministic(t *testing.T) {
	s1 := genSchema(rand.New(rand.NewPCG(7, streamSchema)))
	s2 := genSchema(rand.New(rand.NewPCG(7, streamSchema)))
	if a, b := strings.Join(s1.setupSQL(), ";"), strings.Join(s2.setupSQL(), ";"); a != b {
		t.Fatal("the same seed gave two schemas")
	}
	var first []string
	for i := range 50 {
		first = append(first, genQueryN(7, s1, Known, i).sql())
	}
	for i := 49; i >= 0; i-- {
		if got := genQueryN(7, s2, Known, i).sql(); got != first[i] {
			t.Fatalf("query %d: %s, then %s", i, first[i], got)
		}
	}
}

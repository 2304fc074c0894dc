package stats

import (
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"lockd/sql/types"
)

// widthThreshold is WIDTH_THRESHOLD: a varlena value whose raw size
// (header included) exceeds it is counted, but neither sorted nor kept.
const widthThreshold = 1024

// ComputeColumn computes one column's statistics from its values in a
// sample (compute_scalar_stats): vals holds the column's value in every
// sample row, NULLs included, in the rows' physical order (the
// correlation is measured against it); target is the column's
// statistics target; totalRows the estimated number of live rows in the
// table. It returns nil for an empty sample (ANALYZE then keeps the
// column's old statistics, as PostgreSQL does).
func ComputeColumn(vals []types.Datum, typ types.Type, target int, totalRows float64) *ColumnStats {
	sampleRows := len(vals)
	if sampleRows == 0 {
		return nil
	}
	varWidth := typ.Len < 0
	cmp := comparator(typ)
	// kept[k] is the position in vals of the k-th value that is neither
	// NULL nor too wide: its "tuple number" below.
	kept := make([]int32, 0, sampleRows)
	nullCnt, nonNullCnt, tooWide := 0, 0, 0
	totalWidth := 0.0
	for i, v := range vals {
		if v.Null {
			nullCnt++
			continue
		}
		nonNullCnt++
		if varWidth {
			w := storedWidth(typ, v)
			totalWidth += float64(w)
			if rawSize(typ, v) > widthThreshold {
				tooWide++
				continue
			}
		}
		kept = append(kept, int32(i))
	}
	cs := &ColumnStats{TypeOID: typ.OID}
	width := func() int32 {
		if varWidth {
			return int32(totalWidth / float64(nonNullCnt))
		}
		return int32(typ.Len)
	}
	nullFrac := float64(nullCnt) / float64(sampleRows)
	valuesCnt := len(kept)
	switch {
	case valuesCnt == 0 && nonNullCnt > 0: // every value too wide: a unique column
		cs.NullFrac, cs.AvgWidth = round4(nullFrac), width()
		cs.NDistinct = round4(-1 * (1 - nullFrac))
		return cs
	case valuesCnt == 0: // only NULLs
		cs.NullFrac = 1
		if !varWidth {
			cs.AvgWidth = int32(typ.Len)
		}
		return cs
	}

	// Sort by value, equal values by position, and walk the groups of
	// equal values: count the distinct values, those seen more than once,
	// keep the target most common (ties in value order, as PostgreSQL's
	// insertion keeps them), and sum rank × position for the correlation.
	order, keys := sortedOrder(vals, kept, typ, cmp)
	value := func(i int) types.Datum { return vals[kept[order[i]]] }
	type mcvItem struct{ count, first int }
	numMCV, numBins := target, target
	track := make([]mcvItem, 0, numMCV)
	corrXY := 0.0
	ndistinct, nmultiple, dups := 0, 0, 0
	for i := range order {
		corrXY += float64(i) * float64(order[i])
		dups++
		if i+1 < valuesCnt && (keys != nil && keys[order[i]] == keys[order[i+1]] || keys == nil && cmp(value(i), value(i+1)) == 0) {
			continue
		}
		// the last of a group of equal values
		ndistinct++
		if dups > 1 {
			nmultiple++
			if len(track) < numMCV || dups > track[len(track)-1].count {
				if len(track) < numMCV {
					track = append(track, mcvItem{})
				}
				j := len(track) - 1
				for ; j > 0 && dups > track[j-1].count; j-- {
					track[j] = track[j-1]
				}
				track[j] = mcvItem{dups, i + 1 - dups}
			}
		}
		dups = 0
	}

	cs.NullFrac, cs.AvgWidth = round4(nullFrac), width()
	var stadistinct float64
	switch {
	case nmultiple == 0: // no repeated value: assume a unique column
		stadistinct = -1 * (1 - nullFrac)
	case tooWide == 0 && nmultiple == ndistinct: // every value repeated: just these
		stadistinct = float64(ndistinct)
	default:
		stadistinct = Duj1(sampleRows-nullCnt, ndistinct-nmultiple+tooWide, ndistinct+tooWide, totalRows*(1-nullFrac))
	}
	if stadistinct > 0.1*totalRows {
		stadistinct = -(stadistinct / totalRows)
	}
	cs.NDistinct = round4(stadistinct)

	// How many common values to keep: all of them if they are every value
	// of the sample and fit, else those significantly more common than
	// the rest (analyze_mcv_list).
	if len(track) == ndistinct && tooWide == 0 && stadistinct > 0 && len(track) <= numMCV {
		numMCV = len(track)
	} else {
		numMCV = min(numMCV, len(track))
		if numMCV > 0 {
			counts := make([]int, numMCV)
			for i := range counts {
				counts[i] = track[i].count
			}
			numMCV = mcvListSize(counts, stadistinct, nullFrac, sampleRows, totalRows)
		}
	}
	track = track[:numMCV]
	if numMCV > 0 {
		cs.MCV = make([]types.Datum, numMCV)
		cs.MCVFreq = make([]float64, numMCV)
		for i, t := range track {
			cs.MCV[i] = value(t.first)
			cs.MCVFreq[i] = round4(float64(t.count) / float64(sampleRows))
		}
	}

	// A histogram over the values not in the MCV list, if at least two
	// distinct ones remain: the first and last and evenly spaced ones
	// between.
	numHist := ndistinct - numMCV
	if numHist > numBins {
		numHist = numBins + 1
	}
	if numHist >= 2 {
		slices.SortFunc(track, func(a, b mcvItem) int { return a.first - b.first })
		rest := make([]types.Datum, 0, valuesCnt)
		src := 0
		for _, t := range track {
			for ; src < t.first; src++ {
				rest = append(rest, value(src))
			}
			src = t.first + t.count
		}
		for ; src < valuesCnt; src++ {
			rest = append(rest, value(src))
		}
		nvals := len(rest)
		cs.Histogram = make([]types.Datum, numHist)
		delta, deltaFrac := (nvals-1)/(numHist-1), (nvals-1)%(numHist-1)
		pos, posFrac := 0, 0
		for i := range cs.Histogram {
			cs.Histogram[i] = rest[pos]
			pos += delta
			posFrac += deltaFrac
			if posFrac >= numHist-1 {
				pos++
				posFrac -= numHist - 1
			}
		}
	}

	// The correlation of rank and position: both run over 0..n-1, so
	// their sums and sums of squares are known.
	if valuesCnt > 1 {
		n := float64(valuesCnt)
		xsum := (n - 1) * n / 2
		x2sum := (n - 1) * n * (2*n - 1) / 6
		cs.Correlation = round4((n*corrXY - xsum*xsum) / (n*x2sum - xsum*xsum))
		cs.HasCorrelation = true
	}
	return cs
}

// Duj1 is Haas and Stokes's Duj1 estimator of the number of distinct
// values, n·d / (n − f1 + f1·n/N), for n sampled non-NULL values of N,
// with d distinct in the sample and f1 seen exactly once; clamped to
// [d, N] and rounded, as compute_scalar_stats does.
func Duj1(n, f1, d int, N float64) float64 {
	est := 0.0
	if N > 0 {
		nn, ff := float64(n), float64(f1)
		est = nn * float64(d) / ((nn - ff) + ff*nn/N)
	}
	est = max(est, float64(d))
	est = min(est, N)
	return math.Floor(est + 0.5)
}

// mcvListSize is analyze_mcv_list: counts are the sample counts of the
// candidate common values, most common first. From the least common up,
// a value is dropped unless its count exceeds what its frequency would be
// outside the list (the rest of the non-NULL rows shared evenly among
// the other distinct values) by more than two standard deviations of a
// hypergeometric sample count, plus 0.5. The whole list is kept when the
// sample is the whole table.
func mcvListSize(counts []int, stadistinct, nullFrac float64, sampleRows int, totalRows float64) int {
	n := len(counts)
	if float64(sampleRows) == totalRows || totalRows <= 1 {
		return n
	}
	ndistinctTable := stadistinct
	if ndistinctTable < 0 {
		ndistinctTable = -ndistinctTable * totalRows
	}
	sum := 0.0
	for i := 0; i < n-1; i++ {
		sum += float64(counts[i])
	}
	for n > 0 {
		selec := 1 - sum/float64(sampleRows) - nullFrac
		selec = min(max(selec, 0), 1)
		if other := ndistinctTable - float64(n-1); other > 1 {
			selec /= other
		}
		N, sn := totalRows, float64(sampleRows)
		K := N * float64(counts[n-1]) / sn
		stddev := math.Sqrt(sn * K * (N - K) * (N - sn) / (N * N * (N - 1)))
		if float64(counts[n-1]) > selec*sn+2*stddev+0.5 {
			break
		}
		n--
		if n == 0 {
			break
		}
		sum -= float64(counts[n-1])
	}
	return n
}

// comparator orders non-NULL values of typ as its "<" operator does
// (bytewise for strings: lockd's collation is C). Numerics are parsed
// once per value, not per comparison.
// sortedOrder returns the tuple numbers 0..len(kept)-1 ordered by their
// values (vals[kept[k]]), equal values by tuple number — a permutation,
// so that the sort moves 4-byte numbers, not datums. Integer columns,
// the common case, compare their numbers directly: keys, returned for
// them, holds tuple k's number at k.
func sortedOrder(vals []types.Datum, kept []int32, typ types.Type, cmp func(a, b types.Datum) int) (order []int32, keys []int64) {
	order = make([]int32, len(kept))
	for k := range order {
		order[k] = int32(k)
	}
	switch typ.OID {
	case types.OIDInt2, types.OIDInt4, types.OIDInt8:
		keys = make([]int64, len(kept))
		for k, i := range kept {
			keys[k] = vals[i].I
		}
		slices.SortFunc(order, func(a, b int32) int {
			if ka, kb := keys[a], keys[b]; ka != kb {
				if ka < kb {
					return -1
				}
				return 1
			}
			return int(a - b)
		})
	default:
		slices.SortFunc(order, func(a, b int32) int {
			if c := cmp(vals[kept[a]], vals[kept[b]]); c != 0 {
				return c
			}
			return int(a - b)
		})
	}
	return order, keys
}

func comparator(typ types.Type) func(a, b types.Datum) int {
	if typ.OID == types.OIDNumeric {
		parsed := map[string]*types.Numeric{}
		num := func(s string) *types.Numeric {
			n, ok := parsed[s]
			if !ok {
				n = types.MustNumeric(s)
				parsed[s] = n
			}
			return n
		}
		return func(a, b types.Datum) int { return num(a.S).Cmp(num(b.S)) }
	}
	c := types.Comparator(typ)
	return func(a, b types.Datum) int {
		r, _ := c(a, b)
		return r
	}
}

// storedWidth is the size of a variable-width value as a heap tuple holds
// it (VARSIZE_ANY): its data with a 1-byte header up to 126 bytes, a
// 4-byte one beyond. Compression of values over 2 kB is not modelled.
func storedWidth(typ types.Type, v types.Datum) int {
	n := dataSize(typ, v)
	if n <= 126 {
		return n + 1
	}
	return n + 4
}

// rawSize is toast_raw_datum_size: the data with a 4-byte header.
func rawSize(typ types.Type, v types.Datum) int { return dataSize(typ, v) + 4 }

// dataSize is the size of a variable-width value's data: the text's
// bytes (a char(n) padded to n characters), or a numeric's
// base-10000 digits and header.
func dataSize(typ types.Type, v types.Datum) int {
	switch typ.OID {
	case types.OIDNumeric:
		return numericSize(v.S)
	case types.OIDBpchar:
		n := len(v.S)
		if typ.Mod > 4 {
			if c := utf8.RuneCountInString(v.S); c < int(typ.Mod-4) {
				n += int(typ.Mod-4) - c
			}
		}
		return n
	}
	return len(v.S)
}

// numericSize is the data size of a numeric in PostgreSQL's format: its
// base-10000 digits (leading and trailing zero digits stripped) at 2
// bytes each, after a 2-byte header when the weight and display scale
// fit the short format, 4 bytes otherwise.
func numericSize(s string) int {
	s = strings.TrimLeft(s, "+-")
	intPart, frac, _ := strings.Cut(s, ".")
	dscale := len(frac)
	intPart = strings.TrimLeft(intPart, "0")
	// group the digits in fours around the decimal point
	var groups []string
	if lead := len(intPart) % 4; lead != 0 {
		intPart = strings.Repeat("0", 4-lead) + intPart
	}
	for i := 0; i < len(intPart); i += 4 {
		groups = append(groups, intPart[i:i+4])
	}
	intGroups := len(groups)
	if r := len(frac) % 4; r != 0 {
		frac += strings.Repeat("0", 4-r)
	}
	for i := 0; i < len(frac); i += 4 {
		groups = append(groups, frac[i:i+4])
	}
	first, last := 0, len(groups)
	for first < last && groups[first] == "0000" {
		first++
	}
	for last > first && groups[last-1] == "0000" {
		last--
	}
	ndigits := last - first
	header := 2
	if ndigits > 0 {
		weight := intGroups - 1 - first
		if weight < -64 || weight > 63 || dscale > 63 {
			header = 4
		}
	}
	return header + 2*ndigits
}

package stats

import (
	"math/rand/v2"
)

// SampleRows is how many rows ANALYZE samples for a statistics target:
// 300 per unit of target (std_typanalyze's minrows), at least 100.
func SampleRows(target int) int { return max(100, 300*target) }

// BlockSampler picks n of a relation's N blocks, each set of n equally
// likely, in ascending order (Knuth's Algorithm S, as BlockSampler_Next):
// the first stage of ANALYZE's two-stage sample. The zero value is not
// usable; make one with NewBlockSampler.
type BlockSampler struct {
	n, N   int // blocks wanted, blocks in the relation
	t, m   int // next block to consider, blocks chosen so far
	random *rand.Rand
}

// NewBlockSampler samples up to n of N blocks.
func NewBlockSampler(N, n int, r *rand.Rand) *BlockSampler {
	return &BlockSampler{n: min(n, N), N: N, random: r}
}

// Chosen is how many blocks have been returned so far.
func (bs *BlockSampler) Chosen() int { return bs.m }

// Next returns the next chosen block, false when there are no more.
func (bs *BlockSampler) Next() (int, bool) {
	if bs.t >= bs.N || bs.m >= bs.n {
		return 0, false
	}
	K, k := bs.N-bs.t, bs.n-bs.m // blocks left, blocks still to choose
	if k < K {
		// skip each block with probability 1 - k/K, K shrinking
		v := bs.random.Float64()
		p := 1 - float64(k)/float64(K)
		for v < p {
			bs.t++
			K--
			p *= 1 - float64(k)/float64(K)
		}
	}
	bs.m++
	bs.t++
	return bs.t - 1, true
}

// Reservoir keeps a uniform random sample of at most n of the items
// offered to it (Algorithm R): the first n are kept, then the i-th
// (0-based) replaces a random one with probability n/(i+1). The second
// stage of ANALYZE's sample.
type Reservoir struct {
	n      int
	seen   int
	random *rand.Rand
}

// NewReservoir keeps up to n items.
func NewReservoir(n int, r *rand.Rand) *Reservoir { return &Reservoir{n: n, random: r} }

// Offer reports where the next item goes: its slot in the sample, or -1
// if it is not kept. Slots below n fill in order first.
func (r *Reservoir) Offer() int {
	i := r.seen
	r.seen++
	if i < r.n {
		return i
	}
	if k := r.random.IntN(i + 1); k < r.n {
		return k
	}
	return -1
}

// Seen is how many items were offered.
func (r *Reservoir) Seen() int { return r.seen }

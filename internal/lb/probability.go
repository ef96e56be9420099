package lb

import (
	"math/big"
	"math/rand/v2"
)

// maxEnumeratedSamples bounds the exact enumeration of ordered samples used
// when pww's comparator is not a total preorder on the candidate set.
const maxEnumeratedSamples = 200_000

// approximateDraws is the number of draws used beyond that bound.
const approximateDraws = 100_000

// selectProbabilities fills e.choices with the exact distribution of the
// sampling step over the candidates capl (positions into ests) with sample
// size m: a uniform m-subset (partial Fisher–Yates gives a uniformly random
// ordered sample), then the first minimum of the comparator in sample
// order.
//
// When the comparator is a total preorder on the set (always for
// wait-and-widen and power-of-n, whose scores are totally ordered), a
// candidate whose score has L strictly lower and E equal candidates
// (itself included) among c wins with probability
//
//	(C(c−L, m) − C(c−L−E, m)) / (E · C(c, m)),
//
// the probability that the best sampled score is its score, shared evenly
// by the E tied candidates. pww's queue-then-percent comparator can be
// intransitive (running counts are compared when either limit is 0); then
// every ordered sample is enumerated exactly with the min_by scan, or, for
// very large sets, the distribution is estimated and ChoicesExact is false.
func (e *Engine) selectProbabilities(snap *Snapshot, ests []est, capl []int32, m int, d *Decision) {
	e.choices = e.choices[:0]
	c := len(capl)
	if c == 0 || m <= 0 {
		return
	}
	// Order the candidates by the comparator (insertion sort, stable).
	s := append([]int32(nil), capl...)
	cmp := func(a, b int32) int { return e.compareEst(snap, &ests[a], &ests[b]) }
	for i := 1; i < len(s); i++ {
		v := s[i]
		j := i
		for ; j > 0 && cmp(v, s[j-1]) < 0; j-- {
			s[j] = s[j-1]
		}
		s[j] = v
	}
	group := make([]int, c)
	for i := 1; i < c; i++ {
		group[i] = group[i-1]
		if cmp(s[i-1], s[i]) < 0 {
			group[i]++
		}
	}
	consistent := true
	for i := 0; i < c && consistent; i++ {
		for j := 0; j < c; j++ {
			want := 0
			if group[i] < group[j] {
				want = -1
			} else if group[i] > group[j] {
				want = 1
			}
			if sign(cmp(s[i], s[j])) != want {
				consistent = false
				break
			}
		}
	}
	if consistent {
		total := new(big.Int).Binomial(int64(c), int64(m))
		for i := 0; i < c; {
			j := i
			for j < c && group[j] == group[i] {
				j++
			}
			lower, equal := i, j-i
			num := new(big.Int).Binomial(int64(c-lower), int64(m))
			num.Sub(num, binom(c-lower-equal, m))
			if num.Sign() > 0 {
				p := new(big.Rat).SetFrac(num, new(big.Int).Mul(total, big.NewInt(int64(equal))))
				f, _ := p.Float64()
				for k := i; k < j; k++ {
					e.choices = append(e.choices, Choice{Cluster: int(ests[s[k]].idx), P: f, Exact: p})
				}
			}
			i = j
		}
		d.ChoicesExact = true
		return
	}
	// Intransitive comparator: count wins over ordered samples.
	wins := make(map[int32]uint64)
	count := uint64(1)
	for i := 0; i < m; i++ {
		count *= uint64(c - i)
		if count > maxEnumeratedSamples {
			break
		}
	}
	if count <= maxEnumeratedSamples {
		used := make([]bool, c)
		var rec func(depth int, best int32)
		rec = func(depth int, best int32) {
			if depth == m {
				wins[best]++
				return
			}
			for i := 0; i < c; i++ {
				if used[i] {
					continue
				}
				used[i] = true
				nb := capl[i]
				if depth > 0 && !(cmp(best, nb) > 0) {
					nb = best
				}
				rec(depth+1, nb)
				used[i] = false
			}
		}
		rec(0, -1)
		for _, p := range capl {
			if w := wins[p]; w > 0 {
				r := new(big.Rat).SetFrac(new(big.Int).SetUint64(w), new(big.Int).SetUint64(count))
				f, _ := r.Float64()
				e.choices = append(e.choices, Choice{Cluster: int(ests[p].idx), P: f, Exact: r})
			}
		}
		d.ChoicesExact = true
		return
	}
	rng := rand.New(rand.NewPCG(1, 2))
	buf := append([]int32(nil), capl...)
	for n := 0; n < approximateDraws; n++ {
		for i := 0; i < m; i++ {
			j := i + rng.IntN(c-i)
			buf[i], buf[j] = buf[j], buf[i]
		}
		best := buf[0]
		for _, p := range buf[1:m] {
			if cmp(best, p) > 0 {
				best = p
			}
		}
		wins[best]++
	}
	for _, p := range capl {
		if w := wins[p]; w > 0 {
			e.choices = append(e.choices, Choice{Cluster: int(ests[p].idx), P: float64(w) / approximateDraws})
		}
	}
	d.ChoicesExact = false
}

// compareEst is the sampled-candidate comparator as a three-way result.
func (e *Engine) compareEst(snap *Snapshot, a, b *est) int {
	if e.pww {
		return compareLeastQueue(&snap.Clusters[a.idx], &snap.Clusters[b.idx], a.queue, b.queue)
	}
	switch {
	case a.key < b.key:
		return -1
	case a.key > b.key:
		return 1
	}
	return 0
}

func binom(n, k int) *big.Int {
	if n < k || n < 0 {
		return new(big.Int)
	}
	return new(big.Int).Binomial(int64(n), int64(k))
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func ratOne() *big.Rat { return big.NewRat(1, 1) }

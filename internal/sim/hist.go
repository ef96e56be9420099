package sim

import (
	"math"
	"math/bits"
)

// Histogram is a fixed-size log-linear histogram of durations in
// nanoseconds: exact below 1024 ns, then 512 buckets per power of two, so
// that a bucket's width is at most 1/512 (≈ 0.2 %) of its values. It
// holds 28,160 counters (220 KiB) whatever the number of samples, and
// keeps the exact sum, count, minimum and maximum.
type Histogram struct {
	counts   []uint64
	n        uint64
	sum      float64 // ns
	min, max int64
}

const (
	histSubBits = 9
	histSub     = 1 << histSubBits // buckets per octave
	histLinear  = 2 * histSub      // exact values below this
	histOctaves = 63 - (histSubBits + 1)
	histBuckets = histLinear + histOctaves*histSub
)

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{counts: make([]uint64, histBuckets), min: math.MaxInt64}
}

func histIndex(v int64) int {
	if v < histLinear {
		if v < 0 {
			return 0
		}
		return int(v)
	}
	k := bits.Len64(uint64(v)) - 1 // ≥ histSubBits+1
	shift := k - histSubBits
	return histLinear + (k-histSubBits-1)*histSub + int(uint64(v)>>uint(shift)) - histSub
}

// histLower returns the smallest value of bucket i and the bucket width.
func histLower(i int) (int64, int64) {
	if i < histLinear {
		return int64(i), 1
	}
	j := i - histLinear
	k := j/histSub + histSubBits + 1
	shift := k - histSubBits
	m := int64(j%histSub + histSub)
	return m << uint(shift), int64(1) << uint(shift)
}

// Add records one value (ns; negative values count as 0).
func (h *Histogram) Add(v int64) {
	v = max(v, 0)
	h.counts[histIndex(v)]++
	h.n++
	h.sum += float64(v)
	h.min = min(h.min, v)
	h.max = max(h.max, v)
}

// Count returns the number of values.
func (h *Histogram) Count() uint64 { return h.n }

// Mean returns the exact mean (ns), 0 when empty.
func (h *Histogram) Mean() float64 {
	if h.n == 0 {
		return 0
	}
	return h.sum / float64(h.n)
}

// Sum returns the exact sum (ns).
func (h *Histogram) Sum() float64 { return h.sum }

// Max returns the largest value (ns), 0 when empty.
func (h *Histogram) Max() int64 {
	if h.n == 0 {
		return 0
	}
	return h.max
}

// Quantile returns the q-quantile (0 ≤ q ≤ 1, ns): the midpoint of the
// bucket holding the ⌈q·n⌉-th smallest value, clamped to [min, max]; 0
// when empty.
func (h *Histogram) Quantile(q float64) float64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		if seen >= rank {
			lo, w := histLower(i)
			v := float64(lo) + float64(w-1)/2
			return math.Min(math.Max(v, float64(h.min)), float64(h.max))
		}
	}
	return float64(h.max)
}

// CDFPoint is one point of an empirical distribution function.
type CDFPoint struct {
	// X is a value (ns); P the share of values ≤ X.
	X, P float64
}

// CDF returns the distribution function at each non-empty bucket's upper
// edge, thinned to at most maxPoints points (the last point, P = 1, is
// always kept).
func (h *Histogram) CDF(maxPoints int) []CDFPoint {
	if h.n == 0 {
		return nil
	}
	var pts []CDFPoint
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		lo, w := histLower(i)
		x := math.Min(float64(lo+w-1), float64(h.max))
		pts = append(pts, CDFPoint{X: x, P: float64(seen) / float64(h.n)})
	}
	if maxPoints > 1 && len(pts) > maxPoints {
		out := make([]CDFPoint, 0, maxPoints)
		step := float64(len(pts)-1) / float64(maxPoints-1)
		for i := 0; i < maxPoints; i++ {
			out = append(out, pts[int(math.Round(float64(i)*step))])
		}
		pts = out
	}
	return pts
}

// Merge adds o's values into h.
func (h *Histogram) Merge(o *Histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.sum += o.sum
	if o.n > 0 {
		h.min = min(h.min, o.min)
		h.max = max(h.max, o.max)
	}
}

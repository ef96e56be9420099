package metrics

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
)

// Bucket is one cumulative histogram bucket: the number of observations
// less than or equal to UpperBound (seconds for the lookup duration).
// In JSON, UpperBound is the "le" string as Prometheus writes it ("0.005",
// "+Inf"), since JSON numbers cannot hold infinity.
type Bucket struct {
	UpperBound float64 `json:"-"`     // le, seconds; +Inf for the last bucket
	Count      float64 `json:"count"` // cumulative observations ≤ UpperBound
}

// MarshalJSON renders {"le": "<bound>", "count": n}.
func (b Bucket) MarshalJSON() ([]byte, error) {
	le := strconv.FormatFloat(b.UpperBound, 'g', -1, 64)
	if math.IsInf(b.UpperBound, 1) {
		le = "+Inf"
	}
	return json.Marshal(struct {
		LE    string  `json:"le"`
		Count float64 `json:"count"`
	}{le, b.Count})
}

// Histogram is a classic (bucketed) histogram: cumulative buckets sorted by
// upper bound, the total count and the sum of observations.
type Histogram struct {
	Buckets []Bucket `json:"buckets"` // cumulative, sorted by upper bound
	Count   float64  `json:"count"`   // number of observations
	Sum     float64  `json:"sum"`     // sum of observations (seconds)
}

// add merges o into h, bucket by bucket (equal upper bounds are summed;
// bounds present in only one side are kept). Merging histograms with
// different layouts yields an approximation, as in Prometheus.
func (h *Histogram) add(o Histogram) {
	byLE := make(map[float64]float64, len(h.Buckets)+len(o.Buckets))
	for _, b := range h.Buckets {
		byLE[b.UpperBound] += b.Count
	}
	for _, b := range o.Buckets {
		byLE[b.UpperBound] += b.Count
	}
	h.Buckets = h.Buckets[:0]
	for le, c := range byLE {
		h.Buckets = append(h.Buckets, Bucket{UpperBound: le, Count: c})
	}
	sort.Slice(h.Buckets, func(i, j int) bool { return h.Buckets[i].UpperBound < h.Buckets[j].UpperBound })
	h.Count += o.Count
	h.Sum += o.Sum
}

// since returns the increase from before to h. When the count went down
// the process restarted and h itself is the increase (Prometheus counter
// reset rule); otherwise each bucket, the count and the sum are subtracted,
// a bucket missing from before counting as 0.
func (h Histogram) since(before Histogram) Histogram {
	if h.Count < before.Count {
		return h.clone()
	}
	prev := make(map[float64]float64, len(before.Buckets))
	for _, b := range before.Buckets {
		prev[b.UpperBound] = b.Count
	}
	out := Histogram{Count: h.Count - before.Count, Sum: h.Sum - before.Sum}
	for _, b := range h.Buckets {
		d := b.Count - prev[b.UpperBound]
		if d < 0 {
			return h.clone()
		}
		out.Buckets = append(out.Buckets, Bucket{UpperBound: b.UpperBound, Count: d})
	}
	return out
}

func (h Histogram) clone() Histogram {
	h.Buckets = append([]Bucket(nil), h.Buckets...)
	return h
}

// Quantile estimates the q-quantile (0 ≤ q ≤ 1) of the observations the
// way PromQL's histogram_quantile does for classic buckets: find the bucket
// holding rank q·total and interpolate linearly inside it, the first
// bucket's lower bound being 0 (or its upper bound when that is ≤ 0). If
// the rank falls in the +Inf bucket, the largest finite upper bound is
// returned. Bucket counts that decrease are raised to stay monotonic. ok is
// false when there are no observations, no buckets, q is outside [0,1], or
// the answer is not a finite number.
func (h Histogram) Quantile(q float64) (v float64, ok bool) {
	if math.IsNaN(q) || q < 0 || q > 1 || len(h.Buckets) == 0 {
		return 0, false
	}
	bs := append([]Bucket(nil), h.Buckets...)
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound })
	for i := range bs {
		if math.IsNaN(bs[i].Count) || bs[i].Count < 0 {
			bs[i].Count = 0
		}
		if i > 0 && bs[i].Count < bs[i-1].Count {
			bs[i].Count = bs[i-1].Count
		}
	}
	total := bs[len(bs)-1].Count
	if !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		// No +Inf bucket: observations above the last bound are only
		// known through the count.
		if h.Count > total {
			bs = append(bs, Bucket{UpperBound: math.Inf(1), Count: h.Count})
			total = h.Count
		}
	}
	if total <= 0 {
		return 0, false
	}
	rank := q * total
	i := sort.Search(len(bs), func(i int) bool { return bs[i].Count >= rank })
	if i >= len(bs) {
		i = len(bs) - 1
	}
	if math.IsInf(bs[i].UpperBound, 1) {
		// The highest finite bound is the best estimate available.
		for j := i - 1; j >= 0; j-- {
			if !math.IsInf(bs[j].UpperBound, 1) {
				return finite(bs[j].UpperBound)
			}
		}
		return 0, false
	}
	upper := bs[i].UpperBound
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = bs[i-1].UpperBound, bs[i-1].Count
	} else if upper <= 0 {
		return finite(upper)
	}
	inBucket := bs[i].Count - below
	if inBucket <= 0 {
		return finite(upper)
	}
	return finite(lower + (upper-lower)*(rank-below)/inBucket)
}

func finite(v float64) (float64, bool) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

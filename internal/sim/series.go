package sim

// Series is a bounded time series of one run: fixed-width bins from time
// 0 whose width doubles (pairs of bins merge) whenever the run outgrows
// MaxBins bins, so memory does not grow with run length.
type Series struct {
	// BinNs is the bin width (ns).
	BinNs int64
	// Clusters is the number of clusters per load sample.
	Clusters int
	// Bins hold the per-bin sums, oldest first.
	Bins []SeriesBin
	// Load holds per-bin, per-cluster sums of slot utilisation samples
	// (running / concurrency at each snapshot publication), row-major:
	// Load[bin*Clusters+cluster].
	Load []float64
	// LoadSamples is the number of load samples per bin.
	LoadSamples []int32
}

// SeriesBin sums the requests whose prefill started in the bin.
type SeriesBin struct {
	// InputTokens and CachedTokens are the admitted requests' input and the
	// part served from the KV cache (tokens).
	InputTokens, CachedTokens int64
	// FirstTokens counts first tokens; Good those within the TTFT SLO.
	FirstTokens, Good int64
}

// MaxBins bounds a Series.
const MaxBins = 256

func newSeries(clusters int, binNs int64) *Series {
	return &Series{BinNs: max(binNs, 1), Clusters: clusters}
}

// bin returns the index of the bin holding t, growing or coarsening.
func (s *Series) bin(t int64) int {
	t = max(t, 0)
	q := t / s.BinNs
	for q >= MaxBins {
		s.coarsen()
		q = t / s.BinNs
	}
	i := int(q)
	for len(s.Bins) <= i {
		s.Bins = append(s.Bins, SeriesBin{})
		s.LoadSamples = append(s.LoadSamples, 0)
		s.Load = append(s.Load, make([]float64, s.Clusters)...)
	}
	return i
}

func (s *Series) coarsen() {
	n := (len(s.Bins) + 1) / 2
	for i := 0; i < n; i++ {
		a := s.Bins[2*i]
		ls := s.LoadSamples[2*i]
		la := s.Load[2*i*s.Clusters : (2*i+1)*s.Clusters]
		var lb []float64
		if 2*i+1 < len(s.Bins) {
			b := s.Bins[2*i+1]
			a.InputTokens += b.InputTokens
			a.CachedTokens += b.CachedTokens
			a.FirstTokens += b.FirstTokens
			a.Good += b.Good
			ls += s.LoadSamples[2*i+1]
			lb = s.Load[(2*i+1)*s.Clusters : (2*i+2)*s.Clusters]
		}
		s.Bins[i] = a
		s.LoadSamples[i] = ls
		for c := 0; c < s.Clusters; c++ {
			v := la[c]
			if lb != nil {
				v += lb[c]
			}
			s.Load[i*s.Clusters+c] = v
		}
	}
	s.Bins = s.Bins[:n]
	s.LoadSamples = s.LoadSamples[:n]
	s.Load = s.Load[:n*s.Clusters]
	s.BinNs *= 2
}

// MeanLoad returns the mean utilisation of cluster c in bin i (0–1), and
// false when the bin has no sample.
func (s *Series) MeanLoad(i, c int) (float64, bool) {
	if s.LoadSamples[i] == 0 {
		return 0, false
	}
	return s.Load[i*s.Clusters+c] / float64(s.LoadSamples[i]), true
}

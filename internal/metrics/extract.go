package metrics

import (
	"math"
	"slices"
	"sort"
	"strconv"

	dto "github.com/prometheus/client_model/go"
)

// GatewaySnapshot holds the gateway's last-cluster series from one scrape
// (or, after Since, their increase over an interval), summed over every
// label other than "result".
type GatewaySnapshot struct {
	// LookupsPresent, WritesPresent and LatencyPresent report whether each
	// family had at least one series. The gateway pre-creates the counters
	// ("all values start at zero"), so a missing family means a gateway
	// build without the feature or a wrong scrape target.
	LookupsPresent bool // lookups family present
	WritesPresent  bool // writes family present
	LatencyPresent bool // lookup duration histogram present
	// Lookups maps the result label (one of LookupResults) to a count.
	Lookups map[string]float64
	// Writes maps the result label (one of WriteResults) to a count.
	Writes map[string]float64
	// Latency maps the result label to the lookup duration histogram
	// (seconds). skipped lookups are not timed.
	Latency map[string]Histogram
	// InvalidSamples counts the lookup and write counter samples that were
	// NaN, +Inf, -Inf or negative, which no counter can be: they are left
	// out of the counts, and the verdicts report them as a failure.
	InvalidSamples int
	// InvalidLabels are the lookup, write and latency series whose result
	// label is outside its documented set (LookupResults, WriteResults):
	// left out of every count, and reported by the verdicts.
	InvalidLabels InvalidLabels
}

// SelectionKey identifies one series of the session selections counter.
type SelectionKey struct {
	RoutingKey   string `json:"routing_key"`   // routing_key label ("" when absent)
	Model        string `json:"model"`         // model label
	Algorithm    string `json:"algorithm"`     // effective algorithm label
	SessionState string `json:"session_state"` // new, returning or stale
	Selection    string `json:"selection"`     // primary or fallback
}

// StargateSnapshot holds Stargate's session selection series from one
// scrape (or their increase over an interval).
type StargateSnapshot struct {
	// Name is the full metric name looked up (prefix + suffix).
	Name string
	// Present reports whether the family had at least one series. Stargate
	// creates the series on the first classified request only, so absence
	// means no request was classified since the process started: the flag
	// is off everywhere, or no request carried a cache affinity key.
	Present bool
	// Selections maps series to counts, summed over other labels.
	Selections map[SelectionKey]float64
	// InvalidSamples counts the samples that were NaN, +Inf, -Inf or
	// negative: left out of Selections, reported by the verdicts.
	InvalidSamples int
	// InvalidLabels are the series whose session_state or selection is
	// outside its documented set (SessionStates, Selections): left out of
	// Selections, reported by the verdicts.
	InvalidLabels InvalidLabels
}

// ModelNames returns the distinct model labels of s's series, sorted
// (empty, not nil, when there are none).
func (s StargateSnapshot) ModelNames() []string {
	seen := map[string]bool{}
	names := []string{}
	for k := range s.Selections {
		if !seen[k.Model] {
			seen[k.Model] = true
			names = append(names, k.Model)
		}
	}
	sort.Strings(names)
	return names
}

// ExtractGateway reads the gateway's last-cluster families from s.
// Counter families may be typed counter or untyped; the histogram must be
// typed histogram, or be given as untyped "_bucket"/"_count"/"_sum" series.
// Series with NaN or negative values are ignored.
func ExtractGateway(s *Scrape) GatewaySnapshot {
	g := GatewaySnapshot{Lookups: map[string]float64{}, Writes: map[string]float64{}, Latency: map[string]Histogram{}}
	g.LookupsPresent = sumCounterBy(s.Families[GatewayLookups], "result", LookupResults, g.Lookups, &g.InvalidSamples, &g.InvalidLabels)
	g.WritesPresent = sumCounterBy(s.Families[GatewayWrites], "result", WriteResults, g.Writes, &g.InvalidSamples, &g.InvalidLabels)
	g.LatencyPresent = extractHistogramBy(s, GatewayLookupDuration, "result", LookupResults, g.Latency, &g.InvalidLabels)
	return g
}

// ExtractStargate reads prefix+SessionSelectionsSuffix from s; an empty
// prefix means DefaultStargatePrefix.
func ExtractStargate(s *Scrape, prefix string) StargateSnapshot {
	if prefix == "" {
		prefix = DefaultStargatePrefix
	}
	st := StargateSnapshot{Name: prefix + SessionSelectionsSuffix, Selections: map[SelectionKey]float64{}}
	mf := s.Families[st.Name]
	if mf == nil || !counterLike(mf) {
		return st
	}
	for _, m := range mf.GetMetric() {
		v, ok := counterValue(mf, m)
		if !ok {
			if invalidSample(mf, m) {
				st.InvalidSamples++
			}
			continue
		}
		// One pass over the labels (the first of a repeated name wins,
		// as label() does).
		var k SelectionKey
		var seen [5]bool
		for _, l := range m.GetLabel() {
			var f int
			var dst *string
			switch l.GetName() {
			case "routing_key":
				f, dst = 0, &k.RoutingKey
			case "model":
				f, dst = 1, &k.Model
			case "algorithm":
				f, dst = 2, &k.Algorithm
			case "session_state":
				f, dst = 3, &k.SessionState
			case "selection":
				f, dst = 4, &k.Selection
			default:
				continue
			}
			if !seen[f] {
				seen[f], *dst = true, l.GetValue()
			}
		}
		if !slices.Contains(SessionStates, k.SessionState) {
			st.InvalidLabels.add(mf.GetName(), m, "session_state", k.SessionState)
			continue
		}
		if !slices.Contains(Selections, k.Selection) {
			st.InvalidLabels.add(mf.GetName(), m, "selection", k.Selection)
			continue
		}
		st.Present = true
		st.Selections[k] += v
	}
	return st
}

// Since returns the increase of each series from before to g. A series
// that went down was reset (process restart) and counts from zero; a series
// absent from before counts from zero. Presence flags are g's.
func (g GatewaySnapshot) Since(before GatewaySnapshot) GatewaySnapshot {
	out := GatewaySnapshot{
		LookupsPresent: g.LookupsPresent, WritesPresent: g.WritesPresent, LatencyPresent: g.LatencyPresent,
		InvalidSamples: g.InvalidSamples + before.InvalidSamples,
		InvalidLabels:  g.InvalidLabels.merge(before.InvalidLabels),
		Lookups:        counterIncrease(g.Lookups, before.Lookups),
		Writes:         counterIncrease(g.Writes, before.Writes),
		Latency:        map[string]Histogram{},
	}
	for k, h := range g.Latency {
		out.Latency[k] = h.since(before.Latency[k])
	}
	return out
}

// Since returns the increase of each series from before to s, with the
// same reset rule as GatewaySnapshot.Since.
func (s StargateSnapshot) Since(before StargateSnapshot) StargateSnapshot {
	return StargateSnapshot{Name: s.Name, Present: s.Present, Selections: counterIncrease(s.Selections, before.Selections),
		InvalidSamples: s.InvalidSamples + before.InvalidSamples, InvalidLabels: s.InvalidLabels.merge(before.InvalidLabels)}
}

func counterIncrease[K comparable](after, before map[K]float64) map[K]float64 {
	out := make(map[K]float64, len(after))
	for k, v := range after {
		if p := before[k]; v >= p {
			out[k] = v - p
		} else {
			out[k] = v
		}
	}
	return out
}

func counterLike(mf *dto.MetricFamily) bool {
	switch mf.GetType() {
	case dto.MetricType_COUNTER, dto.MetricType_UNTYPED, dto.MetricType_GAUGE:
		return true
	}
	return false
}

func counterValue(mf *dto.MetricFamily, m *dto.Metric) (float64, bool) {
	var v float64
	switch mf.GetType() {
	case dto.MetricType_COUNTER:
		if m.GetCounter() == nil {
			return 0, false
		}
		v = m.GetCounter().GetValue()
	case dto.MetricType_UNTYPED:
		if m.GetUntyped() == nil {
			return 0, false
		}
		v = m.GetUntyped().GetValue()
	case dto.MetricType_GAUGE:
		if m.GetGauge() == nil {
			return 0, false
		}
		v = m.GetGauge().GetValue()
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, false
	}
	return v, true
}

// invalidSample reports whether m holds a value that no counter can have
// (NaN, ±Inf or negative), as opposed to a sample of another type.
func invalidSample(mf *dto.MetricFamily, m *dto.Metric) bool {
	var v float64
	switch {
	case mf.GetType() == dto.MetricType_COUNTER && m.GetCounter() != nil:
		v = m.GetCounter().GetValue()
	case mf.GetType() == dto.MetricType_UNTYPED && m.GetUntyped() != nil:
		v = m.GetUntyped().GetValue()
	case mf.GetType() == dto.MetricType_GAUGE && m.GetGauge() != nil:
		v = m.GetGauge().GetValue()
	default:
		return false
	}
	return math.IsNaN(v) || math.IsInf(v, 0) || v < 0
}

// sumCounterBy sums mf's valid samples by the label by into into; a
// sample whose by value is not in allowed is left out and recorded in
// labels, one with a value no counter can have is counted in invalid.
func sumCounterBy(mf *dto.MetricFamily, by string, allowed []string, into map[string]float64, invalid *int, labels *InvalidLabels) bool {
	if mf == nil || !counterLike(mf) {
		return false
	}
	present := false
	for _, m := range mf.GetMetric() {
		v, ok := counterValue(mf, m)
		if !ok {
			if invalidSample(mf, m) {
				*invalid++
			}
			continue
		}
		l := label(m, by)
		if !slices.Contains(allowed, l) {
			labels.add(mf.GetName(), m, by, l)
			continue
		}
		present = true
		into[l] += v
	}
	return present
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func histogramFromDTO(h *dto.Histogram) (Histogram, bool) {
	if h == nil {
		return Histogram{}, false
	}
	out := Histogram{Sum: h.GetSampleSum()}
	out.Count = float64(h.GetSampleCount())
	if f := h.GetSampleCountFloat(); f != 0 {
		out.Count = f
	}
	for _, b := range h.GetBucket() {
		c := float64(b.GetCumulativeCount())
		if f := b.GetCumulativeCountFloat(); f != 0 {
			c = f
		}
		ub := b.GetUpperBound()
		if math.IsNaN(ub) || math.IsNaN(c) || math.IsInf(c, 0) || c < 0 {
			continue
		}
		out.Buckets = append(out.Buckets, Bucket{UpperBound: ub, Count: c})
	}
	if math.IsNaN(out.Count) || math.IsInf(out.Count, 0) || out.Count < 0 || math.IsNaN(out.Sum) || math.IsInf(out.Sum, 0) {
		return Histogram{}, false
	}
	sort.Slice(out.Buckets, func(i, j int) bool { return out.Buckets[i].UpperBound < out.Buckets[j].UpperBound })
	return out, true
}

// extractHistogramBy reads a typed histogram family, or its untyped
// "_bucket"/"_count"/"_sum" pieces when the scrape had no TYPE line. A
// series whose by value is not in allowed is left out and recorded in
// labels (each bucket series of the untyped form).
func extractHistogramBy(s *Scrape, name, by string, allowed []string, into map[string]Histogram, labels *InvalidLabels) bool {
	present := false
	if mf := s.Families[name]; mf != nil && mf.GetType() == dto.MetricType_HISTOGRAM {
		for _, m := range mf.GetMetric() {
			h, ok := histogramFromDTO(m.GetHistogram())
			if !ok {
				continue
			}
			if l := label(m, by); !slices.Contains(allowed, l) {
				labels.add(name, m, by, l)
				continue
			}
			present = true
			cur := into[label(m, by)]
			cur.add(h)
			into[label(m, by)] = cur
		}
		return present
	}
	buckets := s.Families[name+"_bucket"]
	if buckets == nil || !counterLike(buckets) {
		return false
	}
	parts := map[string]*Histogram{}
	get := func(k string) *Histogram {
		if parts[k] == nil {
			parts[k] = &Histogram{}
		}
		return parts[k]
	}
	for _, m := range buckets.GetMetric() {
		v, ok := counterValue(buckets, m)
		if !ok {
			continue
		}
		le, ok := parseLE(label(m, "le"))
		if !ok {
			continue
		}
		if l := label(m, by); !slices.Contains(allowed, l) {
			labels.add(buckets.GetName(), m, by, l)
			continue
		}
		h := get(label(m, by))
		h.add(Histogram{Buckets: []Bucket{{UpperBound: le, Count: v}}})
		present = true
	}
	if mf := s.Families[name+"_count"]; mf != nil && counterLike(mf) {
		for _, m := range mf.GetMetric() {
			if v, ok := counterValue(mf, m); ok {
				get(label(m, by)).Count += v
			}
		}
	}
	if mf := s.Families[name+"_sum"]; mf != nil && counterLike(mf) {
		for _, m := range mf.GetMetric() {
			if v, ok := counterValue(mf, m); ok {
				get(label(m, by)).Sum += v
			}
		}
	}
	if !present {
		return false
	}
	for k, h := range parts {
		if len(h.Buckets) == 0 || !slices.Contains(allowed, k) {
			continue
		}
		if h.Count == 0 {
			h.Count = h.Buckets[len(h.Buckets)-1].Count
		}
		cur := into[k]
		cur.add(*h)
		into[k] = cur
	}
	return true
}

func parseLE(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

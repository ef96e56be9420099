package metrics

import (
	"cmp"
	"slices"
	"strings"
	"time"
)

// Lookup and write result label values (gateway.md §6, §7).
const (
	ResultHit     = "hit"
	ResultMiss    = "miss"
	ResultError   = "error"
	ResultTimeout = "timeout"
	ResultSkipped = "skipped"
	ResultOK      = "ok"
)

// Session states and selections (session.md §6.1).
const (
	StateNew          = "new"
	StateReturning    = "returning"
	StateStale        = "stale"
	SelectionPrimary  = "primary"
	SelectionFallback = "fallback"
)

// Mode says whether a report holds totals since process start (one scrape)
// or increases over an interval (two scrapes).
type Mode string

// Report modes.
const (
	ModeTotals Mode = "totals"
	ModeRates  Mode = "rates"
)

// Window describes what a report's counts cover.
type Window struct {
	// Mode is totals or rates.
	Mode Mode `json:"mode"`
	// Seconds is the time between the two scrapes (rates only).
	Seconds float64 `json:"interval_seconds,omitempty"`
}

// PerSecond converts a count over the window to a rate; totals pass
// through unchanged.
func (w Window) PerSecond(count float64) float64 {
	if w.Mode == ModeRates && w.Seconds > 0 {
		return count / w.Seconds
	}
	return count
}

// Interval is the time between the two scrapes rounded to the
// millisecond, as the text output shows it ("over 30s"); 0 for totals.
func (w Window) Interval() time.Duration {
	return time.Duration(w.Seconds * float64(time.Second)).Round(time.Millisecond)
}

// Totals is the window of a single scrape.
var Totals = Window{Mode: ModeTotals}

// RatesOver returns the window of two scrapes d apart.
func RatesOver(d time.Duration) Window { return Window{Mode: ModeRates, Seconds: d.Seconds()} }

// GatewayReport summarises the gateway's last-cluster store activity.
// Counts are totals since process start or increases over the window.
type GatewayReport struct {
	// Source is where the (second) scrape came from.
	Source string `json:"source"`
	// Window tells what the counts cover.
	Window Window `json:"window"`
	// Present reports whether the lookup counter family was in the scrape.
	Present bool `json:"present"`
	// WritesPresent reports whether the write counter family was present.
	WritesPresent bool `json:"writes_present"`
	// InvalidSamples counts every sample left out of the counts: lookup
	// and write samples that were NaN, ±Inf or negative (a failed
	// gateway-metrics.samples) and the InvalidLabels samples.
	InvalidSamples int `json:"invalid_samples"`
	// InvalidLabels are the series whose result label is not one of
	// LookupResults / WriteResults (a failed gateway-metrics.labels).
	InvalidLabels InvalidLabels `json:"invalid_labels"`
	// Lookups are counts by result.
	Lookups map[string]float64 `json:"lookups"`
	// LookupsTotal sums every result; Attempted excludes skipped.
	LookupsTotal float64 `json:"lookups_total"`
	Attempted    float64 `json:"lookups_attempted"` // hit+miss+error+timeout
	// HitRatio is hit / (hit+miss+error+timeout); nil without attempts.
	HitRatio *float64 `json:"hit_ratio"`
	// FailureRatio is (error+timeout) / attempted; nil without attempts.
	FailureRatio *float64 `json:"failure_ratio"`
	// SkippedRatio is skipped / all lookups; nil without lookups.
	SkippedRatio *float64 `json:"skipped_ratio"`
	// Writes are counts by result.
	Writes map[string]float64 `json:"writes"`
	// WritesTotal sums every result.
	WritesTotal float64 `json:"writes_total"`
	// WriteErrorRatio is error / all writes; nil without writes.
	WriteErrorRatio *float64 `json:"write_error_ratio"`
	// Latency summarises the lookup duration over every timed result.
	Latency LatencyReport `json:"lookup_latency"`
}

// LatencyReport is the lookup duration distribution, in seconds.
type LatencyReport struct {
	// Count is the number of timed lookups.
	Count float64 `json:"count"`
	// P50, P90 and P99 are quantile estimates (seconds); nil when there
	// are no observations.
	P50 *float64 `json:"p50_seconds"`
	P90 *float64 `json:"p90_seconds"` // 0.9-quantile, seconds
	P99 *float64 `json:"p99_seconds"` // 0.99-quantile, seconds
	// Buckets are the merged cumulative buckets the estimates come from.
	Buckets []Bucket `json:"buckets"`
}

// SelectionCounts splits one session state's requests by selection.
type SelectionCounts struct {
	Primary  float64 `json:"primary"`  // selection="primary"
	Fallback float64 `json:"fallback"` // selection="fallback"
}

// Total is Primary + Fallback.
func (c SelectionCounts) Total() float64 { return c.Primary + c.Fallback }

// ModelSelections are the session selections of one model and algorithm,
// summed over routing keys (or of one model over all its algorithms).
type ModelSelections struct {
	Model     string `json:"model"`               // model label
	Algorithm string `json:"algorithm,omitempty"` // algorithm label; empty in the all-algorithm rows
	// RoutingKeys is the number of distinct routing keys seen.
	RoutingKeys int `json:"routing_keys"`
	// States maps session_state (new, returning, stale) to its counts.
	States map[string]SelectionCounts `json:"states"`
	// Total sums every state and selection (series with an undocumented
	// session_state or selection are in StargateReport.InvalidLabels,
	// not here).
	Total float64 `json:"total"`
	// ReturningShare is returning / total; nil when total is 0.
	ReturningShare *float64 `json:"returning_share"`
	// ReturningPrimaryShare is returning-primary / returning: the share of
	// returning requests that went to their last cluster; nil without
	// returning requests.
	ReturningPrimaryShare *float64 `json:"returning_primary_share"`
	// ReturningFallbackShare is returning-fallback / returning.
	ReturningFallbackShare *float64 `json:"returning_fallback_share"`
	// StaleShare is stale / total; nil when total is 0.
	StaleShare *float64 `json:"stale_share"`
}

// State returns the counts of one session state.
func (m ModelSelections) State(s string) SelectionCounts { return m.States[s] }

// StargateReport summarises session selections.
type StargateReport struct {
	// Source is where the (second) scrape came from.
	Source string `json:"source"`
	// Metric is the full metric name read.
	Metric string `json:"metric"`
	// Window tells what the counts cover.
	Window Window `json:"window"`
	// Present reports whether the family had any series.
	Present bool `json:"present"`
	// InvalidSamples counts every sample left out of the counts: samples
	// that were NaN, ±Inf or negative (a failed stargate-metrics.samples)
	// and the InvalidLabels samples.
	InvalidSamples int `json:"invalid_samples"`
	// InvalidLabels are the series whose session_state or selection is
	// not one of SessionStates / Selections (a failed
	// stargate-metrics.labels).
	InvalidLabels InvalidLabels `json:"invalid_labels"`
	// Rows are per model and algorithm, sorted by model then algorithm.
	Rows []ModelSelections `json:"rows"`
	// Models are per model (all algorithms), sorted by model.
	Models []ModelSelections `json:"models"`
	// ModelsInScrape lists every model label of the family in the scrape,
	// sorted, also those a model filter left out of Rows and Models
	// (empty, never null, when the family is absent).
	ModelsInScrape []string `json:"models_in_scrape"`
}

// Model returns the all-algorithm row of model, and whether it exists.
func (r *StargateReport) Model(model string) (ModelSelections, bool) {
	for _, m := range r.Models {
		if m.Model == model {
			return m, true
		}
	}
	return ModelSelections{}, false
}

func ratio(num, den float64) *float64 {
	if den <= 0 {
		return nil
	}
	v := num / den
	return &v
}

// BuildGatewayReport computes the gateway report from a snapshot (a single
// scrape, or the result of Since).
func BuildGatewayReport(source string, w Window, g GatewaySnapshot) GatewayReport {
	r := GatewayReport{Source: source, Window: w, Present: g.LookupsPresent, WritesPresent: g.WritesPresent,
		InvalidSamples: g.InvalidSamples + g.InvalidLabels.Samples, InvalidLabels: g.InvalidLabels.orEmpty(),
		Lookups: map[string]float64{}, Writes: map[string]float64{}}
	for k, v := range g.Lookups {
		r.Lookups[k] = v
		r.LookupsTotal += v
		if k != ResultSkipped {
			r.Attempted += v
		}
	}
	for k, v := range g.Writes {
		r.Writes[k] = v
		r.WritesTotal += v
	}
	r.HitRatio = ratio(r.Lookups[ResultHit], r.Attempted)
	r.FailureRatio = ratio(r.Lookups[ResultError]+r.Lookups[ResultTimeout], r.Attempted)
	r.SkippedRatio = ratio(r.Lookups[ResultSkipped], r.LookupsTotal)
	r.WriteErrorRatio = ratio(r.Writes[ResultError], r.WritesTotal)
	var merged Histogram
	for k, h := range g.Latency {
		if k == ResultSkipped {
			continue
		}
		merged.add(h)
	}
	r.Latency.Count = merged.Count
	r.Latency.Buckets = merged.Buckets
	if r.Latency.Buckets == nil {
		r.Latency.Buckets = []Bucket{}
	}
	for _, q := range []struct {
		q   float64
		dst **float64
	}{{0.5, &r.Latency.P50}, {0.9, &r.Latency.P90}, {0.99, &r.Latency.P99}} {
		if v, ok := merged.Quantile(q.q); ok {
			*q.dst = &v
		}
	}
	return r
}

// BuildStargateReport computes the session selections report from a
// snapshot. When model is non-empty only that model's series are kept.
//
// The series are sorted once by model, algorithm and routing key and
// walked in that order: rows, models and the routing key counts come out
// of one pass, and Rows, Models and ModelsInScrape are already in their
// order (a map per row and per routing key set made 200,000 models cost
// 1.5 s, docs/performance.md).
func BuildStargateReport(source string, w Window, s StargateSnapshot, model string) StargateReport {
	r := StargateReport{Source: source, Metric: s.Name, Window: w, Present: s.Present,
		InvalidSamples: s.InvalidSamples + s.InvalidLabels.Samples, InvalidLabels: s.InvalidLabels.orEmpty(), Rows: []ModelSelections{}, Models: []ModelSelections{}, ModelsInScrape: []string{}}
	type series struct {
		key *SelectionKey
		v   float64
	}
	keys := make([]SelectionKey, 0, len(s.Selections))
	all := make([]series, 0, len(s.Selections))
	for k, v := range s.Selections {
		keys = append(keys, k)
		all = append(all, series{&keys[len(keys)-1], v})
	}
	slices.SortFunc(all, func(a, b series) int {
		if c := strings.Compare(a.key.Model, b.key.Model); c != 0 {
			return c
		}
		if c := strings.Compare(a.key.Algorithm, b.key.Algorithm); c != 0 {
			return c
		}
		return strings.Compare(a.key.RoutingKey, b.key.RoutingKey)
	})
	for i, e := range all {
		if i == 0 || e.key.Model != all[i-1].key.Model {
			r.ModelsInScrape = append(r.ModelsInScrape, e.key.Model)
		}
	}
	if model != "" {
		kept := all[:0]
		for _, e := range all {
			if e.key.Model == model {
				kept = append(kept, e)
			}
		}
		all = kept
	}
	// Rows and Models at their final size, and the shares of every row
	// and model in one slab instead of four 8-byte allocations each.
	nRows, nModels := 0, 0
	for i := range all {
		if i == 0 || all[i].key.Model != all[i-1].key.Model {
			nModels++
			nRows++
		} else if all[i].key.Algorithm != all[i-1].key.Algorithm {
			nRows++
		}
	}
	r.Rows, r.Models = make([]ModelSelections, 0, nRows), make([]ModelSelections, 0, nModels)
	slab := make([]float64, 0, 4*(nRows+nModels))
	var rks []string // the routing keys of one model, over its algorithms
	for i := 0; i < len(all); {
		mod := all[i].key.Model
		first := len(r.Rows)
		rks = rks[:0]
		for i < len(all) && all[i].key.Model == mod {
			alg := all[i].key.Algorithm
			row := ModelSelections{Model: mod, Algorithm: alg, States: make(map[string]SelectionCounts, 1)}
			for ; i < len(all) && all[i].key.Model == mod && all[i].key.Algorithm == alg; i++ {
				e := all[i]
				if row.RoutingKeys == 0 || e.key.RoutingKey != rks[len(rks)-1] {
					row.RoutingKeys++
					rks = append(rks, e.key.RoutingKey)
				}
				c := row.States[e.key.SessionState]
				switch e.key.Selection {
				case SelectionPrimary:
					c.Primary += e.v
				case SelectionFallback:
					c.Fallback += e.v
				}
				row.States[e.key.SessionState] = c
				row.Total += e.v
			}
			r.Rows = append(r.Rows, row.withShares(&slab))
		}
		// The model's all-algorithm row: with one algorithm, the same
		// counts (and the same States map: a report is read, not
		// changed); with several, their sums.
		m := r.Rows[first]
		m.Algorithm = ""
		if rows := r.Rows[first:]; len(rows) > 1 {
			m.States = make(map[string]SelectionCounts, len(m.States))
			m.Total = 0
			for _, row := range rows {
				for state, c := range row.States {
					sum := m.States[state]
					sum.Primary += c.Primary
					sum.Fallback += c.Fallback
					m.States[state] = sum
				}
				m.Total += row.Total
			}
			slices.Sort(rks)
			m.RoutingKeys = len(slices.Compact(rks))
			m = m.withShares(&slab)
		}
		r.Models = append(r.Models, m)
	}
	return r
}

// withShares returns m with its shares computed from its counts; a share
// that exists is stored in *slab (appended within its capacity when
// there is room) and pointed to.
func (m ModelSelections) withShares(slab *[]float64) ModelSelections {
	share := func(num, den float64) *float64 {
		if den <= 0 {
			return nil
		}
		if len(*slab) == cap(*slab) {
			return ratio(num, den)
		}
		*slab = append(*slab, num/den)
		return &(*slab)[len(*slab)-1]
	}
	ret := m.States[StateReturning]
	m.ReturningShare = share(ret.Total(), m.Total)
	m.ReturningPrimaryShare = share(ret.Primary, ret.Total())
	m.ReturningFallbackShare = share(ret.Fallback, ret.Total())
	m.StaleShare = share(m.States[StateStale].Total(), m.Total)
	return m
}

// MaxTextRows is how many rows (model and algorithm) the text table of
// lcctl check metrics lists; TextRows picks them.
const MaxTextRows = 100

// TextRows returns the rows the text table lists: every row when there
// are at most limit, otherwise the limit rows with the most classified
// requests (Total; ties by model, then algorithm), in the table's order
// (model, then algorithm), and how many rows were left out. The JSON
// report always has every row.
func (r *StargateReport) TextRows(limit int) (rows []ModelSelections, omitted int) {
	if len(r.Rows) <= limit {
		return r.Rows, 0
	}
	idx := make([]int, len(r.Rows))
	for i := range idx {
		idx[i] = i
	}
	// r.Rows is in table order, so an index breaks ties by model, then
	// algorithm.
	slices.SortFunc(idx, func(a, b int) int {
		if c := cmp.Compare(r.Rows[b].Total, r.Rows[a].Total); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	idx = idx[:limit]
	slices.Sort(idx)
	rows = make([]ModelSelections, len(idx))
	for i, j := range idx {
		rows[i] = r.Rows[j]
	}
	return rows, len(r.Rows) - limit
}

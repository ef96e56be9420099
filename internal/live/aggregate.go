package live

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Sample is one gauge sample of one backend: the metric name (prefix
// included), its labels (without __name__) and its value.
type Sample struct {
	Metric string
	Labels map[string]string
	Value  float64
}

// Backend is one Pylon and the samples read from it.
type Backend struct {
	// Cluster is the cluster id it belongs to; ID identifies it (the
	// --pylon URL with any password redacted by metrics.RedactSource, or
	// the backend label's value).
	Cluster, ID string
	// Source is the flag and source it was read from, as errors name it:
	// "--pylon <URL>" or "--prometheus <URL>" (passwords redacted).
	Source string
	// Time is when its samples were taken.
	Time time.Time
	// Samples are its gauges.
	Samples []Sample
}

// Names are the Pylon metric names read (live-snapshot.md §2), built from
// a prefix ("pylon_" by default; older sidecars used "stargate_client_").
type Names struct {
	Prefix string
}

func (n Names) model(s string) string    { return n.Prefix + "model_" + s }
func (n Names) requests(s string) string { return n.Prefix + "requests_" + s }

// Status gauges.
func (n Names) advertised() string { return n.model("advertised_status") }
func (n Names) stream() string     { return n.Prefix + "registration_stream_connected" }
func (n Names) tunnel() string     { return n.Prefix + "reverse_tunnel_connected" }

// modelGauges maps the ModelStats gauges to their snapshot field.
func (n Names) modelGauges() []struct{ metric, field string } {
	return []struct{ metric, field string }{
		{n.model("last_mean_input_tps"), "last_mean_input_tps"},
		{n.model("output_tps"), "output_tps"},
		{n.model("max_output_tps"), "max_output_tps"},
		{n.model("queue_size"), "queue_size"},
		{n.model("queued_input_tokens"), "queued_input_size"},
		{n.model("kv_cache_capacity_tokens"), "kv_cache_capacity_tokens"},
		{n.model("kv_cache_used_tokens"), "kv_cache_used_tokens"},
		{n.model("kv_cache_free_tokens"), "kv_cache_free_tokens"},
		{n.requests("inflight"), "num_running_queries"},
	}
}

// Families lists every metric family read, for a scrape's keep list.
func (n Names) Families() []string {
	out := []string{n.advertised(), n.stream(), n.tunnel(), n.requests("state"), n.requests("state_input_tokens")}
	for _, g := range n.modelGauges() {
		out = append(out, g.metric)
	}
	sort.Strings(out)
	return out
}

// liveStates are the request states whose input tokens make up
// total_query_input_size (live-snapshot.md §2).
var liveStates = []string{"queued", "upstream_connecting", "input_processing", "output_generation"}

// backendValues is what one backend reported for the model.
type backendValues struct {
	b       *Backend
	vals    map[string]float64 // snapshot field -> value
	srcs    map[string]string  // snapshot field -> metric
	status  string             // "active", "inactive", "" (no status series)
	routers []string           // routers the backend advertises the model to
}

// readBackend extracts the model's values from one backend's samples.
// NaN and ±Inf gauges, negative counts and two samples of one series are
// errors naming the source, cluster and field.
func readBackend(source string, b *Backend, n Names, model, router string) (*backendValues, error) {
	bv := &backendValues{b: b, vals: map[string]float64{}, srcs: map[string]string{}}
	field := map[string]string{}
	for _, g := range n.modelGauges() {
		field[g.metric] = g.field
	}
	seen := map[string]bool{}
	gaugeLabels := map[string]string{} // model gauge -> labels of its series
	advertised := map[string]string{}  // router -> status with value 1
	stream := map[string]float64{}
	tunnel := map[string]float64{}
	var stateTokens float64
	stateTokensSeen := false
	for _, s := range b.Samples {
		key := s.Metric + labelKey(s.Labels)
		if seen[key] {
			return nil, usageErr(source, b.Cluster, s.Metric, "backend %s has two samples of %s%s (two scrape jobs or a duplicated target?); lcctl would count it twice", b.ID, s.Metric, labelKey(s.Labels))
		}
		seen[key] = true
		isModelSeries := strings.HasPrefix(s.Metric, n.Prefix+"model_") || strings.HasPrefix(s.Metric, n.Prefix+"requests_")
		if isModelSeries && s.Labels["model"] != model {
			continue
		}
		if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
			return nil, usageErr(source, b.Cluster, fieldOf(field, s.Metric), "backend %s reports %s%s = %v, not a usable number; lcctl does not guess a value", b.ID, s.Metric, labelKey(s.Labels), s.Value)
		}
		switch s.Metric {
		case n.advertised():
			if s.Value == 1 {
				advertised[s.Labels["router"]] = s.Labels["status"]
			}
			continue
		case n.stream():
			stream[s.Labels["router"]] = s.Value
			continue
		case n.tunnel():
			tunnel[s.Labels["router"]] = s.Value
			continue
		}
		if s.Value < 0 {
			return nil, usageErr(source, b.Cluster, fieldOf(field, s.Metric), "backend %s reports %s%s = %v: a gauge of tokens/s, requests or tokens cannot be negative", b.ID, s.Metric, labelKey(s.Labels), s.Value)
		}
		switch s.Metric {
		case n.requests("state"):
			switch s.Labels["state"] {
			case "input_processing":
				bv.set("input_processing_queries", s.Metric+`{state="input_processing"}`, s.Value)
			case "output_generation":
				bv.set("output_generation_queries", s.Metric+`{state="output_generation"}`, s.Value)
			}
		case n.requests("state_input_tokens"):
			if slices.Contains(liveStates, s.Labels["state"]) {
				stateTokens += s.Value
				stateTokensSeen = true
			}
		default:
			if f, ok := field[s.Metric]; ok {
				// One backend exports one series per model of each of
				// these gauges. Series of different backends never meet
				// here (each Pylon page, or each backend-label value, is
				// its own Backend, summed or copied by the §1.4 rule), so
				// a second series of the same backend with other labels
				// is a second exporter or a relabelling slip: refused,
				// never one of them picked.
				if prev, ok := gaugeLabels[s.Metric]; ok {
					return nil, usageErr(source, b.Cluster, f, "backend %s has two series of %s for model %q, %s%s and %s%s; lcctl would pick one (one Pylon exports one: check the scrape jobs and relabelling, or narrow --selector)",
						b.ID, s.Metric, model, s.Metric, prev, s.Metric, labelKey(s.Labels))
				}
				gaugeLabels[s.Metric] = labelKey(s.Labels)
				bv.set(f, s.Metric, s.Value)
			}
		}
	}
	if stateTokensSeen {
		bv.set("total_query_input_size", n.requests("state_input_tokens")+" summed over the live states", stateTokens)
	}
	if len(advertised) > 0 {
		bv.status = "inactive"
		for r, st := range advertised {
			if router != "" && r != router {
				continue
			}
			bv.routers = append(bv.routers, r)
			if st != "active" {
				continue
			}
			// Active for router r: advertised active, its registration
			// stream connected (when the gauge is there) and, for a
			// reverse-tunnel Pylon (a tunnel gauge for r exists), the
			// tunnel up (live-snapshot.md §2 status row).
			if v, ok := stream[r]; ok && v != 1 {
				continue
			}
			if v, ok := tunnel[r]; ok && v != 1 {
				continue
			}
			bv.status = "active"
		}
		sort.Strings(bv.routers)
		if router != "" && len(bv.routers) == 0 {
			bv.status = "inactive"
		}
	}
	return bv, nil
}

func (bv *backendValues) set(field, metric string, v float64) {
	bv.vals[field] = v
	bv.srcs[field] = metric
}

func fieldOf(field map[string]string, metric string) string {
	if f, ok := field[metric]; ok {
		return f
	}
	return metric
}

// labelKey renders labels as {a="x",b="y"} in name order ("" for none).
func labelKey(l map[string]string) string {
	if len(l) == 0 {
		return ""
	}
	names := make([]string, 0, len(l))
	for k := range l {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = fmt.Sprintf("%s=%q", k, l[k])
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// rule is how one field combines over a cluster's backends.
type rule uint8

const (
	ruleSumValid rule = iota // sum of values > 0 (finite: non-finite values are refused earlier)
	ruleSum                  // sum
	ruleLatest               // copied from the source backend
	ruleMax                  // maximum of values > 0
)

func ruleFor(agg Aggregation, field string) rule {
	switch field {
	case "last_mean_input_tps":
		return ruleSumValid
	case "output_tps", "queue_size", "queued_input_size", "input_processing_queries", "output_generation_queries":
		return ruleSum
	case "max_output_tps":
		if agg == AggregationS {
			return ruleLatest
		}
		return ruleMax
	case "num_running_queries", "total_query_input_size":
		if agg == AggregationS {
			return ruleLatest
		}
		return ruleSum
	}
	return ruleLatest // kv_cache_*
}

// String names the rule for notes and warnings.
func (r rule) String() string {
	switch r {
	case ruleSumValid:
		return "sum of values > 0"
	case ruleSum:
		return "sum"
	case ruleMax:
		return "max"
	}
	return "latest"
}

// aggregate combines one cluster's backends by the rules of
// live-snapshot.md §1.4 into c's metric fields, at instant at. The source
// backend (the "latest" rules) is the one sampled last, ties broken by the
// greater id: Stargate takes the backend whose update it processed last,
// which no metric shows, so with several backends this is an
// approximation and a warning says so.
func aggregate(c *Cluster, bvs []*backendValues, agg Aggregation, at time.Time, warn func(string)) {
	sort.Slice(bvs, func(i, j int) bool { return bvs[i].b.ID < bvs[j].b.ID })
	src := 0
	for i, bv := range bvs {
		if !bv.b.Time.Before(bvs[src].b.Time) {
			src = i
		}
	}
	for i, bv := range bvs {
		age := at.Sub(bv.b.Time)
		c.Backends = append(c.Backends, BackendInfo{ID: bv.b.ID, SampleTime: bv.b.Time, Age: age, Source: i == src && len(bvs) > 1})
		c.Age = max(c.Age, age)
	}
	for _, fs := range snapshotFields {
		if !fs.stats {
			continue
		}
		f := c.Get(fs.name)
		r := ruleFor(agg, fs.name)
		var (
			sum, mx float64
			n       int
			age     time.Duration
			metric  string
		)
		if r == ruleLatest {
			bv := bvs[src]
			v, ok := bv.vals[fs.name]
			if !ok {
				continue
			}
			sum, n, age, metric = v, 1, at.Sub(bv.b.Time), bv.srcs[fs.name]
		} else {
			for _, bv := range bvs {
				v, ok := bv.vals[fs.name]
				if !ok {
					continue
				}
				n++
				metric = bv.srcs[fs.name]
				age = max(age, at.Sub(bv.b.Time))
				switch r {
				case ruleSumValid:
					if v > 0 {
						sum += v
					}
				case ruleSum:
					sum += v
				case ruleMax:
					if v > 0 {
						mx = max(mx, v)
					}
				}
			}
			if r == ruleMax {
				sum = mx
			}
		}
		if n == 0 {
			continue
		}
		f.Origin, f.Source, f.Age, f.HasAge = OriginMetric, metric, age, true
		if fs.name == "total_query_input_size" {
			f.Origin = OriginDerived
		}
		if len(bvs) > 1 {
			f.Note = fmt.Sprintf("%s over %d backends", r, len(bvs))
			if r == ruleLatest {
				f.Note = fmt.Sprintf("latest: from backend %s", bvs[src].b.ID)
			}
			if n < len(bvs) && r != ruleLatest {
				warn(fmt.Sprintf("cluster %s: %s is reported by %d of %d backends; the others are left out of the %s", c.ID, fs.name, n, len(bvs), r))
			}
		}
		if fs.name == "num_running_queries" {
			f.Note = strings.TrimPrefix(f.Note+"; approximate: observed live requests, not ModelStats", "; ")
		}
		if fs.kind == KindFloat {
			f.Float = sum
		} else {
			f.Uint = uint64(math.Round(sum))
			if sum > math.MaxUint64/2 {
				f.Uint = math.MaxUint64 / 2
			}
		}
	}
	if len(bvs) > 1 {
		differ := false
		for _, bv := range bvs {
			if bv.vals["kv_cache_capacity_tokens"] != bvs[src].vals["kv_cache_capacity_tokens"] ||
				bv.vals["kv_cache_free_tokens"] != bvs[src].vals["kv_cache_free_tokens"] {
				differ = true
			}
		}
		if differ {
			warn(fmt.Sprintf("cluster %s: its %d backends report different KV-cache sizes; the kv_cache_* fields are backend %s's (Stargate copies the backend it heard from last, which no metric shows)", c.ID, len(bvs), bvs[src].b.ID))
		}
		warn(fmt.Sprintf("cluster %s has %d backends: the 'latest' fields (%s) are copied from backend %s, sampled last; Stargate copies the backend whose update it processed last, which may be another", c.ID, len(bvs), latestFields(agg), bvs[src].b.ID))
	}
	// Status and active_backend_count (derived from the registration
	// gauges).
	known, active := 0, 0
	for _, bv := range bvs {
		if bv.status != "" {
			known++
		}
		if bv.status == "active" {
			active++
		}
	}
	st, cnt := c.Get("status"), c.Get("active_backend_count")
	if known == 0 {
		warn(fmt.Sprintf("cluster %s: status unknown (no advertised_status series for the model): it is written as unknown, so it is not a candidate; give status in --overlay if it serves", c.ID))
		st.Origin, st.Str, st.Note = OriginDerived, "unknown", "no advertised-status series"
		return
	}
	s := "inactive"
	if active > 0 {
		s = "active"
	}
	st.Origin, st.Str, st.Source, st.Age, st.HasAge = OriginDerived, s, "advertised_status, registration_stream_connected, reverse_tunnel_connected", c.Age, true
	st.Note = fmt.Sprintf("%d of %d backends active", active, len(bvs))
	cnt.Origin, cnt.Uint, cnt.Source, cnt.Age, cnt.HasAge = OriginDerived, uint64(active), "advertised_status", c.Age, true
}

func latestFields(agg Aggregation) string {
	if agg == AggregationS {
		return "kv_cache_*, max_output_tps, num_running_queries, total_query_input_size"
	}
	return "kv_cache_*"
}

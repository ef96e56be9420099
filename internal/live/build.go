package live

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/metrics"
)

// Options are the inputs of Build (the flags of `lcctl snapshot`,
// docs/snapshot.md).
type Options struct {
	// Model is the routed model (Pylon's model label; required).
	Model string
	// Prometheus, when its URL is set, reads the gauges through a
	// Prometheus server.
	Prometheus Prometheus
	// Pylons are direct /metrics scrapes ("now" only).
	Pylons []PylonTarget
	// At is the instant for Prometheus (zero: now); a past instant cannot
	// be scraped directly.
	At time.Time
	// Prefix is the metric prefix (default DefaultPrefix).
	Prefix string
	// Router, when set, counts a backend active only for that Stargate
	// replica's router label (its advertise address).
	Router string
	// Aggregation is the §1.4 rule (default AggregationN1).
	Aggregation Aggregation
	// Lookback refuses samples older than this before the instant
	// (default DefaultLookback).
	Lookback time.Duration
	// Overlay, when set, supplies rtt_ms, max_engine_concurrency,
	// max_input_tps and status.
	Overlay *Overlay
	// Span, when set, supplies the chosen cluster's values exactly.
	Span *Span
	// Client and Timeout are used for every HTTP request (nil: default
	// client; 0: 10 s).
	Client  *http.Client
	Timeout time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Build reads the live sources and returns the snapshot with the
// provenance of every field. Errors are *Error (see Error.Usage for the
// exit code) or the context's error.
func Build(ctx context.Context, o Options) (*Snapshot, error) {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	if o.Model == "" {
		return nil, usageErr("lcctl snapshot", "", "model", "--model is required (Pylon labels every series with its model)")
	}
	if o.Prometheus.URL == "" && len(o.Pylons) == 0 {
		return nil, usageErr("lcctl snapshot", "", "", "no live source: give --prometheus URL (with --cluster-label) or --pylon CLUSTER=URL")
	}
	if !o.At.IsZero() && len(o.Pylons) > 0 {
		return nil, usageErr("lcctl snapshot", "", "", "--at needs --prometheus: a Pylon's /metrics page shows only the present (drop --pylon, or --at)")
	}
	if o.Aggregation == "" {
		o.Aggregation = AggregationN1
	}
	if o.Lookback <= 0 {
		o.Lookback = DefaultLookback
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	n := Names{Prefix: o.Prefix}
	snap := &Snapshot{Model: o.Model, Aggregation: o.Aggregation, Past: !o.At.IsZero()}
	at := o.At
	if at.IsZero() {
		at = now()
	}
	snap.At = at
	var backends []*Backend
	var sources []string
	if o.Prometheus.URL != "" {
		p := o.Prometheus
		if p.Client == nil {
			p.Client = o.Client
		}
		if p.Timeout == 0 {
			p.Timeout = o.Timeout
		}
		bs, err := queryPrometheus(ctx, p, n, o.Model, at)
		if err != nil {
			return nil, err
		}
		backends = append(backends, bs...)
		sources = append(sources, "prometheus "+metrics.RedactSource(o.Prometheus.URL))
	}
	if len(o.Pylons) > 0 {
		f := &metrics.Fetcher{Client: o.Client, Timeout: o.Timeout, Now: now}
		seen := map[string]string{}
		for _, t := range o.Pylons {
			if prev, ok := seen[t.URL]; ok {
				if prev == t.Cluster {
					return nil, usageErr(t.source(), t.Cluster, "", "given twice")
				}
				return nil, usageErr(t.source(), t.Cluster, "cluster_id", "this endpoint is also given for cluster %q: one Pylon serves one cluster", prev)
			}
			seen[t.URL] = t.Cluster
			b, err := scrapePylon(ctx, f, t, n, o.Model)
			if err != nil {
				return nil, err
			}
			backends = append(backends, b)
		}
		sources = append(sources, fmt.Sprintf("pylon scrape (%d endpoints)", len(o.Pylons)))
		if o.At.IsZero() {
			at = now()
			snap.At = at
		}
	}
	snap.Source = strings.Join(sources, " + ")
	byCluster := map[string][]*backendValues{}
	for _, b := range backends {
		// The source a backend was read from (--pylon or --prometheus),
		// so an error names the flag the operator gave.
		src := b.Source
		if b.Cluster == "" || strings.IndexFunc(b.Cluster, func(r rune) bool { return r < 0x20 || (r >= 0x7f && r < 0xa0) }) >= 0 {
			return nil, usageErr(src, fmt.Sprintf("%q", b.Cluster), "cluster_id", "a cluster id must be non-empty, without control characters")
		}
		if age := at.Sub(b.Time); age > o.Lookback {
			return nil, usageErr(src, b.Cluster, "", "backend %s was last sampled at %s, %s before the snapshot instant: older than the lookback %s (is the target down?)",
				b.ID, b.Time.UTC().Format(time.RFC3339Nano), age.Round(time.Millisecond), o.Lookback)
		}
		if strings.HasPrefix(src, "--prometheus") {
			if err := checkModelSeries(src, b.Cluster, b, n, o.Model); err != nil {
				return nil, err
			}
		}
		bv, err := readBackend(src, b, n, o.Model, o.Router)
		if err != nil {
			return nil, err
		}
		byCluster[b.Cluster] = append(byCluster[b.Cluster], bv)
	}
	ids := make([]string, 0, len(byCluster))
	for id := range byCluster {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	warn := func(s string) { snap.Warnings = append(snap.Warnings, s) }
	for _, id := range ids {
		c := newCluster(id)
		if strings.HasPrefix(byCluster[id][0].b.Source, "--pylon") {
			c.Get("cluster_id").Origin, c.Get("cluster_id").Source = OriginOverlay, "--pylon"
		} else {
			c.Get("cluster_id").Source = "label " + o.Prometheus.ClusterLabel
		}
		aggregate(&c, byCluster[id], o.Aggregation, at, warn)
		snap.Clusters = append(snap.Clusters, c)
	}
	if o.Overlay != nil {
		snap.Overlay = o.Overlay.File
		for _, id := range o.Overlay.IDs() {
			c := snap.Cluster(id)
			if c == nil {
				warn(fmt.Sprintf("%s: cluster %s is in the overlay but no live source has it; it is left out (a cluster without metrics would be guessed)", o.Overlay.File, id))
				continue
			}
			o.Overlay.Clusters[id].apply(c, o.Overlay.File)
		}
	}
	if o.Span != nil {
		if err := o.Span.apply(snap); err != nil {
			return nil, err
		}
	}
	finish(snap)
	return snap, nil
}

// unknownMeaning says, per field, what the engine assumes when the field
// is unknown (and therefore left out), for the warning; fields missing
// here default to their documented meaning (OriginDefault).
var unknownMeaning = map[string]string{
	"rtt_ms":                 "the engine assumes 0 ms of RTT (no metric carries it: give it in --overlay, or --span for the chosen cluster)",
	"last_mean_input_tps":    "the engine reads 0 tokens/s, so the cluster's TTFT estimate is infinite",
	"max_input_tps":          "left out, not 0: the engine reads 0 = not reported, so a pulsar ranking with rendezvous_weight max-input-tps (the default) leaves the cluster out; give it in --overlay, or explain with rendezvous_weight: last-mean-input-tps to reproduce the older release",
	"queue_size":             "the engine reads 0 queued requests",
	"queued_input_size":      "the engine reads 0 queued tokens, so no queue wait",
	"num_running_queries":    "the engine reads 0 running requests",
	"max_engine_concurrency": "the engine reads 0 = unknown: it never sees the cluster as full and never finds a free slot (give it in --overlay)",
}

// defaultMeaning is the note of a field whose format default is its
// documented meaning when no source has it.
var defaultMeaning = map[string]string{
	"active_backend_count":               "informational",
	"output_tps":                         "informational, not read by the engine",
	"max_output_tps":                     "informational, not read by the engine",
	"kv_cache_capacity_tokens":           "0 = no KV metrics (engine kv: none)",
	"kv_cache_used_tokens":               "0 = no KV metrics",
	"kv_cache_free_tokens":               "0 = no KV metrics",
	"total_query_input_size":             "informational",
	"queue_time_estimate_ms_by_priority": "per-priority estimate unavailable: the engine uses ceil(1000 x queued_input_size / last_mean_input_tps)",
	"input_processing_queries":           "informational",
	"output_generation_queries":          "informational",
}

// finish turns the fields no source has into default or unknown values,
// writes one warning per unknown field that the engine reads (naming the
// clusters), the fast-field age warning and the standing notes.
func finish(s *Snapshot) {
	unknown := map[string][]string{}
	var stale []string
	var oldest, newest time.Time
	for i := range s.Clusters {
		c := &s.Clusters[i]
		for j := range c.Fields {
			f := &c.Fields[j]
			if f.Origin != OriginUnknown {
				continue
			}
			if m, ok := defaultMeaning[f.Name]; ok {
				f.Origin, f.Note = OriginDefault, m
				continue
			}
			if _, ok := unknownMeaning[f.Name]; ok {
				unknown[f.Name] = append(unknown[f.Name], c.ID)
			}
		}
		fastOld := false
		for _, f := range c.Fields {
			if fastFields[f.Name] && f.Origin == OriginMetric && f.HasAge && f.Age > FastFieldHorizon {
				fastOld = true
			}
		}
		if fastOld {
			stale = append(stale, fmt.Sprintf("%s (%s)", c.ID, c.Age.Round(time.Millisecond)))
		}
		for _, b := range c.Backends {
			if oldest.IsZero() || b.SampleTime.Before(oldest) {
				oldest = b.SampleTime
			}
			if b.SampleTime.After(newest) {
				newest = b.SampleTime
			}
		}
	}
	for _, fs := range snapshotFields {
		if ids := unknown[fs.name]; len(ids) > 0 {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s unknown for %s: %s", fs.name, strings.Join(ids, ", "), unknownMeaning[fs.name]))
		}
	}
	if len(stale) > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("fast fields (queue_size, queued_input_size, num_running_queries, kv_cache_used/free_tokens, …) are older than Stargate's own ~1 s view: %s", strings.Join(stale, ", ")))
	}
	if !oldest.IsZero() && newest.Sub(oldest) > 0 {
		s.Notes = append(s.Notes, fmt.Sprintf("sample times spread over %s across backends (not one simultaneous cut)", newest.Sub(oldest).Round(time.Millisecond)))
	}
	s.Notes = append(s.Notes,
		"no live source has Stargate's pending reservations: recently dispatched clusters look under-loaded in queue_size, queued_input_size, num_running_queries and total_query_input_size",
		"no metric has a replica's per-cluster RTT; rtt_ms comes from the overlay or a span only",
		"clusters are sorted by cluster_id: Stargate's candidate order is a per-process hash order, so round-robin, ring and tie outcomes may differ")
}

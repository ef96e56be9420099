package live

import (
	"time"
)

// Kind is the type of a snapshot field's value.
type Kind uint8

// Field kinds.
const (
	// KindFloat is a float64 (tokens/s, ms).
	KindFloat Kind = iota
	// KindUint is a non-negative integer (requests, tokens).
	KindUint
	// KindString is a string (status).
	KindString
)

// Field is one snapshot value with its provenance.
type Field struct {
	// Name is the formats.md field name; stats fields without the
	// "stats." prefix (Stats reports which).
	Name string
	// Stats is true for the fields under stats:.
	Stats bool
	// Kind says which of Float, Uint, Str holds the value.
	Kind  Kind
	Float float64
	Uint  uint64
	Str   string
	// Origin says where the value came from; OriginUnknown fields are
	// left out of the snapshot (the value fields are zero).
	Origin Origin
	// Source names the series, file or span attribute that gave the
	// value ("" for unknown and default values).
	Source string
	// Age is how old the value was at the snapshot's instant; HasAge is
	// false for values without a time (overlay, default, unknown).
	Age    time.Duration
	HasAge bool
	// Note qualifies the value (approximate, ambiguous, assumed).
	Note string
}

// Known reports whether the field is written into the snapshot.
func (f *Field) Known() bool { return f.Origin != OriginUnknown }

// BackendInfo is one backend (one Pylon) a cluster's values came from.
type BackendInfo struct {
	// ID is the Pylon URL (--pylon) or the backend label's value
	// (Prometheus).
	ID string `json:"id"`
	// SampleTime is when its samples were taken (fetch time for a direct
	// scrape; Prometheus's sample timestamp otherwise).
	SampleTime time.Time `json:"sample_time"`
	// Age is the snapshot's instant minus SampleTime.
	Age time.Duration `json:"-"`
	// Source is true for the backend the "latest" rules copied from.
	Source bool `json:"source_backend,omitempty"`
}

// Cluster is one cluster of a live snapshot.
type Cluster struct {
	// ID is the cluster id.
	ID string
	// Backends are the backends it was aggregated from, sorted by ID; none
	// for a cluster only the overlay or a span named.
	Backends []BackendInfo
	// Age is the oldest backend's age (0 without backends).
	Age time.Duration
	// Fields are the snapshot fields in formats.md order, cluster_id
	// first.
	Fields []Field
}

// Get returns the field called name, or nil.
func (c *Cluster) Get(name string) *Field {
	for i := range c.Fields {
		if c.Fields[i].Name == name {
			return &c.Fields[i]
		}
	}
	return nil
}

// Snapshot is a routing snapshot built from live sources, with the
// provenance of every value.
type Snapshot struct {
	// Model is the model (the top-level model field).
	Model string
	// Source says where the metrics came from: "prometheus <URL>" or
	// "pylon scrape".
	Source string
	// At is the snapshot's instant: --at, or the time of the query or
	// scrape.
	At time.Time
	// Past is true when At was given with --at (a past instant).
	Past bool
	// Aggregation is the per-cluster rule applied.
	Aggregation Aggregation
	// Overlay and Span name the files applied ("" when none).
	Overlay, Span string
	// SpanRequestID is the request whose span was applied.
	SpanRequestID string
	// Clusters are sorted by cluster id (Stargate's own candidate order
	// cannot be observed, live-snapshot.md §1.5).
	Clusters []Cluster
	// Warnings are problems with the values that matter to the decision
	// (unknown fields, stale fast fields, ambiguous "latest" backends).
	Warnings []string
	// Notes are facts about what no live source has (reservations,
	// candidate order).
	Notes []string
}

// Cluster returns the cluster with id, or nil.
func (s *Snapshot) Cluster(id string) *Cluster {
	for i := range s.Clusters {
		if s.Clusters[i].ID == id {
			return &s.Clusters[i]
		}
	}
	return nil
}

// fieldSpec is one snapshot field: its name, kind and whether it lives
// under stats:.
type fieldSpec struct {
	name  string
	kind  Kind
	stats bool
}

// snapshotFields lists the fields in formats.md order.
var snapshotFields = []fieldSpec{
	{"cluster_id", KindString, false},
	{"rtt_ms", KindFloat, false},
	{"status", KindString, false},
	{"active_backend_count", KindUint, false},
	{"last_mean_input_tps", KindFloat, true},
	{"max_input_tps", KindFloat, true},
	{"output_tps", KindFloat, true},
	{"max_output_tps", KindFloat, true},
	{"queue_size", KindUint, true},
	{"queued_input_size", KindUint, true},
	{"kv_cache_capacity_tokens", KindUint, true},
	{"kv_cache_used_tokens", KindUint, true},
	{"kv_cache_free_tokens", KindUint, true},
	{"num_running_queries", KindUint, true},
	{"max_engine_concurrency", KindUint, true},
	{"total_query_input_size", KindUint, true},
	{"queue_time_estimate_ms_by_priority", KindString, true},
	{"input_processing_queries", KindUint, true},
	{"output_generation_queries", KindUint, true},
}

// fastFields change with every request (live-snapshot.md §4).
var fastFields = map[string]bool{
	"queue_size": true, "queued_input_size": true, "num_running_queries": true,
	"total_query_input_size": true, "input_processing_queries": true,
	"output_generation_queries": true, "kv_cache_used_tokens": true, "kv_cache_free_tokens": true,
}

func newCluster(id string) Cluster {
	c := Cluster{ID: id}
	for _, fs := range snapshotFields {
		c.Fields = append(c.Fields, Field{Name: fs.name, Kind: fs.kind, Stats: fs.stats, Origin: OriginUnknown})
	}
	f := c.Get("cluster_id")
	f.Str, f.Origin = id, OriginMetric
	return c
}

package explain

import (
	"github.com/lcctl/lcctl/internal/lb"
)

// Float is a number that may be NaN or ±Inf (snapshot rates may be); it
// encodes non-finite values as the JSON strings "nan", "inf" and "-inf",
// like lb.Millis.
type Float float64

// MarshalJSON encodes f, non-finite values as strings.
func (f Float) MarshalJSON() ([]byte, error) { return lb.Millis(f).MarshalJSON() }

// UnmarshalJSON decodes a number or one of the strings MarshalJSON writes.
func (f *Float) UnmarshalJSON(b []byte) error { return (*lb.Millis)(f).UnmarshalJSON(b) }

// Snapshot is the snapshot the engine decided against (its active clusters
// are the candidate slice), in the field names of formats.md (rtt in ms,
// the per-priority queue estimates as a map).
type Snapshot struct {
	// Model is the snapshot's model (informational; the request's wins).
	Model string `json:"model,omitempty"`
	// Clusters are the snapshot's clusters in slice order.
	Clusters []Cluster `json:"clusters"`
}

// Cluster is one cluster of the snapshot.
type Cluster struct {
	ClusterID          string    `json:"cluster_id"`           // unique id
	RTTMs              lb.Millis `json:"rtt_ms"`               // forwarded health RTT, ms
	Status             lb.Status `json:"status"`               // only active clusters are candidates
	ActiveBackendCount uint64    `json:"active_backend_count"` // informational
	Stats              Stats     `json:"stats"`                // ModelStats
}

// Stats are a cluster's ModelStats (formats.md "stats"; tokens, tokens/s,
// requests, ms).
type Stats struct {
	LastMeanInputTPS              Float             `json:"last_mean_input_tps"`                          // tokens/s; capacity signal
	MaxInputTPS                   Float             `json:"max_input_tps"`                                // tokens/s; Pulsar weight
	OutputTPS                     Float             `json:"output_tps"`                                   // tokens/s; not read
	MaxOutputTPS                  Float             `json:"max_output_tps"`                               // tokens/s; not read
	QueueSize                     uint64            `json:"queue_size"`                                   // queued requests
	QueuedInputSize               uint64            `json:"queued_input_size"`                            // queued input tokens
	KVCacheCapacityTokens         uint64            `json:"kv_cache_capacity_tokens"`                     // tokens
	KVCacheUsedTokens             uint64            `json:"kv_cache_used_tokens"`                         // tokens
	KVCacheFreeTokens             uint64            `json:"kv_cache_free_tokens"`                         // tokens
	NumRunningQueries             uint64            `json:"num_running_queries"`                          // running requests
	MaxEngineConcurrency          uint64            `json:"max_engine_concurrency"`                       // 0 = unknown
	TotalQueryInputSize           uint64            `json:"total_query_input_size"`                       // not read
	QueueTimeEstimateMsByPriority map[uint32]uint64 `json:"queue_time_estimate_ms_by_priority,omitempty"` // priority → ms
	InputProcessingQueries        uint64            `json:"input_processing_queries"`                     // not read
	OutputGenerationQueries       uint64            `json:"output_generation_queries"`                    // not read
}

// NewSnapshot converts the engine's snapshot to its report form (nil for
// nil).
func NewSnapshot(s *lb.Snapshot) *Snapshot {
	if s == nil {
		return nil
	}
	out := &Snapshot{Model: s.Model, Clusters: make([]Cluster, len(s.Clusters))}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		st := &c.Stats
		v := Stats{
			LastMeanInputTPS: Float(st.LastMeanInputTPS), MaxInputTPS: Float(st.MaxInputTPS),
			OutputTPS: Float(st.OutputTPS), MaxOutputTPS: Float(st.MaxOutputTPS),
			QueueSize: st.QueueSize, QueuedInputSize: st.QueuedInputSize,
			KVCacheCapacityTokens: st.KVCacheCapacityTokens, KVCacheUsedTokens: st.KVCacheUsedTokens, KVCacheFreeTokens: st.KVCacheFreeTokens,
			NumRunningQueries: st.NumRunningQueries, MaxEngineConcurrency: st.MaxEngineConcurrency,
			TotalQueryInputSize: st.TotalQueryInputSize, InputProcessingQueries: st.InputProcessingQueries,
			OutputGenerationQueries: st.OutputGenerationQueries,
		}
		if len(st.QueueTimeEstimateMsByPriority) > 0 {
			v.QueueTimeEstimateMsByPriority = map[uint32]uint64{}
			for _, e := range st.QueueTimeEstimateMsByPriority {
				v.QueueTimeEstimateMsByPriority[e.Priority] = e.QueueTimeMs
			}
		}
		out.Clusters[i] = Cluster{ClusterID: c.ClusterID, RTTMs: ms(c.RTT), Status: c.Status,
			ActiveBackendCount: c.ActiveBackendCount, Stats: v}
	}
	return out
}

// Index returns the position of the cluster with id, or -1.
func (s *Snapshot) Index(id string) int {
	if s == nil {
		return -1
	}
	for i := range s.Clusters {
		if s.Clusters[i].ClusterID == id {
			return i
		}
	}
	return -1
}

// hasNonCandidates reports whether a cluster's status keeps it out of the
// candidate slice (lb.Status.Routable).
func (s *Snapshot) hasNonCandidates() bool {
	if s == nil {
		return false
	}
	for i := range s.Clusters {
		if !s.Clusters[i].Status.Routable() {
			return true
		}
	}
	return false
}

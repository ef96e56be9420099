package validate

import (
	"github.com/lcctl/lcctl/internal/lb"
)

// fieldKind is the serde type of a detailed-entry field (lb-config.md §7.1).
type fieldKind uint8

const (
	kindBool        fieldKind = iota + 1 // Option<bool>
	kindString                           // Option<String>
	kindU64                              // Option<u64>
	kindUsize                            // Option<usize>
	kindUsizeStrict                      // usize with a default: null rejected (sample_count)
	kindF64                              // Option<f64>
	kindComparator                       // ClusterComparator, null rejected
	kindWeight                           // PulsarRendezvousWeight, null rejected
	kindMap                              // request_algorithms
)

// algSet is a bit set of algorithms.
type algSet uint8

func setOf(as ...lb.Algorithm) algSet {
	var s algSet
	for _, a := range as {
		s |= 1 << a
	}
	return s
}

func (s algSet) has(a lb.Algorithm) bool { return s&(1<<a) != 0 }

var (
	allAlgorithms = setOf(lb.Algorithms[:]...)
	waitFamily    = setOf(lb.WaitAndWiden, lb.PulsarWaitAndWiden)
	pulsarFamily  = setOf(lb.Pulsar, lb.PulsarWaitAndWiden)
)

// fieldSpec is one row of the applicability matrix (lb-config.md §6.7):
// parsed lists the algorithms whose parser accepts the key (✓ and R);
// routerRejects lists those whose router construction then refuses a
// non-null value (R: V20, V21).
type fieldSpec struct {
	kind          fieldKind
	parsed        algSet
	routerRejects algSet
}

// fieldSpecs is the matrix of lb-config.md §6.7, from config.rs
// (NVIDIA/nvcf 2aaadee…): RawCommonAlgorithmConfig, PowerOfNAlgorithmConfig,
// WaitAndWidenAlgorithmConfig and the Pulsar variants' own fields.
var fieldSpecs = map[string]fieldSpec{
	"require_cache_affinity_key": {kindBool, allAlgorithms, 0},
	"require_input_tokens":       {kindBool, allAlgorithms, 0},
	"max_input_work_seconds":     {kindF64, allAlgorithms, 0},
	"request_algorithms":         {kindMap, allAlgorithms, 0},

	"sample_count": {kindUsizeStrict, setOf(lb.PowerOfN), 0},
	"comparator":   {kindComparator, setOf(lb.PowerOfN, lb.WaitAndWiden, lb.PulsarWaitAndWiden), setOf(lb.PulsarWaitAndWiden)},
	"seed":         {kindString, setOf(lb.WaitAndWiden, lb.Pulsar, lb.PulsarWaitAndWiden), 0},

	"consider_kv_free_tokens": {kindBool, pulsarFamily, 0},
	"rendezvous_weight":       {kindWeight, pulsarFamily, 0},

	"n":                            {kindUsize, waitFamily, 0},
	"max_queued":                   {kindU64, waitFamily, 0},
	"max_queue_time_floor_ms":      {kindU64, waitFamily, 0},
	"max_queue_time_ceil_ms":       {kindU64, waitFamily, 0},
	"ttft_bucket_size_ms":          {kindU64, waitFamily, 0},
	"next_bucket_unlock_factor":    {kindF64, waitFamily, 0},
	"ignore_queue_time":            {kindBool, waitFamily, 0},
	"ignore_input_processing_time": {kindBool, waitFamily, 0},

	"cache_affinity_virtual_nodes":           {kindUsize, waitFamily, 0},
	"cache_affinity_backend_selection_count": {kindUsize, waitFamily, 0},
	"cache_affinity_input_tokens_scale":      {kindF64, waitFamily, 0},
	"cache_affinity_wait_ms":                 {kindU64, waitFamily, 0},
	"last_cluster_affinity":                  {kindBool, waitFamily, 0},

	"band_widen_interval_ms": {kindU64, waitFamily, setOf(lb.WaitAndWiden)},
	"fallback_max_queued":    {kindU64, waitFamily, setOf(lb.WaitAndWiden)},
}

// AcceptedFields returns the detailed-entry keys the parser of a accepts
// (lb-config.md §6.7, ✓ and R), `algorithm` excluded, in byte order.
func AcceptedFields(a lb.Algorithm) []string {
	var out []string
	for name, spec := range fieldSpecs {
		if spec.parsed.has(a) && !spec.routerRejects.has(a) {
			out = append(out, name)
		}
	}
	sortStrings(out)
	return out
}

// FieldAccepted reports whether a detailed entry of algorithm a may hold
// field (✓ in lb-config.md §6.7; R and P are false).
func FieldAccepted(a lb.Algorithm, field string) bool {
	spec, ok := fieldSpecs[field]
	return ok && spec.parsed.has(a) && !spec.routerRejects.has(a)
}

func algorithmsAccepting(field string) []string {
	spec, ok := fieldSpecs[field]
	if !ok {
		return nil
	}
	var out []string
	for _, a := range lb.Algorithms {
		if spec.parsed.has(a) && !spec.routerRejects.has(a) {
			out = append(out, a.String())
		}
	}
	return out
}

package formats

import (
	"fmt"
	"math"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
)

// SnapshotSchema is the "schema" of the JSON `lcctl snapshot -o json`
// writes; a snapshot may carry it (and a "provenance" block, ignored) at
// the top level.
const SnapshotSchema = "lcctl.snapshot/v1"

// DecodeSnapshot decodes a snapshot file (formats.md "Snapshot"). Errors
// are Errors with positions.
func DecodeSnapshot(file string, data []byte) (*lb.Snapshot, error) {
	root, err := parseRoot(file, data)
	if err != nil {
		return nil, err
	}
	return SnapshotFromNode(root, file, "")
}

// SnapshotFromNode decodes a snapshot mapping node; path prefixes error
// paths (e.g. "snapshot").
func SnapshotFromNode(n *yaml.Node, file, path string) (*lb.Snapshot, error) {
	return fromNode(n, file, path, (*decoder).snapshot)
}

// snapshotKeys are the keys snapshot accepts (unknown-key suggestions; TestFieldKeysMatchDecoders
// checks them against its switch).
var snapshotKeys = []string{"model", "schema", "provenance", "clusters"}

func (d *decoder) snapshot(n *yaml.Node, path string) *lb.Snapshot {
	s := &lb.Snapshot{}
	if path == "" && n.Kind == yaml.MappingNode {
		// An lb-config given as the snapshot: one error that says so
		// rather than an unknown-field error per top-level key.
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; lb.IsTopLevelField(k.Value) {
				d.errf(k, k.Value, "this is a Stargate lb-config (top-level %q), not a snapshot: give it with --config, and the cluster state with --snapshot", k.Value)
				return s
			}
		}
	}
	var clustersNode *yaml.Node
	d.fields(n, path, snapshotKeys, func(key string, k, v *yaml.Node) bool {
		p := join(path, key)
		switch key {
		case "model":
			s.Model, _ = d.optStr(v, p)
			d.noControl(v, p, s.Model)
		case "schema", "provenance":
			// The JSON of `lcctl snapshot -o json` (docs/snapshot.md):
			// its schema must be lcctl.snapshot/v1; its provenance block
			// is documentation for the reader and ignored here.
			if path != "" {
				return false
			}
			if key == "schema" {
				if sv, ok := d.str(v, p); ok && sv != SnapshotSchema {
					d.errf(resolve(v), p, "want %q (the JSON of lcctl snapshot), got %q", SnapshotSchema, sv)
				}
			}
		case "clusters":
			clustersNode = v
			v = resolve(v)
			if isNull(v) {
				return true
			}
			if v.Kind != yaml.SequenceNode {
				d.errf(v, p, "must be a list of clusters, got %s", kindName(v))
				return true
			}
			ids := map[string]int{}
			for i, c := range v.Content {
				cp := fmt.Sprintf("%s[%d]", p, i)
				cl := d.cluster(c, cp)
				if cl.ClusterID != "" {
					if j, dup := ids[cl.ClusterID]; dup {
						d.errf(resolve(c), cp+".cluster_id", "duplicate cluster_id %q (also clusters[%d])", cl.ClusterID, j)
					}
					ids[cl.ClusterID] = i
				}
				s.Clusters = append(s.Clusters, cl)
			}
		default:
			return false
		}
		return true
	})
	if clustersNode == nil && len(d.errs) == 0 {
		d.errf(resolve(n), join(path, "clusters"), "missing required field \"clusters\"")
	}
	return s
}

// clusterKeys are the keys cluster accepts (unknown-key suggestions; TestFieldKeysMatchDecoders
// checks them against its switch).
var clusterKeys = []string{"cluster_id", "rtt_ms", "status", "active_backend_count", "stats"}

func (d *decoder) cluster(n *yaml.Node, path string) lb.Cluster {
	var c lb.Cluster
	hasID := false
	d.fields(n, path, clusterKeys, func(key string, k, v *yaml.Node) bool {
		p := join(path, key)
		switch key {
		case "cluster_id":
			id, ok := d.str(v, p)
			if ok && id == "" {
				d.errf(resolve(v), p, "must not be empty")
			}
			d.noControl(v, p, id)
			c.ClusterID, hasID = id, ok
		case "rtt_ms":
			if isNull(v) {
				return true
			}
			if f, ok := d.durationMs(v, p); ok {
				c.RTT, _ = lb.DurationFromMs(f)
			}
		case "status":
			if isNull(v) {
				return true
			}
			if s, ok := d.str(v, p); ok {
				st, ok := lb.ParseStatus(s)
				if !ok {
					d.errf(resolve(v), p, "must be active, inactive or unknown, got %q", s)
				}
				c.Status = st
			}
		case "active_backend_count":
			if !isNull(v) {
				c.ActiveBackendCount, _ = d.uint(v, p, math.MaxUint64)
			}
		case "stats":
			if !isNull(v) {
				c.Stats = d.stats(v, p)
			}
		default:
			return false
		}
		return true
	})
	if !hasID && resolve(n) != nil && resolve(n).Kind == yaml.MappingNode {
		d.errf(resolve(n), join(path, "cluster_id"), "missing required field \"cluster_id\"")
	}
	return c
}

// statsKeys are the keys stats accepts (unknown-key suggestions; TestFieldKeysMatchDecoders
// checks them against its switch).
var statsKeys = []string{"last_mean_input_tps", "max_input_tps", "output_tps", "max_output_tps", "queue_size", "queued_input_size", "kv_cache_capacity_tokens", "kv_cache_used_tokens", "kv_cache_free_tokens", "num_running_queries", "max_engine_concurrency", "total_query_input_size", "input_processing_queries", "output_generation_queries", "queue_time_estimate_ms_by_priority"}

// stats decodes ModelStats. Float rates may be NaN, ±Inf or negative:
// the engine treats such a rate as "no valid capacity signal"
// (wait-and-widen.md §2.1). Counters must be non-negative integers.
func (d *decoder) stats(n *yaml.Node, path string) lb.Stats {
	var st lb.Stats
	d.fields(n, path, statsKeys, func(key string, k, v *yaml.Node) bool {
		p := join(path, key)
		f := func(dst *float64) {
			if !isNull(v) {
				*dst, _ = d.float(v, p)
			}
		}
		u := func(dst *uint64) {
			if !isNull(v) {
				*dst, _ = d.uint(v, p, math.MaxUint64)
			}
		}
		switch key {
		case "last_mean_input_tps":
			f(&st.LastMeanInputTPS)
		case "max_input_tps":
			f(&st.MaxInputTPS)
		case "output_tps":
			f(&st.OutputTPS)
		case "max_output_tps":
			f(&st.MaxOutputTPS)
		case "queue_size":
			u(&st.QueueSize)
		case "queued_input_size":
			u(&st.QueuedInputSize)
		case "kv_cache_capacity_tokens":
			u(&st.KVCacheCapacityTokens)
		case "kv_cache_used_tokens":
			u(&st.KVCacheUsedTokens)
		case "kv_cache_free_tokens":
			u(&st.KVCacheFreeTokens)
		case "num_running_queries":
			u(&st.NumRunningQueries)
		case "max_engine_concurrency":
			u(&st.MaxEngineConcurrency)
		case "total_query_input_size":
			u(&st.TotalQueryInputSize)
		case "input_processing_queries":
			u(&st.InputProcessingQueries)
		case "output_generation_queries":
			u(&st.OutputGenerationQueries)
		case "queue_time_estimate_ms_by_priority":
			if isNull(v) {
				return true
			}
			seen := map[uint64]bool{}
			d.mapping(v, p, func(kn, vn *yaml.Node) {
				kp := fmt.Sprintf("%s[%s]", p, kn.Value)
				pr, ok := d.mapKeyUint(kn, kp, math.MaxUint32)
				if ok && seen[pr] {
					d.errf(kn, kp, "duplicate priority %d", pr)
				}
				seen[pr] = true
				ms, ok2 := d.uint(vn, kp, math.MaxUint64)
				if ok && ok2 {
					st.QueueTimeEstimateMsByPriority = append(st.QueueTimeEstimateMsByPriority, lb.PriorityEstimate{Priority: uint32(pr), QueueTimeMs: ms})
				}
			})
			st.SortPriorityEstimates()
		default:
			return false
		}
		return true
	})
	return st
}

// mapKeyUint decodes an unsigned integer map key. JSON can only write map
// keys as strings ({"4": 25}, as protobuf's JSON mapping of ModelStats
// does), so a string of decimal digits is accepted besides a YAML integer.
func (d *decoder) mapKeyUint(n *yaml.Node, path string, max uint64) (uint64, bool) {
	n = resolve(n)
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value != "" && len(n.Value) <= 20 && allDigits(n.Value) {
		v, err := strconv.ParseUint(n.Value, 10, 64)
		if err != nil || v > max {
			d.errf(n, path, "integer %s out of range (0..%d)", n.Value, max)
			return 0, false
		}
		return v, true
	}
	return d.uint(n, path, max)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// mapping iterates over a mapping's pairs without key checks.
func (d *decoder) mapping(n *yaml.Node, path string, fn func(k, v *yaml.Node)) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.errf(n, path, "must be a mapping, got %s", kindName(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(resolve(n.Content[i]), n.Content[i+1])
	}
}

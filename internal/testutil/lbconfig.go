package testutil

import (
	"fmt"
	"strings"
)

// GenerateLBConfig returns a valid Stargate lb-config (JSON, indented like
// a hand-written file) with the given number of models. The entries cycle
// through every algorithm in string and detailed form, with the fields an
// operator typically sets (queue SLO, affinity group, seeds, model-level
// request_algorithms), so validation exercises every code path that
// accepts. Used by benchmarks and size tests; deterministic.
func GenerateLBConfig(models int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"default\": \"power-of-n\",\n  \"request_algorithms\": {\n")
	b.WriteString("    \"round-robin\": \"round-robin\",\n")
	b.WriteString("    \"pulsar\": {\"algorithm\": \"pulsar\", \"seed\": \"fleet\", \"rendezvous_weight\": \"last-mean-input-tps\"}\n")
	b.WriteString("  },\n  \"models\": {")
	for i := 0; i < models; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    \"org-%03d/model-%05d\": ", i%97, i)
		switch i % 8 {
		case 0:
			b.WriteString(`"pulsar"`)
		case 1:
			fmt.Fprintf(&b, `{"algorithm": "power-of-n", "sample_count": %d, "comparator": "queue-time"}`, 2+i%30)
		case 2:
			fmt.Fprintf(&b, `{"algorithm": "wait-and-widen", "seed": "s-%d", "n": 3, "max_queued": 4, "max_queue_time_floor_ms": 200, "max_queue_time_ceil_ms": 2000, "cache_affinity_backend_selection_count": 2, "cache_affinity_wait_ms": 300, "cache_affinity_input_tokens_scale": 0.25, "last_cluster_affinity": true, "require_cache_affinity_key": true}`, i)
		case 3:
			fmt.Fprintf(&b, `{"algorithm": "pulsar-wait-and-widen", "seed": "s-%d", "max_queue_time_floor_ms": 100, "max_queue_time_ceil_ms": 1000, "cache_affinity_wait_ms": 250, "band_widen_interval_ms": 50, "fallback_max_queued": 1, "consider_kv_free_tokens": true, "rendezvous_weight": "max-input-tps"}`, i)
		case 4:
			b.WriteString(`{"algorithm": "random", "max_input_work_seconds": 12.5}`)
		case 5:
			b.WriteString(`"round-robin"`)
		case 6:
			fmt.Fprintf(&b, `{"algorithm": "pulsar", "seed": "p-%d", "consider_kv_free_tokens": true, "rendezvous_weight": "last-mean-input-tps", "request_algorithms": {"power-of-n": {"algorithm": "power-of-n", "sample_count": 4}}}`, i)
		default:
			b.WriteString(`{"algorithm": "wait-and-widen", "comparator": "ttft", "ttft_bucket_size_ms": 25, "next_bucket_unlock_factor": 0.5, "ignore_queue_time": false}`)
		}
	}
	b.WriteString("\n  }\n}\n")
	return []byte(b.String())
}

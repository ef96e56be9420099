package formats

import (
	"math"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
)

// DecodeRequest decodes a request file (formats.md "Request").
func DecodeRequest(file string, data []byte) (*lb.Request, error) {
	root, err := parseRoot(file, data)
	if err != nil {
		return nil, err
	}
	return RequestFromNode(root, file, "")
}

// RequestFromNode decodes a request mapping node. String fields keep their
// raw values (the engine applies the proxy's trimming and blank-is-absent
// rule); input_tokens absent or null leaves HasInputTokens false, which
// the proxy answers with 400 (lb-config.md H4).
func RequestFromNode(n *yaml.Node, file, path string) (*lb.Request, error) {
	return fromNode(n, file, path, (*decoder).request)
}

// requestKeys are the keys request accepts (unknown-key suggestions; TestFieldKeysMatchDecoders
// checks them against its switch).
var requestKeys = []string{"model", "routing_key", "routing_method", "cache_affinity_key", "input_tokens", "priority", "request_slo_ms", "max_wait_ms", "last_cluster_id", "excluded_cluster_ids", "elapsed_ms", "first_classification"}

func (d *decoder) request(n *yaml.Node, path string) *lb.Request {
	r := &lb.Request{}
	hasModel := false
	d.fields(n, path, requestKeys, func(key string, k, v *yaml.Node) bool {
		p := join(path, key)
		switch key {
		case "model":
			r.Model, hasModel = d.str(v, p)
		case "routing_key":
			r.RoutingKey, _ = d.optStr(v, p)
		case "routing_method":
			r.RoutingMethod.Value, r.RoutingMethod.Set = d.optStr(v, p)
		case "cache_affinity_key":
			r.CacheAffinityKey, _ = d.optStr(v, p)
		case "input_tokens":
			if !isNull(v) {
				r.InputTokens, r.HasInputTokens = d.uint(v, p, math.MaxUint64)
			}
		case "priority":
			if !isNull(v) {
				p32, _ := d.uint(v, p, math.MaxUint32)
				r.Priority = uint32(p32)
			}
		case "request_slo_ms":
			if !isNull(v) {
				r.RequestSLOMs.Value, r.RequestSLOMs.Set = d.uint(v, p, math.MaxUint64)
			}
		case "max_wait_ms":
			if !isNull(v) {
				r.MaxWaitMs.Value, r.MaxWaitMs.Set = d.uint(v, p, math.MaxUint64)
			}
		case "last_cluster_id":
			r.LastClusterID, _ = d.optStr(v, p)
		case "excluded_cluster_ids":
			if !isNull(v) {
				r.ExcludedClusterIDs, _ = d.strList(v, p)
			}
		case "elapsed_ms":
			if !isNull(v) {
				if f, ok := d.durationMs(v, p); ok {
					r.Elapsed, _ = lb.DurationFromMs(f)
				}
			}
		case "first_classification":
			if isNull(v) {
				return true
			}
			if s, ok := d.str(v, p); ok {
				st, ok := lb.ParseSessionState(s)
				if !ok {
					d.errf(resolve(v), p, "must be new, returning, stale or null, got %q", s)
				}
				r.FirstClassification = st
			}
		default:
			return false
		}
		return true
	})
	if !hasModel && len(d.errs) == 0 {
		d.errf(resolve(n), join(path, "model"), "missing required field \"model\"")
	}
	return r
}

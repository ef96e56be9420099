package lb

import (
	"math"
	"strconv"
	"strings"
)

// HeaderString applies the proxy's normalisation of an optional string
// header (lb-config.md H3, H8, H10; wait-and-widen.md §1.3): a value that
// is not visible ASCII (bytes 0x21–0x7E plus space and tab) is absent;
// otherwise leading and trailing spaces and tabs are trimmed and an empty
// result is absent. ok reports presence.
func HeaderString(raw string) (v string, ok bool) {
	lo, hi := 0, 0
	for i := 0; i < len(raw); i++ {
		switch b := raw[i]; {
		case b == ' ' || b == '\t':
		case b < 0x20 || b > 0x7e:
			return "", false
		default:
			if hi == 0 {
				lo = i
			}
			hi = i + 1
		}
	}
	if hi == 0 {
		return "", false
	}
	return raw[lo:hi], true
}

// HeaderSource looks up a request header by lower-case name; ok reports
// presence (an empty value is present).
type HeaderSource func(name string) (value string, ok bool)

// ParseU64Header parses a required or optional unsigned header value the
// way Rust's u64::from_str does after trimming (lb-config.md H4, H6, H7):
// an optional '+', then decimal digits (leading zeros allowed); no '-', no
// inner spaces; blank, malformed or > 2^64−1 is an error.
func ParseU64Header(name, raw string) (uint64, error) {
	s, ok := HeaderString(raw)
	if !ok {
		return 0, routingErr("invalid_header", name, "%s is blank or not visible ASCII", name)
	}
	digits := strings.TrimPrefix(s, "+")
	if digits == "" || !allDigits(digits) {
		return 0, routingErr("invalid_header", name, "%s: invalid unsigned integer %q", name, s)
	}
	v, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, routingErr("invalid_header", name, "%s: %q is larger than 18446744073709551615", name, s)
	}
	return v, nil
}

// ParseU32Header is ParseU64Header for u32 headers (x-priority, H5).
func ParseU32Header(name, raw string) (uint32, error) {
	v, err := ParseU64Header(name, raw)
	if err != nil {
		return 0, err
	}
	if v > math.MaxUint32 {
		return 0, routingErr("invalid_header", name, "%s: %d is larger than 4294967295", name, v)
	}
	return uint32(v), nil
}

// RequestFromHeaders builds a Request from proxy headers, applying H1–H10,
// and reports the first failing header in Stargate's order (NVIDIA/nvcf
// http_proxy/request.rs parse_proxy_request_inputs, the same in every
// indexed version): x-request-id (required, non-blank), x-input-tokens (a
// required u64), x-model (required, non-blank), x-routing-method (a
// method-only value must name a known algorithm, H9: blank, non-visible
// ASCII or unknown is unknown_method), x-priority (u32, default 0),
// x-max-wait-ms, then x-request-slo-ms (optional u64).
// x-routing-key / x-cache-affinity-key / x-stargate-last-cluster-id never
// fail (trimmed, blank = absent). x-routing-method is kept raw for
// Config.Resolve, which decides availability (unavailable) and routing
// expressions (values with ';', whose parse stage in the newest proxy was
// not found: lb-config.md §15 item 4). Errors are *RoutingError (HTTP 400).
func RequestFromHeaders(get HeaderSource) (Request, error) {
	var r Request
	if v, ok := get("x-request-id"); !ok {
		return r, routingErr("invalid_header", "x-request-id", "x-request-id is required")
	} else if _, ok := HeaderString(v); !ok {
		return r, routingErr("invalid_header", "x-request-id", "x-request-id is blank")
	}
	v, ok := get("x-input-tokens")
	if !ok {
		return r, routingErr("invalid_header", "x-input-tokens", "x-input-tokens is required")
	}
	n, err := ParseU64Header("x-input-tokens", v)
	if err != nil {
		return r, err
	}
	r.InputTokens, r.HasInputTokens = n, true
	if v, ok := get("x-routing-key"); ok {
		r.RoutingKey, _ = HeaderString(v)
	}
	v, ok = get("x-model")
	m, mok := HeaderString(v)
	if !ok || !mok {
		return r, routingErr("invalid_header", "x-model", "x-model is missing, blank or not visible ASCII")
	}
	r.Model = m
	if v, ok := get("x-routing-method"); ok {
		if !strings.Contains(v, ";") {
			if _, err := ParseRoutingMethod(v); err != nil {
				if re, ok := err.(*RoutingError); ok {
					re.Requested = v
				}
				return r, err
			}
		}
		r.RoutingMethod = OptionalString{Value: v, Set: true}
	}
	if v, ok := get("x-priority"); ok {
		p, err := ParseU32Header("x-priority", v)
		if err != nil {
			return r, err
		}
		r.Priority = p
	}
	for _, h := range []struct {
		name string
		dst  *OptionalU64
	}{{"x-max-wait-ms", &r.MaxWaitMs}, {"x-request-slo-ms", &r.RequestSLOMs}} {
		if v, ok := get(h.name); ok {
			n, err := ParseU64Header(h.name, v)
			if err != nil {
				return r, err
			}
			*h.dst = Some(n)
		}
	}
	if v, ok := get("x-cache-affinity-key"); ok {
		r.CacheAffinityKey, _ = HeaderString(v)
	}
	if v, ok := get("x-stargate-last-cluster-id"); ok {
		r.LastClusterID, _ = HeaderString(v)
	}
	return r, nil
}

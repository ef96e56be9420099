package lb

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// HeaderString applies the proxy's normalisation of an optional string
// header (lb-config.md H3, H8, H10; wait-and-widen.md §1.3): a value that
// is not visible ASCII (bytes 0x21–0x7E plus space and tab) is absent;
// otherwise leading and trailing spaces and tabs are trimmed and an empty
// result is absent. ok reports presence.
func HeaderString(raw string) (v string, ok bool) {
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if (b < 0x20 && b != '\t') || b > 0x7e {
			return "", false
		}
	}
	lo, hi := 0, len(raw)
	for lo < hi && (raw[lo] == ' ' || raw[lo] == '\t') {
		lo++
	}
	for hi > lo && (raw[hi-1] == ' ' || raw[hi-1] == '\t') {
		hi--
	}
	if lo == hi {
		return "", false
	}
	return raw[lo:hi], true
}

// Header names Stargate's proxy reads before routing (lb-config.md §11),
// in lower case (HTTP header names are case-insensitive).
const (
	// HeaderRequestID is x-request-id (H1, required).
	HeaderRequestID = "x-request-id"
	// HeaderModel is x-model (H2, required).
	HeaderModel = "x-model"
	// HeaderRoutingKey is x-routing-key (H3, optional string).
	HeaderRoutingKey = "x-routing-key"
	// HeaderInputTokens is x-input-tokens (H4, required u64).
	HeaderInputTokens = "x-input-tokens"
	// HeaderPriority is x-priority (H5, optional u32, default 0).
	HeaderPriority = "x-priority"
	// HeaderRequestSLOMs is x-request-slo-ms (H6, optional u64).
	HeaderRequestSLOMs = "x-request-slo-ms"
	// HeaderMaxWaitMs is x-max-wait-ms (H7, optional u64).
	HeaderMaxWaitMs = "x-max-wait-ms"
	// HeaderCacheAffinityKey is x-cache-affinity-key (H8, optional string).
	HeaderCacheAffinityKey = "x-cache-affinity-key"
	// HeaderRoutingMethod is x-routing-method (H9, optional algorithm name).
	HeaderRoutingMethod = "x-routing-method"
	// HeaderLastClusterID is x-stargate-last-cluster-id (H10, optional
	// string, never a 400).
	HeaderLastClusterID = "x-stargate-last-cluster-id"
	// HeaderStargateMaxWaitMs is x-stargate-max-wait-ms (H11): a proxy
	// retry budget, not a load-balancer input.
	HeaderStargateMaxWaitMs = "x-stargate-max-wait-ms"
)

var knownHeaders = [...]string{HeaderRequestID, HeaderModel, HeaderRoutingKey, HeaderInputTokens, HeaderPriority,
	HeaderRequestSLOMs, HeaderMaxWaitMs, HeaderCacheAffinityKey, HeaderRoutingMethod, HeaderLastClusterID}

// IsLoadBalancerHeader reports whether name (any case) is one of the
// headers of lb-config.md H1–H10 that ParseRequestHeaders reads.
func IsLoadBalancerHeader(name string) bool {
	for _, k := range knownHeaders {
		if equalFoldASCII(name, k) {
			return true
		}
	}
	return false
}

// Header is one request header as received: its name in any case and its
// raw value bytes (not necessarily UTF-8).
type Header struct {
	Name, Value string
}

// Headers is a request's header list in arrival order.
type Headers []Header

// Get returns the first value whose name equals name case-insensitively.
// Like Stargate's http::HeaderMap::get, later repetitions of a header are
// never read.
func (h Headers) Get(name string) (string, bool) {
	for _, x := range h {
		if equalFoldASCII(x.Name, name) {
			return x.Value, true
		}
	}
	return "", false
}

// Count returns how many times name (any case) occurs.
func (h Headers) Count(name string) int {
	n := 0
	for _, x := range h {
		if equalFoldASCII(x.Name, name) {
			n++
		}
	}
	return n
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// HeaderError is a request Stargate's proxy answers with HTTP 400 before
// any routing (lb-config.md H1–H9, E3).
type HeaderError struct {
	// Header is the header at fault (lower case).
	Header string
	// Rule is the lb-config.md rule ("H4", "E3").
	Rule string
	// Code is a machine reason. For x-routing-method it is Stargate's own
	// x-stargate-error-code ("unknown_method", "unavailable"); the other
	// codes are lcctl's names for Stargate's bare 400s
	// ("missing_input_tokens", "invalid_priority", …).
	Code string
	// Message is a one-line explanation naming the header and the value.
	Message string
}

// Error returns "x-priority: <message> (H5)".
func (e *HeaderError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Header, e.Message, e.Rule)
}

// HTTPStatus is always 400.
func (e *HeaderError) HTTPStatus() int { return 400 }

// visibleASCII is http::HeaderValue::to_str's test: every byte is a tab or
// in 0x20–0x7E.
func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 && b != '\t') || b > 0x7e {
			return false
		}
	}
	return true
}

// trimSpaceTab trims what Rust's str::trim trims from a visible-ASCII
// value: spaces and tabs.
func trimSpaceTab(s string) string {
	lo, hi := 0, len(s)
	for lo < hi && (s[lo] == ' ' || s[lo] == '\t') {
		lo++
	}
	for hi > lo && (s[hi-1] == ' ' || s[hi-1] == '\t') {
		hi--
	}
	return s[lo:hi]
}

// ParseUnsignedHeader parses a numeric header value as Stargate's proxy
// does (parse_optional_numeric_header, lb-config.md H4–H7): the value must
// be visible ASCII, is trimmed, must not be empty, and is then parsed like
// Rust's unsigned FromStr: an optional '+', ASCII digits only (leading
// zeros allowed, no '-', no inner spaces, no '_'), at most max. The error
// says which of these failed.
func ParseUnsignedHeader(raw string, max uint64) (uint64, error) {
	if !visibleASCII(raw) {
		return 0, errors.New("value is not visible ASCII")
	}
	s := trimSpaceTab(raw)
	if s == "" {
		return 0, errors.New("value is blank")
	}
	digits := s
	if digits[0] == '+' {
		digits = digits[1:]
	}
	if digits == "" {
		return 0, fmt.Errorf("%q is not a decimal integer", s)
	}
	var v uint64
	for i := 0; i < len(digits); i++ {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a decimal integer", s)
		}
		d := uint64(c - '0')
		if v > (max-d)/10 {
			return 0, fmt.Errorf("%q is larger than %d", s, max)
		}
		v = v*10 + d
	}
	return v, nil
}

// ParseRoutingMethod parses x-routing-method without the config (H9):
// the value must be visible ASCII ("<invalid-utf8>" otherwise), is
// trimmed, ASCII-lowercased and every '_' becomes '-'; the result must be
// one of the lowercase algorithm spellings of lb-config.md §4 (internal
// spaces are kept, so "power of n" is unknown). requested is the trimmed
// value Stargate reports. Failures are HeaderErrors with Code
// "unknown_method". A value containing ';' is a routing expression
// (lb-config.md §12): see IsRoutingExpression.
func ParseRoutingMethod(raw string) (a Algorithm, requested string, err *HeaderError) {
	if !visibleASCII(raw) {
		return 0, "<invalid-utf8>", &HeaderError{Header: HeaderRoutingMethod, Rule: "H9", Code: "unknown_method",
			Message: "unknown routing method '<invalid-utf8>': the value is not visible ASCII"}
	}
	requested = trimSpaceTab(raw)
	norm := []byte(requested)
	for i, c := range norm {
		switch {
		case 'A' <= c && c <= 'Z':
			norm[i] = c + 'a' - 'A'
		case c == '_':
			norm[i] = '-'
		}
	}
	a, ok := ParseAlgorithmName(string(norm))
	if !ok || requested == "" {
		return 0, requested, &HeaderError{Header: HeaderRoutingMethod, Rule: "H9", Code: "unknown_method",
			Message: fmt.Sprintf("unknown routing method '%s'", requested)}
	}
	return a, requested, nil
}

// IsRoutingExpression reports whether an x-routing-method value is a
// routing expression with parameters (it contains ';', lb-config.md §12).
func IsRoutingExpression(raw string) bool { return strings.Contains(raw, ";") }

// ParseRequestHeaders turns request headers into a Request the way
// Stargate's proxy reads them (parse_proxy_request_inputs; lb-config.md
// H1–H10), in its order: x-request-id (required, trimmed, non-blank),
// x-input-tokens (required u64), x-routing-key, x-model (required),
// x-routing-method (syntax only; availability is Config.Resolve's E3
// check), x-priority (u32, default 0), x-max-wait-ms and x-request-slo-ms
// (u64), x-cache-affinity-key and x-stargate-last-cluster-id (optional:
// trimmed, blank or not visible ASCII = absent, never an error). The
// first failing rule is returned as a *HeaderError (HTTP 400); only the
// first occurrence of a repeated header is read. String fields of the
// Request hold trimmed values ("" = absent); RoutingMethod holds the raw
// value. Elapsed, exclusions and the pinned classification are not
// headers and stay zero.
func ParseRequestHeaders(h Headers) (Request, *HeaderError) {
	var r Request
	optional := func(name string) (string, bool) {
		v, ok := h.Get(name)
		if !ok {
			return "", false
		}
		return HeaderString(v)
	}
	if _, ok := optional(HeaderRequestID); !ok {
		return r, &HeaderError{Header: HeaderRequestID, Rule: "H1", Code: "missing_request_id",
			Message: "required header is missing, blank or not visible ASCII"}
	}
	num := func(name, rule string, max uint64) (uint64, bool, *HeaderError) {
		v, ok := h.Get(name)
		if !ok {
			return 0, false, nil
		}
		n, err := ParseUnsignedHeader(v, max)
		if err != nil {
			return 0, false, &HeaderError{Header: name, Rule: rule, Code: "invalid_" + strings.TrimPrefix(strings.ReplaceAll(name, "-", "_"), "x_"),
				Message: err.Error()}
		}
		return n, true, nil
	}
	n, ok, err := num(HeaderInputTokens, "H4", math.MaxUint64)
	if err != nil {
		return r, err
	}
	if !ok {
		return r, &HeaderError{Header: HeaderInputTokens, Rule: "H4", Code: "missing_input_tokens", Message: "required header is missing"}
	}
	r.InputTokens, r.HasInputTokens = n, true
	r.RoutingKey, _ = optional(HeaderRoutingKey)
	model, ok := optional(HeaderModel)
	if !ok {
		return r, &HeaderError{Header: HeaderModel, Rule: "H2", Code: "missing_model",
			Message: "required header is missing, blank or not visible ASCII"}
	}
	r.Model = model
	if v, ok := h.Get(HeaderRoutingMethod); ok {
		r.RoutingMethod = OptionalString{Value: v, Set: true}
		if !IsRoutingExpression(v) {
			if _, _, err := ParseRoutingMethod(v); err != nil {
				return r, err
			}
		}
	}
	if p, ok, err := num(HeaderPriority, "H5", math.MaxUint32); err != nil {
		return r, err
	} else if ok {
		r.Priority = uint32(p)
	}
	if v, ok, err := num(HeaderMaxWaitMs, "H7", math.MaxUint64); err != nil {
		return r, err
	} else if ok {
		r.MaxWaitMs = Some(v)
	}
	if v, ok, err := num(HeaderRequestSLOMs, "H6", math.MaxUint64); err != nil {
		return r, err
	} else if ok {
		r.RequestSLOMs = Some(v)
	}
	r.CacheAffinityKey, _ = optional(HeaderCacheAffinityKey)
	r.LastClusterID, _ = optional(HeaderLastClusterID)
	return r, nil
}

package lb

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// RoutingError is a request rejected before routing: an HTTP 400 with the
// x-stargate-error-code Code (lb-config.md H1–H9, X1–X6).
type RoutingError struct {
	// Status is the HTTP status (400).
	Status int
	// Code is the machine code: "unknown_method", "unavailable",
	// "malformed_expression", "unknown_parameter", "not_applicable",
	// "invalid_value", "inert_value", "inert_combination", or
	// "invalid_header" for a malformed header value.
	Code string
	// Header names the header involved.
	Header string
	// Message is Stargate's message text.
	Message string
}

// Error renders "400 code: message".
func (e *RoutingError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func routingErr(code, header, format string, args ...any) *RoutingError {
	return &RoutingError{Status: 400, Code: code, Header: header, Message: fmt.Sprintf(format, args...)}
}

// Resolution says how Config.Resolve found the effective algorithm.
type Resolution struct {
	// Algorithm is the effective algorithm.
	Algorithm Algorithm
	// Model is the models key used ("" for the default set).
	Model string
	// Source is the rule that matched: "E2 model entry", "E2 default",
	// "E3.1 own algorithm", "E3.2 model request_algorithms",
	// "E3.2 request_algorithms", "E3.3 request_algorithms".
	Source string
	// Method is the normalised x-routing-method token ("" when absent).
	Method string
	// Parameters are the routing-expression parameters applied, in order.
	Parameters []string
}

// methodNames are the header spellings after H9 normalisation.
var methodNames = map[string]Algorithm{
	"power-of-n": PowerOfN, "power-of-two": PowerOfN, "powerof2": PowerOfN, "powerofn": PowerOfN,
	"wait-and-widen": WaitAndWiden, "groq-multiregion": WaitAndWiden,
	"round-robin": RoundRobin, "random": Random, "pulsar": Pulsar,
	"pulsar-wait-and-widen": PulsarWaitAndWiden, "pulsar-multiregion": PulsarWaitAndWiden,
}

// NormalizeRoutingMethod applies H9 to a method name: trim, ASCII
// lower-case, every '_' replaced by '-' (internal spaces kept).
func NormalizeRoutingMethod(raw string) string {
	s := strings.TrimSpace(raw)
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c == '_':
			b[i] = '-'
		}
	}
	return string(b)
}

// ParseRoutingMethod resolves a method-only x-routing-method value (H9).
// Blank, non-visible-ASCII or unknown values are a 400 unknown_method.
func ParseRoutingMethod(raw string) (Algorithm, error) {
	if !visibleASCII(raw) {
		return 0, routingErr("unknown_method", "x-routing-method", "unknown routing method '%s'", strings.TrimSpace(raw))
	}
	a, ok := methodNames[NormalizeRoutingMethod(raw)]
	if !ok {
		return 0, routingErr("unknown_method", "x-routing-method", "unknown routing method '%s'", strings.TrimSpace(raw))
	}
	return a, nil
}

func visibleASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; (b < 0x20 && b != '\t') || b > 0x7e {
			return false
		}
	}
	return true
}

// Resolve returns the effective algorithm config for a request (lb-config.md
// §10 E1–E5): the models entry for the trimmed model, else the default set
// (`default` with default settings plus the top-level request_algorithms);
// an x-routing-method value selects, first match wins, the set's own
// algorithm, the set's own request_algorithms map, then (model sets only)
// the top-level map; otherwise 400 unavailable. A value containing ';' is
// a routing expression (§12) whose parameters overlay the base config. A
// nil Config is Stargate without a config file (E6). The returned config is
// a fresh copy; errors are *RoutingError.
func (c *Config) Resolve(model string, method OptionalString) (*AlgorithmConfig, Resolution, error) {
	if c == nil {
		c = PermissiveConfig()
	}
	model, _ = HeaderString(model)
	var res Resolution
	own, isModel := c.Models[model]
	if isModel && own != nil {
		res.Model = model
	} else {
		isModel = false
		d := DefaultAlgorithmConfig(c.Default)
		if c.Default == 0 {
			d = DefaultAlgorithmConfig(PowerOfN)
		}
		own = &d
	}
	if !method.Set {
		res.Algorithm = own.Algorithm
		res.Source = "E2 default"
		if isModel {
			res.Source = "E2 model entry"
		}
		return cloneConfig(own), res, nil
	}
	raw := method.Value
	token, params, isExpr := raw, "", false
	if i := strings.IndexByte(raw, ';'); i >= 0 {
		token, params, isExpr = raw[:i], raw[i:], true
	}
	var a Algorithm
	if isExpr {
		if err := checkExpressionShape(raw, token); err != nil {
			return nil, res, err
		}
		var ok bool
		a, ok = methodNames[NormalizeRoutingMethod(token)]
		if !ok {
			return nil, res, routingErr("unknown_method", "x-routing-method", "unknown routing method '%s'", strings.TrimSpace(token))
		}
	} else {
		var err error
		if a, err = ParseRoutingMethod(raw); err != nil {
			return nil, res, err
		}
	}
	res.Method = a.String()
	res.Algorithm = a
	var base *AlgorithmConfig
	switch {
	case a == own.Algorithm:
		base, res.Source = own, "E3.1 own algorithm"
	case isModel && own.RequestAlgorithms[a] != nil:
		base, res.Source = own.RequestAlgorithms[a], "E3.2 model request_algorithms"
	case !isModel && c.RequestAlgorithms[a] != nil:
		base, res.Source = c.RequestAlgorithms[a], "E3.2 request_algorithms"
	case isModel && c.RequestAlgorithms[a] != nil:
		base, res.Source = c.RequestAlgorithms[a], "E3.3 request_algorithms"
	default:
		return nil, res, routingErr("unavailable", "x-routing-method", "routing method %s is not configured for this model", a)
	}
	out := cloneConfig(base)
	out.RequestAlgorithms = nil
	if isExpr {
		applied, err := overlayExpression(out, params)
		if err != nil {
			return nil, res, err
		}
		res.Parameters = applied
	}
	return out, res, nil
}

func cloneConfig(c *AlgorithmConfig) *AlgorithmConfig {
	x := *c
	if c.MaxInputWorkSeconds != nil {
		v := *c.MaxInputWorkSeconds
		x.MaxInputWorkSeconds = &v
	}
	for _, p := range []**uint64{&x.MaxQueueTimeFloorMs, &x.MaxQueueTimeCeilMs, &x.BandWidenIntervalMs} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	return &x
}

// checkExpressionShape applies the global X1 limits.
func checkExpressionShape(raw, token string) error {
	switch {
	case len(raw) > 1024:
		return malformed("expression longer than 1024 bytes")
	case strings.IndexByte(raw, ',') >= 0:
		return malformed("',' is not allowed")
	case !visibleASCII(raw):
		return malformed("expression is not visible ASCII")
	}
	t := strings.TrimLeft(token, " \t")
	if t == "" || !isLetter(t[0]) {
		return malformed("the algorithm must be a token starting with a letter")
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !(isLetter(c) || isDigit(c) || c == '_' || c == '-') {
			return malformed("invalid character %q in the algorithm token", c)
		}
	}
	return nil
}

func malformed(format string, args ...any) *RoutingError {
	return routingErr("malformed_expression", "x-routing-method", "malformed routing expression: "+format, args...)
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

// exprValue is one parsed parameter value.
type exprValue struct {
	kind byte // 'i' integer, 'd' decimal, 't' token, 's' string
	text string
}

// paramSets lists the expression parameters per algorithm (X3).
var (
	commonParams = []string{"require_cache_affinity_key", "require_input_tokens", "max_input_work_seconds"}
	wwParams     = []string{"comparator", "seed", "n", "max_queued", "max_queue_time_floor_ms", "max_queue_time_ceil_ms",
		"ttft_bucket_size_ms", "next_bucket_unlock_factor", "ignore_queue_time", "ignore_input_processing_time",
		"cache_affinity_virtual_nodes", "cache_affinity_backend_selection_count", "cache_affinity_input_tokens_scale",
		"cache_affinity_wait_ms"}
	paramsByAlgorithm = map[Algorithm][]string{
		PowerOfN:     {"sample_count", "comparator"},
		WaitAndWiden: wwParams,
		Pulsar:       {"seed", "consider_kv_free_tokens"},
		PulsarWaitAndWiden: {"seed", "n", "max_queued", "max_queue_time_floor_ms", "max_queue_time_ceil_ms",
			"ttft_bucket_size_ms", "next_bucket_unlock_factor", "ignore_queue_time", "ignore_input_processing_time",
			"cache_affinity_backend_selection_count", "cache_affinity_input_tokens_scale", "cache_affinity_wait_ms",
			"consider_kv_free_tokens", "band_widen_interval_ms", "fallback_max_queued"},
	}
)

func knownParam(k string) bool {
	if contains(commonParams, k) {
		return true
	}
	for _, ps := range paramsByAlgorithm {
		if contains(ps, k) {
			return true
		}
	}
	return false
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// overlayExpression parses ";k=v;…" (X1) and applies the parameters to c
// (X3–X6). It returns the parameter names applied.
func overlayExpression(c *AlgorithmConfig, params string) ([]string, error) {
	type kv struct {
		k string
		v exprValue
	}
	var list []kv
	rest := params
	for rest != "" {
		if rest[0] != ';' {
			return nil, malformed("expected ';'")
		}
		rest = strings.TrimPrefix(rest[1:], " ")
		eq := strings.IndexByte(rest, '=')
		semi := strings.IndexByte(rest, ';')
		if eq < 0 || (semi >= 0 && semi < eq) {
			return nil, malformed("every parameter needs key=value")
		}
		k := rest[:eq]
		if k == "" || !(k[0] >= 'a' && k[0] <= 'z') {
			return nil, malformed("invalid parameter key %q", k)
		}
		for i := 0; i < len(k); i++ {
			if ch := k[i]; !(ch >= 'a' && ch <= 'z' || isDigit(ch) || ch == '_') {
				return nil, malformed("invalid parameter key %q", k)
			}
		}
		rest = rest[eq+1:]
		var v exprValue
		if strings.HasPrefix(rest, `"`) {
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				return nil, malformed("unterminated string")
			}
			v = exprValue{'s', rest[1 : 1+end]}
			if strings.ContainsAny(v.text, `;\`) {
				return nil, malformed("';' and '\\' are not allowed in strings")
			}
			rest = rest[2+end:]
		} else {
			end := strings.IndexByte(rest, ';')
			if end < 0 {
				end = len(rest)
			}
			raw := rest[:end]
			rest = rest[end:]
			var err error
			if v, err = classifyBare(raw); err != nil {
				return nil, err
			}
		}
		for _, p := range list {
			if p.k == k {
				return nil, malformed("duplicate parameter %q", k)
			}
		}
		list = append(list, kv{k, v})
		if len(list) > 32 {
			return nil, malformed("more than 32 parameters")
		}
	}
	a := c.Algorithm
	applied := make([]string, 0, len(list))
	setFloor, setCeil := false, false
	for _, p := range list {
		if !knownParam(p.k) {
			return nil, routingErr("unknown_parameter", "x-routing-method", "unknown parameter '%s' for algorithm %s", p.k, a)
		}
		if !contains(commonParams, p.k) && !contains(paramsByAlgorithm[a], p.k) {
			return nil, routingErr("not_applicable", "x-routing-method", "%s is not applicable to %s", p.k, a)
		}
		if err := applyParam(c, p.k, p.v); err != nil {
			return nil, err
		}
		setFloor = setFloor || p.k == "max_queue_time_floor_ms"
		setCeil = setCeil || p.k == "max_queue_time_ceil_ms"
		applied = append(applied, p.k)
	}
	if (setFloor || setCeil) && !c.HasQueueSLO() {
		return nil, routingErr("inert_combination", "x-routing-method",
			"max_queue_time_floor_ms and max_queue_time_ceil_ms must both be set")
	}
	return applied, nil
}

// classifyBare classifies an unquoted value: integer (≤ 15 digits),
// decimal (≤ 3 fraction digits) or token.
func classifyBare(raw string) (exprValue, error) {
	if raw == "" || strings.ContainsAny(raw, " \t=") {
		return exprValue{}, malformed("invalid value %q", raw)
	}
	s := strings.TrimPrefix(raw, "-")
	if s != "" && isDigit(s[0]) {
		intPart, frac, hasDot := strings.Cut(s, ".")
		if !allDigits(intPart) || (hasDot && (frac == "" || !allDigits(frac))) {
			return exprValue{}, malformed("invalid number %q", raw)
		}
		if hasDot {
			if len(intPart) > 12 || len(frac) > 3 {
				return exprValue{}, malformed("decimal %q has too many digits", raw)
			}
			return exprValue{'d', raw}, nil
		}
		if len(intPart) > 15 {
			return exprValue{}, malformed("integer %q has more than 15 digits", raw)
		}
		return exprValue{'i', raw}, nil
	}
	if !(isLetter(raw[0]) || raw[0] == '*') {
		return exprValue{}, malformed("invalid value %q", raw)
	}
	for i := 0; i < len(raw); i++ {
		if ch := raw[i]; !(isLetter(ch) || isDigit(ch) || strings.IndexByte("_-.:%*/!#$&'+^`|~", ch) >= 0) {
			return exprValue{}, malformed("invalid token %q", raw)
		}
	}
	return exprValue{'t', raw}, nil
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func invalid(k, format string, args ...any) *RoutingError {
	return routingErr("invalid_value", "x-routing-method", "%s: "+format, append([]any{k}, args...)...)
}

// number reads an integer or decimal value (a quoted plain decimal too).
func (v exprValue) number() (float64, bool) {
	switch v.kind {
	case 'i', 'd':
	case 's':
		if _, err := classifyBare(v.text); err != nil || strings.ContainsAny(v.text, "eE") {
			return 0, false
		}
	default:
		return 0, false
	}
	f, err := strconv.ParseFloat(v.text, 64)
	return f, err == nil && !math.IsInf(f, 0)
}

func (v exprValue) integer() (int64, bool) {
	if v.kind != 'i' {
		return 0, false
	}
	n, err := strconv.ParseInt(v.text, 10, 64)
	return n, err == nil
}

func applyParam(c *AlgorithmConfig, k string, v exprValue) error {
	boolean := func(dst *bool) error {
		if v.kind != 't' || (v.text != "true" && v.text != "false") {
			return invalid(k, "want true or false")
		}
		*dst = v.text == "true"
		return nil
	}
	unsigned := func(minimum int64) (uint64, error) {
		n, ok := v.integer()
		if !ok {
			return 0, invalid(k, "want an integer")
		}
		if n < 0 {
			return 0, invalid(k, "must not be negative")
		}
		if n < minimum {
			return 0, routingErr("inert_value", "x-routing-method", "%s: %d has no effect", k, n)
		}
		return uint64(n), nil
	}
	switch k {
	case "require_cache_affinity_key":
		return boolean(&c.RequireCacheAffinityKey)
	case "require_input_tokens":
		return boolean(&c.RequireInputTokens)
	case "ignore_queue_time":
		return boolean(&c.IgnoreQueueTime)
	case "ignore_input_processing_time":
		return boolean(&c.IgnoreInputProcessingTime)
	case "consider_kv_free_tokens":
		return boolean(&c.ConsiderKVFreeTokens)
	case "max_input_work_seconds":
		f, ok := v.number()
		if !ok {
			return invalid(k, "want a number")
		}
		if f <= 0 {
			return routingErr("inert_value", "x-routing-method", "%s: %s has no effect", k, v.text)
		}
		c.MaxInputWorkSeconds = &f
	case "sample_count":
		n, ok := v.integer()
		if !ok || n < 1 || n > 64 {
			return invalid(k, "power-of-n sample_count must be between 1 and 64, got %s", v.text)
		}
		c.SampleCount = int(n)
	case "comparator":
		if v.kind != 't' && v.kind != 's' {
			return invalid(k, "want a comparator name")
		}
		cmp, ok := ParseComparator(v.text)
		if !ok {
			return invalid(k, "unknown comparator %q", v.text)
		}
		c.Comparator = cmp
	case "seed":
		if v.kind == 'd' {
			return invalid(k, "want a string")
		}
		c.Seed = v.text
	case "n", "ttft_bucket_size_ms", "cache_affinity_backend_selection_count", "cache_affinity_virtual_nodes":
		n, err := unsigned(1)
		if err != nil {
			return err
		}
		switch k {
		case "n":
			c.N = int(n)
		case "ttft_bucket_size_ms":
			c.TTFTBucketSizeMs = n
		case "cache_affinity_backend_selection_count":
			c.CacheAffinityBackendSelectionCount = int(n)
		default:
			if n > 1024 {
				return invalid(k, "at most 1024, got %d", n)
			}
			c.CacheAffinityVirtualNodes = int(n)
		}
	case "max_queued", "max_queue_time_floor_ms", "max_queue_time_ceil_ms", "cache_affinity_wait_ms", "band_widen_interval_ms", "fallback_max_queued":
		n, err := unsigned(0)
		if err != nil {
			return err
		}
		switch k {
		case "max_queued":
			c.MaxQueued = n
		case "max_queue_time_floor_ms":
			c.MaxQueueTimeFloorMs = &n
		case "max_queue_time_ceil_ms":
			c.MaxQueueTimeCeilMs = &n
		case "cache_affinity_wait_ms":
			c.CacheAffinityWaitMs = n
		case "band_widen_interval_ms":
			c.BandWidenIntervalMs = &n
		default:
			c.FallbackMaxQueued = n
		}
	case "next_bucket_unlock_factor":
		f, ok := v.number()
		if !ok {
			return invalid(k, "want a finite number")
		}
		c.NextBucketUnlockFactor = f
	case "cache_affinity_input_tokens_scale":
		f, ok := v.number()
		if !ok || f < 0 || f > 1 {
			return invalid(k, "cache_affinity_input_tokens_scale must be between 0.0 and 1.0, got %s", v.text)
		}
		c.CacheAffinityInputTokensScale = f
	}
	return nil
}

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

// methodNames are the header spellings after H9 normalisation: every file
// spelling of lb-config.md §4, normalised, so a new alias is added once
// (fileSpellings in config.go).
var methodNames = func() map[string]Algorithm {
	m := make(map[string]Algorithm, len(fileSpellings))
	for s, a := range fileSpellings {
		m[NormalizeRoutingMethod(s)] = a
	}
	return m
}()

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
		f := FieldByName(p.k)
		if f == nil || f.Expression == 0 {
			return nil, routingErr("unknown_parameter", "x-routing-method", "unknown parameter '%s' for algorithm %s", p.k, a)
		}
		if !f.Expression.Has(a) {
			return nil, routingErr("not_applicable", "x-routing-method", "%s is not applicable to %s", p.k, a)
		}
		if err := applyParam(c, f, p.k, p.v); err != nil {
			return nil, err
		}
		setFloor = setFloor || f == FieldMaxQueueTimeFloorMs
		setCeil = setCeil || f == FieldMaxQueueTimeCeilMs
		applied = append(applied, p.k)
	}
	if (setFloor || setCeil) && !c.HasQueueSLO() {
		return nil, routingErr("inert_combination", "x-routing-method",
			"%s and %s must both be set", FieldMaxQueueTimeFloorMs.Name, FieldMaxQueueTimeCeilMs.Name)
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

// applyParam checks one expression value against its registry row (X4)
// and stores it in c. k is the parameter as written.
func applyParam(c *AlgorithmConfig, f *Field, k string, v exprValue) error {
	switch f.Type {
	case TypeBool:
		if v.kind != 't' || (v.text != "true" && v.text != "false") {
			return invalid(k, "want true or false")
		}
		f.SetBool(c, v.text == "true")
	case TypeString:
		if v.kind == 'd' {
			return invalid(k, "want a string")
		}
		f.SetString(c, v.text)
	case TypeComparator:
		if v.kind != 't' && v.kind != 's' {
			return invalid(k, "want a comparator name")
		}
		cmp, ok := ParseComparator(v.text)
		if !ok {
			return invalid(k, "unknown comparator %q", v.text)
		}
		f.SetComparator(c, cmp)
	case TypeF64:
		x, ok := v.number()
		switch {
		case f.Range != nil:
			if !ok || !f.Range.Contains(x) {
				return invalid(k, f.Range.Message+", got %s", v.text)
			}
		case !ok && f.ExprPositive:
			return invalid(k, "want a number")
		case !ok:
			return invalid(k, "want a finite number")
		case f.ExprPositive && x <= 0:
			return routingErr("inert_value", "x-routing-method", "%s: %s has no effect", k, v.text)
		}
		f.SetFloat(c, x)
	case TypeU64, TypeUsize:
		n, ok := v.integer()
		switch {
		case f.Range != nil:
			if !ok || !f.Range.Contains(float64(n)) {
				return invalid(k, f.Range.Message+", got %s", v.text)
			}
		case !ok:
			return invalid(k, "want an integer")
		case n < 0:
			return invalid(k, "must not be negative")
		case n == 0 && f.ExprPositive:
			return routingErr("inert_value", "x-routing-method", "%s: %d has no effect", k, n)
		case f.ExprMax != 0 && uint64(n) > f.ExprMax:
			return invalid(k, "at most %d, got %d", f.ExprMax, n)
		}
		f.SetUint(c, uint64(n))
	default:
		return invalid(k, "not settable by a routing expression")
	}
	return nil
}

package lb

import (
	"encoding/json"
	"fmt"
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
	// Rule is the routing-expression rule a malformed_expression names
	// ("P1" … "P11", or "RFC 8941" for the structured-field parse, whose
	// message names P1/P2/P4/P8); "" otherwise.
	Rule string
	// Requested is the x-routing-method value as received, which
	// Stargate's rejection carries back (expression.rs RejectionError
	// requested); "" for other headers.
	Requested string
}

// Body is the JSON body Stargate sends with the 400: the code and the
// message (routing_expressions.rs: exactly these two keys; serde_json
// writes object keys in sorted order).
func (e *RoutingError) Body() string {
	b, _ := json.Marshal(struct {
		Code  string `json:"code"`
		Error string `json:"error"`
	}{e.Code, e.Message})
	return string(b)
}

// Error renders "400 code: message".
func (e *RoutingError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

func routingErr(code, header, format string, args ...any) *RoutingError {
	return &RoutingError{Status: 400, Code: code, Header: header, Message: fmt.Sprintf(format, args...)}
}

// ResolutionSource names the rule of lb-config.md §10 that chose the
// effective algorithm entry; its text is the rule as the spec numbers it
// (explain prints it and writes it as resolution.rule).
type ResolutionSource string

// The resolution rules (lb-config.md §10, E2 and E3).
const (
	// SourceDefault: no x-routing-method; the model has no models entry,
	// so `default` applies (E2).
	SourceDefault ResolutionSource = "E2 default"
	// SourceModelEntry: no x-routing-method; the model's own entry (E2).
	SourceModelEntry ResolutionSource = "E2 model entry"
	// SourceOwnAlgorithm: the requested method is the entry's own
	// algorithm (E3.1).
	SourceOwnAlgorithm ResolutionSource = "E3.1 own algorithm"
	// SourceModelRequestAlgorithms: the model entry's request_algorithms
	// has the method (E3.2).
	SourceModelRequestAlgorithms ResolutionSource = "E3.2 model request_algorithms"
	// SourceRequestAlgorithms: a model without an entry; the top-level
	// request_algorithms has the method (E3.2).
	SourceRequestAlgorithms ResolutionSource = "E3.2 request_algorithms"
	// SourceFallbackRequestAlgorithms: a model entry without the method;
	// the top-level request_algorithms has it (E3.3).
	SourceFallbackRequestAlgorithms ResolutionSource = "E3.3 request_algorithms"
)

// RequestAlgorithms reports whether the entry came from a
// request_algorithms map (E3.2 or E3.3), the model's or the top level's.
func (s ResolutionSource) RequestAlgorithms() bool {
	return s == SourceModelRequestAlgorithms || s == SourceRequestAlgorithms || s == SourceFallbackRequestAlgorithms
}

// Resolution says how Config.Resolve found the effective algorithm.
type Resolution struct {
	// Algorithm is the effective algorithm.
	Algorithm Algorithm
	// Model is the models key used ("" for the default set).
	Model string
	// Source is the rule that matched (one of the Source* constants).
	Source ResolutionSource
	// Method is the normalised x-routing-method token ("" when absent).
	Method string
	// Parameters are the routing-expression parameters applied, in order.
	Parameters []string
	// Expression is the parsed routing expression (nil for a method-only
	// value or none); set even when its overlay is rejected.
	Expression *RoutingExpression
	// Changes says, per parameter in order, how the expression overlaid
	// the base config (empty without an expression); when the overlay is
	// rejected, the parameters before the rejected one.
	Changes []ParamChange
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
		res.Source = SourceDefault
		if isModel {
			res.Source = SourceModelEntry
		}
		return cloneConfig(own), res, nil
	}
	raw := method.Value
	// A value with ';' is a routing expression; others name a method only
	// (H9). Which values the newest proxy sends to the expression parser
	// was not found (lb-config.md §15 item 4); a bare token parses the
	// same either way, and ';' is what the docs and every upstream test
	// use for an expression. A value that is not visible ASCII (tab
	// allowed) is never read as text by the proxy: unknown_method, as H9.
	var expr *RoutingExpression
	var a Algorithm
	if strings.IndexByte(raw, ';') >= 0 && visibleASCII(raw) {
		var rerr *RoutingError
		if expr, rerr = ParseRoutingExpression(raw); rerr != nil {
			return nil, res, rerr
		}
		a = expr.Algorithm
		res.Expression = expr
	} else {
		var err error
		if a, err = ParseRoutingMethod(raw); err != nil {
			err.(*RoutingError).Requested = raw
			return nil, res, err
		}
	}
	res.Method = a.String()
	res.Algorithm = a
	var base *AlgorithmConfig
	switch {
	case a == own.Algorithm:
		base, res.Source = own, SourceOwnAlgorithm
	case isModel && own.RequestAlgorithms[a] != nil:
		base, res.Source = own.RequestAlgorithms[a], SourceModelRequestAlgorithms
	case !isModel && c.RequestAlgorithms[a] != nil:
		base, res.Source = c.RequestAlgorithms[a], SourceRequestAlgorithms
	case isModel && c.RequestAlgorithms[a] != nil:
		base, res.Source = c.RequestAlgorithms[a], SourceFallbackRequestAlgorithms
	default:
		e := routingErr("unavailable", "x-routing-method", "routing method %s is not configured for this model", a)
		e.Requested = raw
		return nil, res, e
	}
	out := cloneConfig(base)
	out.RequestAlgorithms = nil
	if expr != nil {
		changes, err := expr.Overlay(out)
		res.Changes = changes
		if err != nil {
			return nil, res, err
		}
		for _, ch := range changes {
			res.Parameters = append(res.Parameters, ch.Key)
		}
	}
	return out, res, nil
}

// cloneConfig copies c with its optional values behind fresh pointers
// (the registry's optional rows), so an overlay never writes through to
// the configured entry.
func cloneConfig(c *AlgorithmConfig) *AlgorithmConfig {
	x := *c
	for _, f := range optionalFields {
		switch p := f.at(&x).(type) {
		case **uint64:
			repoint(p)
		case **float64:
			repoint(p)
		}
	}
	return &x
}

// repoint makes *p, when set, point at a fresh copy of its value.
func repoint[T any](p **T) {
	if *p != nil {
		v := **p
		*p = &v
	}
}

package lb

import (
	"fmt"
	"strconv"
)

// ResolutionSource says which rule of lb-config.md §10 chose the effective
// algorithm configuration for a request.
type ResolutionSource uint8

// Resolution sources.
const (
	// SourceModelEntry (E1/E2): the models entry for the request's model.
	SourceModelEntry ResolutionSource = iota + 1
	// SourceDefault (E1/E2): no models entry; `default` with default
	// settings.
	SourceDefault
	// SourceOverrideOwn (E3.1): x-routing-method names the set's own
	// algorithm, so the set's own config is used.
	SourceOverrideOwn
	// SourceOverrideModel (E3.2, model set): the model's own
	// request_algorithms entry.
	SourceOverrideModel
	// SourceOverrideTopLevel (E3.2 for the default set, E3.3 for a model
	// set): the top-level request_algorithms entry.
	SourceOverrideTopLevel
)

var sourceNames = [...]string{"", "model_entry", "default", "override_own", "override_model_request_algorithms",
	"override_top_level_request_algorithms"}

// String returns the snake_case name used in JSON output.
func (s ResolutionSource) String() string {
	if int(s) < len(sourceNames) {
		return sourceNames[s]
	}
	return "invalid"
}

// MarshalText renders String.
func (s ResolutionSource) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText parses String's output.
func (s *ResolutionSource) UnmarshalText(text []byte) error {
	return unmarshalName(s, text, "resolution source", sourceNames[:], 1)
}

// Rule returns the lb-config.md rule for the source ("E2", "E3.1", …).
func (s ResolutionSource) Rule() string {
	switch s {
	case SourceModelEntry, SourceDefault:
		return "E2"
	case SourceOverrideOwn:
		return "E3.1"
	case SourceOverrideModel:
		return "E3.2"
	case SourceOverrideTopLevel:
		return "E3.2/E3.3"
	}
	return ""
}

// Resolution is the effective algorithm configuration for one request and
// how it was found.
type Resolution struct {
	// Config is the effective entry (shared with the Config it came from;
	// do not modify). Its own RequestAlgorithms are not part of the
	// effective algorithm (E4).
	Config *AlgorithmConfig
	// Source is the rule that chose it.
	Source ResolutionSource
	// Model is the trimmed x-model; HasModelEntry reports whether the
	// config has a models entry for it (E1).
	Model         string
	HasModelEntry bool
	// Override is the algorithm x-routing-method asked for (0 without the
	// header) and Requested the trimmed header value.
	Override  Algorithm
	Requested string
	// Path locates the entry in the lb-config: `models["m"]`,
	// `models["m"].request_algorithms["pulsar"]`,
	// `request_algorithms["pulsar"]` or `default`.
	Path string
}

// Resolve picks the effective algorithm configuration for a request with
// model (x-model) and method (x-routing-method), exactly as Stargate's
// router does (router.rs resolve_algorithm_override; lb-config.md
// E1–E6): the models entry for the exact trimmed model id, else the
// default set (`default` with default settings plus the top-level
// request_algorithms); with a method A: the set's own config when A is its
// algorithm (E3.1), else the set's own map (E3.2), else, for a model set,
// the top-level map (E3.3), else HTTP 400 `unavailable`. A nil c is the
// permissive default of E6. Errors are *HeaderError: a missing or blank
// model (H2), an unknown method (H9, `unknown_method`) or an unavailable
// one (E3.4, `unavailable`). A routing expression (a method containing
// ';', lb-config.md §12) is reported as `unsupported_expression`: lcctl
// takes the effective config as input instead (pulsar.md §11 item 8).
func (c *Config) Resolve(model string, method OptionalString) (Resolution, *HeaderError) {
	if c == nil {
		c = PermissiveConfig()
	}
	var r Resolution
	m, ok := HeaderString(model)
	if !ok {
		return r, &HeaderError{Header: HeaderModel, Rule: "H2", Code: "missing_model",
			Message: "required header is missing, blank or not visible ASCII"}
	}
	r.Model = m
	own, hasModel := c.Models[m]
	r.HasModelEntry = hasModel
	if hasModel && own != nil {
		r.Config, r.Source, r.Path = own, SourceModelEntry, "models["+strconv.Quote(m)+"]"
	} else {
		r.HasModelEntry = false
		d := DefaultAlgorithmConfig(c.Default)
		if d.Algorithm == 0 {
			d = DefaultAlgorithmConfig(PowerOfN)
		}
		d.Spelling = c.DefaultSpelling
		r.Config, r.Source, r.Path = &d, SourceDefault, "default"
	}
	if !method.Set {
		return r, nil
	}
	if IsRoutingExpression(method.Value) {
		return r, &HeaderError{Header: HeaderRoutingMethod, Rule: "X1", Code: "unsupported_expression",
			Message: fmt.Sprintf("routing expression %q: lcctl does not evaluate routing expressions; pass the effective algorithm object with --algorithm-config", trimSpaceTab(method.Value))}
	}
	a, requested, err := ParseRoutingMethod(method.Value)
	r.Requested = requested
	if err != nil {
		return r, err
	}
	r.Override = a
	if r.Config.Algorithm == a {
		r.Source = SourceOverrideOwn
		return r, nil
	}
	if r.HasModelEntry {
		if e := own.RequestAlgorithms[a]; e != nil {
			r.Config, r.Source = e, SourceOverrideModel
			r.Path = "models[" + strconv.Quote(m) + "].request_algorithms[" + strconv.Quote(a.String()) + "]"
			return r, nil
		}
	}
	if e := c.RequestAlgorithms[a]; e != nil {
		r.Config, r.Source = e, SourceOverrideTopLevel
		r.Path = "request_algorithms[" + strconv.Quote(a.String()) + "]"
		return r, nil
	}
	return r, &HeaderError{Header: HeaderRoutingMethod, Rule: "E3", Code: "unavailable",
		Message: fmt.Sprintf("routing method %s is not configured for this model", a)}
}

package cli

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/ui"
	"github.com/lcctl/lcctl/internal/validate"
)

// explainInputLimit bounds every file explain reads (bytes).
const explainInputLimit = 64 << 20

// Header names of the headers Stargate's proxy reads before routing
// (lb-config.md H1–H10) and the proxy-only retry budget (H11).
const (
	hdrRequestID       = "x-request-id"
	hdrModel           = "x-model"
	hdrRoutingKey      = "x-routing-key"
	hdrInputTokens     = "x-input-tokens"
	hdrPriority        = "x-priority"
	hdrRequestSLOMs    = "x-request-slo-ms"
	hdrMaxWaitMs       = "x-max-wait-ms"
	hdrCacheAffinity   = "x-cache-affinity-key"
	hdrRoutingMethod   = "x-routing-method"
	hdrLastClusterID   = "x-stargate-last-cluster-id"
	hdrStargateMaxWait = "x-stargate-max-wait-ms"
)

var loadBalancerHeaders = []string{hdrRequestID, hdrModel, hdrRoutingKey, hdrInputTokens, hdrPriority,
	hdrRequestSLOMs, hdrMaxWaitMs, hdrCacheAffinity, hdrRoutingMethod, hdrLastClusterID}

// HeaderLine is one request header as given: its name in any case and its
// raw value bytes (not necessarily UTF-8).
type HeaderLine struct {
	// Name is the header name as given; Value the raw value.
	Name, Value string
}

// HeaderLines is a request's header list in order.
type HeaderLines []HeaderLine

// Get returns the first value whose name equals name case-insensitively.
// Like Stargate's http::HeaderMap::get, later repetitions of a header are
// never read.
func (h HeaderLines) Get(name string) (string, bool) {
	for _, x := range h {
		if strings.EqualFold(x.Name, name) {
			return x.Value, true
		}
	}
	return "", false
}

// Count returns how many times name (any case) occurs.
func (h HeaderLines) Count(name string) int {
	n := 0
	for _, x := range h {
		if strings.EqualFold(x.Name, name) {
			n++
		}
	}
	return n
}

// Request parses the headers the way Stargate's proxy does
// (lb.RequestFromHeaders: lb-config.md H1–H10), reading the first value of
// a repeated header. The error is an *lb.RoutingError (HTTP 400).
func (h HeaderLines) Request() (lb.Request, error) {
	return lb.RequestFromHeaders(func(name string) (string, bool) { return h.Get(name) })
}

// ParseHeaderLine parses one -H argument, "name: value" (curl's form).
// The name is trimmed and must be a non-empty HTTP token (RFC 9110
// tchar); the value is everything after the first ':' and is kept raw,
// since Stargate's proxy applies its own trimming (lb-config.md §11).
// Values with bytes an HTTP header cannot carry (control characters other
// than tab, DEL) are refused; bytes 0x80–0xFF are kept (they make the
// value "not visible ASCII", which the H-rules handle).
func ParseHeaderLine(s string) (HeaderLine, error) {
	name, value, ok := strings.Cut(s, ":")
	if !ok {
		return HeaderLine{}, fmt.Errorf("header %q: want 'name: value'", s)
	}
	name = strings.Trim(name, " \t")
	if name == "" {
		return HeaderLine{}, fmt.Errorf("header %q: the name is empty", s)
	}
	for i := 0; i < len(name); i++ {
		if !isTChar(name[i]) {
			return HeaderLine{}, fmt.Errorf("header %q: the name contains %q, which HTTP header names cannot", s, name[i])
		}
	}
	for i := 0; i < len(value); i++ {
		if b := value[i]; (b < 0x20 && b != '\t') || b == 0x7f {
			return HeaderLine{}, fmt.Errorf("header %q: the value contains control byte 0x%02x, which an HTTP header cannot carry", name, b)
		}
	}
	return HeaderLine{Name: name, Value: value}, nil
}

func isTChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", b) >= 0
}

// ParseElapsed parses --elapsed: a Go duration ("250ms", "1.5s", "2m",
// "123.75ms") or a bare number of milliseconds ("250", "0.5"). The result
// is rounded to the nanosecond and must be finite, ≥ 0 and within
// time.Duration's range (about 292 years).
func ParseElapsed(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return 0, errors.New("--elapsed: empty value (want e.g. 250ms, 1.5s or 250)")
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil && isPlainDecimal(t) {
		d, ok := lb.DurationFromMs(f)
		if !ok || math.IsInf(f, 0) {
			return 0, fmt.Errorf("--elapsed %q: want a finite number of milliseconds ≥ 0", s)
		}
		return d, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("--elapsed %q: want a duration such as 250ms, 1.5s or a number of milliseconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("--elapsed %q: the elapsed time cannot be negative", s)
	}
	return d, nil
}

// isPlainDecimal reports whether s is digits with an optional sign, point
// and exponent (no "inf", "nan", hex or underscores).
func isPlainDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9') && c != '.' && c != '+' && c != '-' && c != 'e' && c != 'E' {
			return false
		}
	}
	return true
}

// ParseExcludeList parses --exclude: comma-separated cluster ids, each
// trimmed, non-empty and text ui.Printable leaves as it is (no control or
// bidirectional formatting character, valid UTF-8: they are echoed in
// notes); repeats are dropped.
func ParseExcludeList(values []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, v := range values {
		for _, id := range strings.Split(v, ",") {
			id = strings.TrimSpace(id)
			if id == "" {
				return nil, fmt.Errorf("--exclude %q: empty cluster id", v)
			}
			if ui.Printable(id) != id {
				return nil, fmt.Errorf("--exclude %q: a cluster id cannot contain control or bidirectional formatting characters or bytes that are not UTF-8", v)
			}
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// loadExplainConfig reads and validates an lb-config (whole, or one
// algorithm object when algObject) and returns it as an lb.Config for
// model. Invalid files print their error diagnostics to stderr the way
// `lcctl validate` reports them and return a usage error (exit 2).
//
// A Kubernetes manifest (or, with valuesKey, a Helm values file) holding
// one lb-config is read as that lb-config, positions in the manifest.
//
// flag names the flag that gave file (config, algorithm-config, compare);
// a file that cannot be read is an error naming it.
func loadExplainConfig(env *Env, flag, file, valuesKey, dataKey string, algObject bool, model string) (*lb.Config, error) {
	data, err := readFlagInput(env, flag, file, explainInputLimit)
	if err != nil {
		return nil, UsageErr(err)
	}
	name := file
	if !algObject {
		if es, ok, err := embeddedConfigs(data, valuesKey, dataKey); ok {
			if err != nil {
				return nil, Usagef("%s: %v", ui.Printable(file), err)
			}
			if len(es) > 1 {
				srcs := make([]string, len(es))
				keys := map[string]bool{}
				for i, e := range es {
					srcs[i] = e.Source
					keys[e.Key] = true
				}
				hint := "pick one with --data-key KEY"
				if len(keys) < len(es) {
					// Several ConfigMaps use the same key: --data-key
					// alone cannot tell them apart.
					hint = "pick one with --data-key KEY, and give one ConfigMap (kubectl get cm NAME -o yaml | lcctl explain --config - ...) when several ConfigMaps use the same key"
				}
				if valuesKey != "" {
					hint = "give one values key"
				}
				return nil, Usagef("%s holds %d lb-configs (%s): explain reads one; %s", ui.Printable(file), len(es), strings.Join(srcs, "; "), hint)
			}
			res := validateEmbedded(name, es[0], validate.FormatUnknown)
			if !res.Valid() || res.Config == nil {
				return nil, reportInvalidConfig(env, file, res.Diagnostics)
			}
			return res.Config, nil
		}
	}
	if algObject {
		cfg, diags := validate.AlgorithmConfigFromBytes(name, data)
		if cfg == nil {
			return nil, reportInvalidConfig(env, file, diags)
		}
		c := &lb.Config{Default: lb.PowerOfN, RequestAlgorithms: map[lb.Algorithm]*lb.AlgorithmConfig{},
			Models: map[string]*lb.AlgorithmConfig{}}
		if m, ok := lb.HeaderString(model); ok {
			c.Models[m] = cfg
		}
		return c, nil
	}
	res := validate.File(name, data)
	if !res.Valid() || res.Config == nil {
		return nil, reportInvalidConfig(env, file, res.Diagnostics)
	}
	return res.Config, nil
}

// reportInvalidConfig returns the usage error for an lb-config (or
// algorithm object) that does not validate: its error diagnostics and
// hints are the error's details, printed (escaped) by the root error
// printer before the summary line.
func reportInvalidConfig(env *Env, file string, diags []validate.Diagnostic) error {
	var details []detailLine
	n := 0
	for _, d := range diags {
		if d.Severity != validate.SeverityError {
			continue
		}
		n++
		details = append(details, detailLine{text: d.String(), style: env.ErrStyle.Error.Render})
		if d.Hint != "" {
			details = append(details, detailLine{text: "  hint: " + d.Hint})
		}
	}
	if n == 0 {
		return Usagef("%s: not a usable lb-config", file)
	}
	return &ExitError{Code: ExitUsage, Details: details,
		Err: fmt.Errorf("%s: invalid lb-config (%s); run 'lcctl validate %s' for details", file, plural.Count(n, "error", "errors"), file)}
}

// configFlag is the name of the flag that gives explain's lb-config:
// --algorithm-config for one algorithm object, --config otherwise.
func configFlag(algObject bool) string {
	if algObject {
		return "algorithm-config"
	}
	return "config"
}

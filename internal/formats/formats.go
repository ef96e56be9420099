// Package formats decodes lcctl's own input files — routing snapshots,
// requests and conformance cases (shared/spec/formats.md) — from YAML or
// JSON into lb values, reporting every problem with file:line:col and the
// field path. Unknown fields, duplicate keys and duplicate cluster ids are
// errors; nothing is silently defaulted. The `config:` block of a case is
// decoded by internal/validate (one detailed algorithm object).
package formats

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/suggest"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

// Error is one decoding problem at a position in one of lcctl's own input
// files. The simulator's scenario, trace and policy files report the same
// type (sim.InputError).
type Error struct {
	// File is the file name as given; Line and Col are 1-based (0 =
	// unknown).
	File      string
	Line, Col int
	// Path is the field path, e.g. `clusters[1].stats.queue_size`.
	Path string
	// Msg says what is wrong.
	Msg string
}

// Error renders "file:line:col: path: msg".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Col > 0 { // the YAML parser's own errors have a line only
			fmt.Fprintf(&b, ":%d", e.Col)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is a list of decoding problems; it is itself an error.
type Errors []*Error

// Error joins the messages, one per line.
func (es Errors) Error() string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// decoder accumulates errors for one file.
type decoder struct {
	file string
	errs Errors
}

func (d *decoder) errf(n *yaml.Node, path, format string, args ...any) {
	e := &Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func (d *decoder) err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return d.errs
}

// fromNode decodes n with decode and a fresh decoder for file, returning
// the value, or nil and the Errors collected.
func fromNode[T any](n *yaml.Node, file, path string, decode func(*decoder, *yaml.Node, string) *T) (*T, error) {
	d := &decoder{file: file}
	v := decode(d, n, path)
	if err := d.err(); err != nil {
		return nil, err
	}
	return v, nil
}

// parseRoot parses data (YAML 1.2 superset of JSON) into its document
// node's content (yamldoc: UTF-8, one document, the alias budget).
func parseRoot(file string, data []byte) (*yaml.Node, error) {
	doc, err := yamldoc.Parse(data)
	if err != nil {
		e := yamldoc.SyntaxError(err, data)
		switch e.Kind {
		case yamldoc.Empty:
			return nil, Errors{{File: file, Msg: "not valid YAML or JSON: empty input"}}
		case yamldoc.Syntax, yamldoc.Panic:
			return nil, Errors{{File: file, Line: e.Line, Col: e.Col, Msg: "not valid YAML or JSON: " + e.Msg}}
		}
		return nil, Errors{{File: file, Line: e.Line, Col: e.Col, Msg: e.Msg}}
	}
	root := yamldoc.Body(doc)
	if root == nil {
		return nil, Errors{{File: file, Msg: "empty input"}}
	}
	if e := yamldoc.CheckAliases(root); e != nil {
		return nil, Errors{{File: file, Line: e.Line, Col: e.Col, Msg: e.Msg}}
	}
	return root, nil
}

// resolve follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 64; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// fields walks a mapping, rejecting duplicate and unknown keys; fn handles
// each known key and returns false for an unknown one, which is reported
// with the closest of known, the keys fn accepts ("; did you mean …?").
func (d *decoder) fields(n *yaml.Node, path string, known []string, fn func(key string, k, v *yaml.Node) bool) bool {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.errf(n, path, "must be a mapping, got %s", kindName(n))
		return false
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errf(k, path, "mapping keys must be strings")
			continue
		}
		if k.Value == "<<" {
			d.errf(k, path, "merge keys are not supported")
			continue
		}
		if seen[k.Value] {
			d.errf(k, join(path, k.Value), "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		if !fn(k.Value, k, v) {
			d.errf(k, join(path, k.Value), "unknown field %q%s", k.Value, suggest.DidYouMean(k.Value, known))
		}
	}
	return true
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

func kindName(n *yaml.Node) string {
	n = resolve(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int":
			return "an integer"
		case "!!float":
			return "a number"
		case "!!str":
			return "a string"
		}
		return "a scalar (" + n.Tag + ")"
	}
	return "an unsupported node"
}

// str decodes a string scalar.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.errf(n, path, "must be a string, got %s", kindName(n))
		return "", false
	}
	return n.Value, true
}

// optStr decodes an optional string (null = absent).
func (d *decoder) optStr(n *yaml.Node, path string) (string, bool) {
	if isNull(n) {
		return "", false
	}
	return d.str(n, path)
}

// noControl reports an error when s (decoded from n) holds a control
// character (C0, DEL or C1): names and cluster ids are printed, and an
// escape sequence in them would reach the terminal (colours, cursor moves,
// a retitled window) even when lcctl's output is plain text. It returns
// false after reporting.
func (d *decoder) noControl(n *yaml.Node, path, s string) bool {
	for i, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			d.errf(resolve(n), path, "contains control character %U at byte %d", r, i)
			return false
		}
	}
	return true
}

// uint decodes a non-negative integer scalar no larger than max.
func (d *decoder) uint(n *yaml.Node, path string, max uint64) (uint64, bool) {
	n = resolve(n)
	// yaml.v3 resolves an integer beyond 64 bits as a float, and a number
	// beyond float64 as a string.
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!float" && isDigits(strings.TrimPrefix(n.Value, "+")) {
		d.errf(n, path, "integer %s out of range (0..%d)", n.Value, max)
		return 0, false
	}
	if outOfRangeNumber(n) {
		d.errf(n, path, "must be a non-negative integer (0..%d), got %s", max, n.Value)
		return 0, false
	}
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.errf(n, path, "must be a non-negative integer, got %s", kindName(n))
		return 0, false
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	if strings.HasPrefix(s, "-") {
		if v, err := strconv.ParseInt(s, 0, 64); err == nil && v == 0 {
			return 0, true
		}
		d.errf(n, path, "must be a non-negative integer, got %s", n.Value)
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 0, 64)
	if err != nil || v > max {
		d.errf(n, path, "integer %s out of range (0..%d)", n.Value, max)
		return 0, false
	}
	return v, true
}

// float decodes a number (integer or float scalar; .nan and ±.inf
// included).
func (d *decoder) float(n *yaml.Node, path string) (float64, bool) {
	n = resolve(n)
	if outOfRangeNumber(n) {
		d.errf(n, path, "number %s is out of range (beyond ±1.8e308)", n.Value)
		return 0, false
	}
	if n == nil || n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		d.errf(n, path, "must be a number, got %s", kindName(n))
		return 0, false
	}
	var f float64
	if err := n.Decode(&f); err != nil {
		d.errf(n, path, "invalid number %q", n.Value)
		return 0, false
	}
	return f, true
}

// plainNumber matches a plain scalar written as a decimal number.
var plainNumber = regexp.MustCompile(`^[-+]?([0-9][0-9_]*)?(\.[0-9]*)?([eE][-+]?[0-9]+)?$`)

// outOfRangeNumber reports whether n is a plain (unquoted) scalar written as
// a number that yaml.v3 left a string because float64 cannot hold it
// (1e400).
func outOfRangeNumber(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Style == 0 &&
		strings.ContainsAny(n.Value, "0123456789") && plainNumber.MatchString(n.Value)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// boolean decodes true/false.
func (d *decoder) boolean(n *yaml.Node, path string) (bool, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.errf(n, path, "must be true or false, got %s", kindName(n))
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		d.errf(n, path, "invalid boolean %q", n.Value)
		return false, false
	}
	return b, true
}

// durationMs decodes a millisecond value (float allowed) into an exact
// duration (wait-and-widen.md §1.4): ≥ 0, not NaN, within range.
func (d *decoder) durationMs(n *yaml.Node, path string) (float64, bool) {
	f, ok := d.float(n, path)
	if !ok {
		return 0, false
	}
	if _, ok := lb.DurationFromMs(f); !ok {
		d.errf(n, path, "must be a finite number of milliseconds ≥ 0, got %s", resolve(n).Value)
		return 0, false
	}
	return f, true
}

// strList decodes a list of strings.
func (d *decoder) strList(n *yaml.Node, path string) ([]string, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.errf(n, path, "must be a list of strings, got %s", kindName(n))
		return nil, false
	}
	out := make([]string, 0, len(n.Content))
	ok := true
	for i, c := range n.Content {
		s, k := d.str(c, fmt.Sprintf("%s[%d]", path, i))
		ok = ok && k
		out = append(out, s)
	}
	return out, ok
}

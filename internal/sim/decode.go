package sim

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/suggest"
)

// InputError is a problem in a scenario, trace or policy file: what is
// wrong and where (File, 1-based Line and Col with 0 for unknown, and the
// field path, e.g. `clusters[2].prefill_tps`, "" for the whole document).
// It is the same type as formats.Error, whose Error method renders
// "file:line:col: path: message".
type InputError = formats.Error

// pos is a 1-based line and column.
type pos struct{ line, col int }

// decoder maps YAML nodes onto Go structs through their `yaml` tags,
// rejecting unknown and duplicate fields and recording the position of
// every decoded value by field path, so that later checks can point at
// the value they reject.
type decoder struct {
	file   string
	pos    map[string]pos
	budget int // nodes left to visit (alias expansion guard)
	// errs collects the problems found so far: decoding goes on after a
	// bad field, and the checks report every value they reject, so that
	// one run names all of a file's problems (as validate does).
	errs []error
}

// maxReported bounds the problems one scenario reports.
const maxReported = 100

// report records a problem at path (errPath's position).
func (d *decoder) report(path, format string, args ...any) {
	if len(d.errs) < maxReported {
		d.errs = append(d.errs, d.errPath(path, format, args...))
	}
}

// collected returns the recorded problems, nil when there are none: the
// first as an *InputError when there is one, several as a ScenarioErrors.
func (d *decoder) collected() error {
	var out ScenarioErrors
	seen := map[string]bool{}
	for _, e := range d.errs {
		if m := e.Error(); !seen[m] {
			seen[m] = true
			out = append(out, e)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

// ScenarioErrors are all the problems of a scenario file, in file order of
// the checks (at most 100). Error prints one per line; errors.As finds the
// first *InputError.
type ScenarioErrors []error

func (e ScenarioErrors) Error() string {
	var b strings.Builder
	for i, x := range e {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(x.Error())
	}
	return b.String()
}

// Unwrap returns the problems (errors.As and errors.Is look at each).
func (e ScenarioErrors) Unwrap() []error { return e }

// yamlDecoder is implemented by types with their own YAML form (e.g. a
// distribution given as a plain number or as a mapping).
type yamlDecoder interface {
	decodeYAML(d *decoder, n *yaml.Node, path string) error
}

// defaulter is implemented by structs that set their defaults before
// decoding.
type defaulter interface{ setDefaults() }

// keyedStruct is implemented (on the pointer) by structs with a field
// whose key is a constant kept elsewhere, which a struct tag cannot name
// (SeedKey, an lb-config field's registry name): that field is tagged
// `yaml:"-"` and keyedFields gives its key and its address in the
// receiver. The decoder, --set and the known-field lists of errors treat
// it as a field of that key.
type keyedStruct interface{ keyedFields() []keyedField }

// keyedField is one field of a keyedStruct: its key and a pointer to it.
type keyedField struct {
	key string
	ptr any
}

var (
	yamlDecoderType = reflect.TypeFor[yamlDecoder]()
	defaulterType   = reflect.TypeFor[defaulter]()
	keyedStructType = reflect.TypeFor[keyedStruct]()
	nodePtrType     = reflect.TypeFor[*yaml.Node]()
)

func newDecoder(file string) *decoder {
	return &decoder{file: file, pos: map[string]pos{}, budget: 1_000_000}
}

func (d *decoder) errAt(n *yaml.Node, path, format string, args ...any) error {
	e := &InputError{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	return e
}

// errPath reports an error at the recorded position of path (or of its
// closest recorded parent).
func (d *decoder) errPath(path, format string, args ...any) error {
	e := &InputError{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	for p := path; ; {
		if at, ok := d.pos[p]; ok {
			e.Line, e.Col = at.line, at.col
			break
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			if at, ok := d.pos[""]; ok {
				e.Line, e.Col = at.line, at.col
			}
			break
		}
		p = p[:i]
	}
	return e
}

// resolve follows document and alias nodes.
func (d *decoder) resolve(n *yaml.Node, path string) (*yaml.Node, error) {
	for depth := 0; n != nil; depth++ {
		if depth > 64 {
			return nil, d.errAt(n, path, "aliases nested too deeply")
		}
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil, nil
			}
			n = n.Content[0]
		case yaml.AliasNode:
			n = n.Alias
		default:
			return n, nil
		}
	}
	return nil, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// applyDefaults calls setDefaults on v (a struct) and, recursively, on its
// struct-typed fields, inner ones first so that an outer default wins.
func applyDefaults(v reflect.Value) {
	if v.Kind() != reflect.Struct {
		return
	}
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).IsExported() && v.Field(i).Kind() == reflect.Struct {
			applyDefaults(v.Field(i))
		}
	}
	if v.CanAddr() && v.Addr().Type().Implements(defaulterType) {
		v.Addr().Interface().(defaulter).setDefaults()
	}
}

// decode decodes n into v (addressable). A null value leaves v unchanged
// (its default).
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	d.budget--
	if d.budget < 0 {
		return d.errAt(n, path, "document too large or too many alias expansions")
	}
	n, err := d.resolve(n, path)
	if err != nil || n == nil {
		return err
	}
	d.pos[path] = pos{n.Line, n.Column}
	if v.Type() == nodePtrType {
		if !isNull(n) {
			v.Set(reflect.ValueOf(n))
		}
		return nil
	}
	if v.Addr().Type().Implements(yamlDecoderType) {
		if isNull(n) {
			return nil
		}
		return v.Addr().Interface().(yamlDecoder).decodeYAML(d, n, path)
	}
	if isNull(n) {
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		applyDefaults(nv.Elem())
		if err := d.decode(n, nv.Elem(), path); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	case reflect.Struct:
		return d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errAt(n, path, "want a list, got %s", describe(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			applyDefaults(s.Index(i))
			if err := d.decode(c, s.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	}
	return d.decodeScalar(n, v, path)
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "an unsupported node"
}

// fieldIndex maps the keys of a struct type (yaml tag names and
// keyedStruct keys) to field indices; names are the keys, sorted.
func fieldIndex(t reflect.Type) (map[string]int, []string) {
	idx := map[string]int{}
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		idx[tag] = i
		names = append(names, tag)
	}
	if reflect.PointerTo(t).Implements(keyedStructType) {
		v := reflect.New(t)
		for _, kf := range v.Interface().(keyedStruct).keyedFields() {
			i := fieldAt(v.Elem(), kf.ptr)
			if i < 0 {
				panic(fmt.Sprintf("sim: %s.keyedFields: %q does not point at a field of the receiver", t, kf.key))
			}
			idx[kf.key] = i
			names = append(names, kf.key)
		}
	}
	sort.Strings(names)
	return idx, names
}

// fieldAt returns the index of the field of the addressable struct v
// that ptr points at, -1 when none.
func fieldAt(v reflect.Value, ptr any) int {
	p := reflect.ValueOf(ptr)
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.Addr().Pointer() == p.Pointer() && f.Type() == p.Type().Elem() {
			return i
		}
	}
	return -1
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errAt(n, path, "want a mapping, got %s", describe(n))
	}
	idx, names := fieldIndex(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errs = append(d.errs, d.errAt(k, path, "field names must be plain strings"))
			continue
		}
		name := k.Value
		fp := name
		if path != "" {
			fp = path + "." + name
		}
		fi, ok := idx[name]
		if !ok {
			d.errs = append(d.errs, d.errAt(k, fp, "unknown field %q%s (known: %s)", name, suggest.DidYouMean(name, names), strings.Join(names, ", ")))
			continue
		}
		if seen[name] {
			d.errs = append(d.errs, d.errAt(k, fp, "duplicate field %q", name))
			continue
		}
		seen[name] = true
		if err := d.decode(val, v.Field(fi), fp); err != nil {
			if d.budget < 0 || len(d.errs) >= maxReported {
				return err // stop: the document is too large
			}
			d.errs = append(d.errs, err)
		}
	}
	return nil
}

func (d *decoder) decodeScalar(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode {
		return d.errAt(n, path, "want a %s, got %s", kindName(v.Kind()), describe(n))
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
		return nil
	case reflect.Bool:
		var b bool
		if n.Tag != "!!bool" || n.Decode(&b) != nil {
			return d.errAt(n, path, "want true or false, got %q", n.Value)
		}
		v.SetBool(b)
		return nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		var x int64
		if n.Tag != "!!int" || n.Decode(&x) != nil {
			return d.errAt(n, path, "want an integer, got %q", n.Value)
		}
		if v.OverflowInt(x) {
			return d.errAt(n, path, "integer %s out of range", n.Value)
		}
		v.SetInt(x)
		return nil
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		var x uint64
		if n.Tag != "!!int" || n.Decode(&x) != nil {
			return d.errAt(n, path, "want a non-negative integer, got %q", n.Value)
		}
		if v.OverflowUint(x) {
			return d.errAt(n, path, "integer %s out of range", n.Value)
		}
		v.SetUint(x)
		return nil
	case reflect.Float64:
		var f float64
		if (n.Tag != "!!int" && n.Tag != "!!float") || n.Decode(&f) != nil {
			return d.errAt(n, path, "want a number, got %q", n.Value)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return d.errAt(n, path, "want a finite number, got %q", n.Value)
		}
		v.SetFloat(f)
		return nil
	}
	return d.errAt(n, path, "unsupported field type %s", v.Type())
}

func kindName(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64, reflect.Uint32, reflect.Uint:
		return "integer"
	case reflect.Float64:
		return "number"
	}
	return "value"
}

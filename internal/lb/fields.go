package lb

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
)

// This file is the lb-config field registry: every field a detailed entry
// may hold is described once, by one Field value (lb-config.md §6, §7.1,
// §12 X3/X4; config.rs of NVIDIA/nvcf: RawCommonAlgorithmConfig,
// PowerOfNAlgorithmConfig, WaitAndWidenAlgorithmConfig and the Pulsar
// variants). Validation (typing, applicability, router rejections),
// routing expressions, DefaultAlgorithmConfig, migrate's dropped and copied
// lists, explain's settings line, the test generator and the generated
// field matrix in docs/validate.md all read it. A test fails when a field
// of AlgorithmConfig has no row. A row does not spell its field's name:
// register takes it from the json tag of the AlgorithmConfig field the
// row's accessor points at, so the struct tag is the name's one home.

// ValueType is the serde type of a field's JSON value (lb-config.md §7.1).
type ValueType uint8

// The value types of lb-config fields.
const (
	// TypeBool is Option<bool>: true or false.
	TypeBool ValueType = iota + 1
	// TypeString is Option<String>: any JSON string.
	TypeString
	// TypeU64 is Option<u64>: a JSON integer literal 0 … 2^64−1.
	TypeU64
	// TypeUsize is usize or Option<usize>: as TypeU64, named usize in
	// Stargate's messages.
	TypeUsize
	// TypeF64 is Option<f64>: any JSON number.
	TypeF64
	// TypeComparator is the ClusterComparator enum (Comparator).
	TypeComparator
	// TypeWeight is the PulsarRendezvousWeight enum (RendezvousWeight).
	TypeWeight
	// TypeMap is the request_algorithms map (lb-config.md §5).
	TypeMap
)

var valueTypeNames = [...]string{TypeBool: "bool", TypeString: "string", TypeU64: "u64", TypeUsize: "usize",
	TypeF64: "f64", TypeComparator: "enum", TypeWeight: "enum", TypeMap: "map"}

// String names the type as lb-config.md §7.1 does ("u64", "usize", "f64",
// "bool", "string", "enum", "map").
func (t ValueType) String() string {
	if int(t) >= len(valueTypeNames) || valueTypeNames[t] == "" {
		return "invalid"
	}
	return valueTypeNames[t]
}

// AlgorithmSet is a set of algorithms (bit a set for Algorithm a).
type AlgorithmSet uint8

// SetOf returns the set holding as.
func SetOf(as ...Algorithm) AlgorithmSet {
	var s AlgorithmSet
	for _, a := range as {
		s |= 1 << a
	}
	return s
}

// Has reports whether a is in the set.
func (s AlgorithmSet) Has(a Algorithm) bool { return a < 8 && s&(1<<a) != 0 }

// Algorithms lists the set's algorithms in canonical order.
func (s AlgorithmSet) Algorithms() []Algorithm {
	var out []Algorithm
	for _, a := range Algorithms {
		if s.Has(a) {
			out = append(out, a)
		}
	}
	return out
}

// Algorithm sets the registry rows use.
var (
	allAlgorithms = SetOf(Algorithms[:]...)
	waitFamily    = SetOf(WaitAndWiden, PulsarWaitAndWiden)
	pulsarFamily  = SetOf(Pulsar, PulsarWaitAndWiden)
)

// Range is the inclusive range Stargate enforces on a field's value at
// startup (rules V16, V17) and in routing expressions (X4).
type Range struct {
	// Min and Max are the inclusive bounds, in the field's unit.
	Min, Max float64
	// Message is Stargate's text for a value outside the range, without
	// the ", got VALUE" suffix both callers append.
	Message string
}

// Contains reports whether x is within the range (NaN is not).
func (r *Range) Contains(x float64) bool { return x >= r.Min && x <= r.Max }

// Field is one registry row: everything lcctl knows about one lb-config
// field of a detailed entry.
type Field struct {
	// Name is the JSON key, also the routing-expression parameter name.
	// register sets it from the json tag of the AlgorithmConfig field the
	// row's accessor points at (the name before any ",omitempty"): the
	// struct tag is the name's one home, and a row never spells it.
	Name string
	// Aliases are further keys serde accepts for the field (none in the
	// config.rs lcctl reproduces; a row that gains one is found under it
	// by FieldByName).
	Aliases []string
	// Type is the value's serde type.
	Type ValueType
	// Unit is the value's unit ("ms", "s", "requests", …; "" when none).
	Unit string
	// Default is Stargate's default as lb-config.md §6 writes it ("2",
	// "0.25", "ttft"; "unset" for an optional field without one). The
	// defaults of DefaultAlgorithmConfig are parsed from it.
	Default string
	// NullRejected is true when JSON null is an error (sample_count, the
	// enums) rather than the same as an absent field.
	NullRejected bool
	// Range is the range Stargate checks (V16, V17, X4); nil when the
	// value is not range-checked.
	Range *Range
	// Parsed are the algorithms whose parser accepts the field
	// (matrix §6.7: ✓ and R).
	Parsed AlgorithmSet
	// RouterRejects are the algorithms whose router construction refuses
	// a non-null value after parsing (R: V20, V21).
	RouterRejects AlgorithmSet
	// RouterMessage is Stargate's text for that refusal.
	RouterMessage string
	// Expression are the algorithms whose routing expressions may set the
	// field (§12 X3); empty when it is not an expression parameter.
	Expression AlgorithmSet
	// ExprPositive is true when a routing-expression value of 0 (or, for a
	// number, ≤ 0) has no effect: inert_value (X4).
	ExprPositive bool
	// ExprMax, when non-zero, is the largest integer a routing expression
	// may set (X4: cache_affinity_virtual_nodes ≤ 1024).
	ExprMax uint64
	// Normalize is the smallest value a stored integer is raised to (n and
	// cache_affinity_virtual_nodes: 0 becomes 1, §6.3); 0 for none.
	Normalize uint64
	// Summary is true when the field is shown on explain's settings line
	// by name when set (docs/explain.md, Part 1).
	Summary bool
	// at returns a pointer to the field in c: *bool, *string, *int,
	// *uint64, **uint64, *float64, **float64, *Comparator,
	// *RendezvousWeight or *map[Algorithm]*AlgorithmConfig.
	at func(c *AlgorithmConfig) any
}

// Common reports whether every algorithm parses the field (§6.1).
func (f *Field) Common() bool { return f.Parsed == allAlgorithms }

// Accepted reports whether a detailed entry of algorithm a may hold the
// field (✓ in lb-config.md §6.7; R and P are false).
func (f *Field) Accepted(a Algorithm) bool { return f.Parsed.Has(a) && !f.RouterRejects.Has(a) }

// fields is the registry in documentation order; it is filled by register
// while the package initialises and never changes afterwards.
var fields []*Field

// register adds a row to the registry, named by newField.
func register(f Field) *Field {
	p := newField(f)
	fields = append(fields, p)
	return p
}

// newField returns the row f with its Name set from the json tag of the
// AlgorithmConfig field f.at points at. It panics, naming the row's
// source line, when the accessor does not return a pointer to a
// json-named field of AlgorithmConfig: a programming error of the
// registry, found when the package initialises (and by
// TestFieldNameFromTag).
func newField(f Field) *Field {
	if f.at == nil {
		panic("lb: field registry: a row has no accessor")
	}
	var probe AlgorithmConfig
	name, err := jsonFieldName(&probe, f.at(&probe))
	if err != nil {
		fn := runtime.FuncForPC(reflect.ValueOf(f.at).Pointer())
		file, line := fn.FileLine(fn.Entry())
		panic(fmt.Sprintf("lb: field registry: the row at %s:%d: %v", filepath.Base(file), line, err))
	}
	f.Name = name
	return &f
}

// jsonFieldName returns the JSON name (its json tag up to the first
// comma) of the field of the struct *structPtr whose address is ptr. The
// error says what ptr is instead: not a pointer, not the address of a
// field of that type, or a field without a JSON name (no tag, "-").
func jsonFieldName(structPtr, ptr any) (string, error) {
	s := reflect.ValueOf(structPtr).Elem()
	p := reflect.ValueOf(ptr)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return "", fmt.Errorf("its accessor returns %T, not a pointer to a field of %s", ptr, s.Type())
	}
	for i := range s.NumField() {
		sf := s.Type().Field(i)
		if sf.Type != p.Type().Elem() || s.Field(i).Addr().Pointer() != p.Pointer() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			return "", fmt.Errorf("its accessor points at %s.%s, which has no JSON name in its json tag", s.Type(), sf.Name)
		}
		return name, nil
	}
	return "", fmt.Errorf("its accessor returns a %s that is not the address of a field of %s", p.Type(), s.Type())
}

// Fields returns every registry row in documentation order. The slice is
// shared: callers must not modify it.
func Fields() []*Field { return fields }

// FieldByName returns the row for a JSON key (a name or an alias), or nil.
func FieldByName(name string) *Field { return fieldIndex[name] }

// fieldIndex maps names and aliases to rows; built by init, after every
// register call has run.
var fieldIndex map[string]*Field

// The registry. Common fields (§6.1).
var (
	// FieldRequireCacheAffinityKey is require_cache_affinity_key (H8).
	FieldRequireCacheAffinityKey = register(Field{Type: TypeBool, Default: "false",
		Parsed: allAlgorithms, Expression: allAlgorithms, Summary: true,
		at: func(c *AlgorithmConfig) any { return &c.RequireCacheAffinityKey }})
	// FieldRequireInputTokens is require_input_tokens (declarative).
	FieldRequireInputTokens = register(Field{Type: TypeBool, Default: "false",
		Parsed: allAlgorithms, Expression: allAlgorithms,
		at: func(c *AlgorithmConfig) any { return &c.RequireInputTokens }})
	// FieldMaxInputWorkSeconds is max_input_work_seconds (s; input-work
	// admission, wait-and-widen.md §3.7).
	FieldMaxInputWorkSeconds = register(Field{Type: TypeF64, Unit: "s", Default: "unset",
		Parsed: allAlgorithms, Expression: allAlgorithms, ExprPositive: true, Summary: true,
		at: func(c *AlgorithmConfig) any { return &c.MaxInputWorkSeconds }})
	// FieldRequestAlgorithms is an entry's request_algorithms map (§5;
	// only a models entry's map is used, E3.2).
	FieldRequestAlgorithms = register(Field{Type: TypeMap, Default: "{}",
		Parsed: allAlgorithms,
		at:     func(c *AlgorithmConfig) any { return &c.RequestAlgorithms }})

	// FieldSampleCount is power-of-n's sample_count (candidates, 1–64, V16).
	FieldSampleCount = register(Field{Type: TypeUsize, Unit: "candidates", Default: "2", NullRejected: true,
		Range:  &Range{Min: 1, Max: 64, Message: "power-of-n sample_count must be between 1 and 64"},
		Parsed: SetOf(PowerOfN), Expression: SetOf(PowerOfN),
		at: func(c *AlgorithmConfig) any { return &c.SampleCount }})
	// FieldComparator is comparator (power-of-n, wait-and-widen; refused
	// by pulsar-wait-and-widen's router, V20).
	FieldComparator = register(Field{Type: TypeComparator, Default: "ttft", NullRejected: true,
		Parsed: SetOf(PowerOfN, WaitAndWiden, PulsarWaitAndWiden), RouterRejects: SetOf(PulsarWaitAndWiden),
		RouterMessage: "comparator is not supported for pulsar-wait-and-widen",
		Expression:    SetOf(PowerOfN, WaitAndWiden),
		at:            func(c *AlgorithmConfig) any { return &c.Comparator }})
	// FieldSeed is seed, the ring / ranking hash seed.
	FieldSeed = register(Field{Type: TypeString, Default: "unset",
		Parsed: SetOf(WaitAndWiden, Pulsar, PulsarWaitAndWiden), Expression: SetOf(WaitAndWiden, Pulsar, PulsarWaitAndWiden),
		at: func(c *AlgorithmConfig) any { return &c.Seed }})

	// Pulsar fields (§6.5).

	// FieldConsiderKVFreeTokens is consider_kv_free_tokens.
	FieldConsiderKVFreeTokens = register(Field{Type: TypeBool, Default: "false",
		Parsed: pulsarFamily, Expression: pulsarFamily,
		at: func(c *AlgorithmConfig) any { return &c.ConsiderKVFreeTokens }})
	// FieldRendezvousWeight is rendezvous_weight (not an expression
	// parameter in the newest expression code found, X3).
	FieldRendezvousWeight = register(Field{Type: TypeWeight, Default: "max-input-tps", NullRejected: true,
		Parsed: pulsarFamily,
		at:     func(c *AlgorithmConfig) any { return &c.RendezvousWeight }})

	// wait-and-widen and pulsar-wait-and-widen fields (§6.3, §6.6).

	// FieldN is n, wait-and-widen's sample count (0 is read as 1).
	FieldN = register(Field{Type: TypeUsize, Unit: "candidates", Default: "2", Normalize: 1,
		Parsed: waitFamily, Expression: waitFamily, ExprPositive: true,
		at: func(c *AlgorithmConfig) any { return &c.N }})
	// FieldMaxQueued is max_queued (requests above max_engine_concurrency).
	FieldMaxQueued = register(Field{Type: TypeU64, Unit: "requests", Default: "0",
		Parsed: waitFamily, Expression: waitFamily,
		at: func(c *AlgorithmConfig) any { return &c.MaxQueued }})
	// FieldMaxQueueTimeFloorMs is max_queue_time_floor_ms (ms; the queue
	// SLO applies only with the ceiling too).
	FieldMaxQueueTimeFloorMs = register(Field{Type: TypeU64, Unit: "ms", Default: "unset",
		Parsed: waitFamily, Expression: waitFamily,
		at: func(c *AlgorithmConfig) any { return &c.MaxQueueTimeFloorMs }})
	// FieldMaxQueueTimeCeilMs is max_queue_time_ceil_ms (ms).
	FieldMaxQueueTimeCeilMs = register(Field{Type: TypeU64, Unit: "ms", Default: "unset",
		Parsed: waitFamily, Expression: waitFamily,
		at: func(c *AlgorithmConfig) any { return &c.MaxQueueTimeCeilMs }})
	// FieldTTFTBucketSizeMs is ttft_bucket_size_ms (ms; 0 accepted, W9).
	FieldTTFTBucketSizeMs = register(Field{Type: TypeU64, Unit: "ms", Default: "20",
		Parsed: waitFamily, Expression: waitFamily, ExprPositive: true,
		at: func(c *AlgorithmConfig) any { return &c.TTFTBucketSizeMs }})
	// FieldNextBucketUnlockFactor is next_bucket_unlock_factor (fraction
	// of a TTFT gap; not range-checked, W10).
	FieldNextBucketUnlockFactor = register(Field{Type: TypeF64, Default: "0.25",
		Parsed: waitFamily, Expression: waitFamily,
		at: func(c *AlgorithmConfig) any { return &c.NextBucketUnlockFactor }})
	// FieldIgnoreQueueTime is ignore_queue_time (bucket TTFT only).
	FieldIgnoreQueueTime = register(Field{Type: TypeBool, Default: "false",
		Parsed: waitFamily, Expression: waitFamily, Summary: true,
		at: func(c *AlgorithmConfig) any { return &c.IgnoreQueueTime }})
	// FieldIgnoreInputProcessingTime is ignore_input_processing_time
	// (bucket TTFT only).
	FieldIgnoreInputProcessingTime = register(Field{Type: TypeBool, Default: "false",
		Parsed: waitFamily, Expression: waitFamily, Summary: true,
		at: func(c *AlgorithmConfig) any { return &c.IgnoreInputProcessingTime }})
	// FieldCacheAffinityVirtualNodes is cache_affinity_virtual_nodes
	// (virtual nodes per cluster; 0 is read as 1; ignored by
	// pulsar-wait-and-widen, W6).
	FieldCacheAffinityVirtualNodes = register(Field{Type: TypeUsize, Unit: "virtual nodes", Default: "150", Normalize: 1,
		Parsed: waitFamily, Expression: SetOf(WaitAndWiden), ExprPositive: true, ExprMax: 1024,
		at: func(c *AlgorithmConfig) any { return &c.CacheAffinityVirtualNodes }})
	// FieldCacheAffinityBackendSelectionCount is
	// cache_affinity_backend_selection_count, k (clusters).
	FieldCacheAffinityBackendSelectionCount = register(Field{Type: TypeUsize, Unit: "clusters", Default: "unset",
		Parsed: waitFamily, Expression: waitFamily, ExprPositive: true,
		at: func(c *AlgorithmConfig) any { return &c.CacheAffinityBackendSelectionCount }})
	// FieldCacheAffinityInputTokensScale is
	// cache_affinity_input_tokens_scale, s (0.0–1.0, V17).
	FieldCacheAffinityInputTokensScale = register(Field{Type: TypeF64, Default: "1.0",
		Range:  &Range{Min: 0, Max: 1, Message: "cache_affinity_input_tokens_scale must be between 0.0 and 1.0"},
		Parsed: waitFamily, Expression: waitFamily,
		at: func(c *AlgorithmConfig) any { return &c.CacheAffinityInputTokensScale }})
	// FieldCacheAffinityWaitMs is cache_affinity_wait_ms, X (ms).
	FieldCacheAffinityWaitMs = register(Field{Type: TypeU64, Unit: "ms", Default: "0",
		Parsed: waitFamily, Expression: waitFamily,
		at: func(c *AlgorithmConfig) any { return &c.CacheAffinityWaitMs }})
	// FieldLastClusterAffinity is last_cluster_affinity (session rules,
	// session.md; not an expression parameter, X3).
	FieldLastClusterAffinity = register(Field{Type: TypeBool, Default: "false",
		Parsed: waitFamily,
		at:     func(c *AlgorithmConfig) any { return &c.LastClusterAffinity }})

	// pulsar-wait-and-widen only (§6.6); wait-and-widen parses and then
	// refuses them (V21).

	// FieldBandWidenIntervalMs is band_widen_interval_ms, S (ms; unset
	// means the request's effective affinity wait).
	FieldBandWidenIntervalMs = register(Field{Type: TypeU64, Unit: "ms", Default: "unset",
		Parsed: waitFamily, RouterRejects: SetOf(WaitAndWiden),
		RouterMessage: "band_widen_interval_ms is supported only for pulsar-wait-and-widen, not wait-and-widen",
		Expression:    SetOf(PulsarWaitAndWiden),
		at:            func(c *AlgorithmConfig) any { return &c.BandWidenIntervalMs }})
	// FieldFallbackMaxQueued is fallback_max_queued (requests; max_queued
	// of the open set after the wait).
	FieldFallbackMaxQueued = register(Field{Type: TypeU64, Unit: "requests", Default: "0",
		Parsed: waitFamily, RouterRejects: SetOf(WaitAndWiden),
		RouterMessage: "fallback_max_queued is supported only for pulsar-wait-and-widen, not wait-and-widen",
		Expression:    SetOf(PulsarWaitAndWiden),
		at:            func(c *AlgorithmConfig) any { return &c.FallbackMaxQueued }})
)

// SetBool stores b in a TypeBool field of c.
func (f *Field) SetBool(c *AlgorithmConfig, b bool) { *f.at(c).(*bool) = b }

// SetString stores s in a TypeString field of c.
func (f *Field) SetString(c *AlgorithmConfig, s string) { *f.at(c).(*string) = s }

// SetUint stores u in a TypeU64 or TypeUsize field of c: raised to
// Normalize, clamped to the largest int for an int field, and stored
// behind a fresh pointer for an optional field.
func (f *Field) SetUint(c *AlgorithmConfig, u uint64) {
	u = max(u, f.Normalize)
	switch p := f.at(c).(type) {
	case *uint64:
		*p = u
	case **uint64:
		v := u // allocated only here: u itself stays on the stack
		*p = &v
	case *int:
		*p = int(min(u, math.MaxInt))
	default:
		panic(fmt.Sprintf("lb: %s is not an unsigned field", f.Name))
	}
}

// SetFloat stores x in a TypeF64 field of c (behind a fresh pointer for
// an optional field).
func (f *Field) SetFloat(c *AlgorithmConfig, x float64) {
	switch p := f.at(c).(type) {
	case *float64:
		*p = x
	case **float64:
		v := x
		*p = &v
	default:
		panic(fmt.Sprintf("lb: %s is not a number field", f.Name))
	}
}

// SetComparator stores cmp in the TypeComparator field of c.
func (f *Field) SetComparator(c *AlgorithmConfig, cmp Comparator) { *f.at(c).(*Comparator) = cmp }

// SetWeight stores w in the TypeWeight field of c.
func (f *Field) SetWeight(c *AlgorithmConfig, w RendezvousWeight) { *f.at(c).(*RendezvousWeight) = w }

// Bool returns a TypeBool field of c.
func (f *Field) Bool(c *AlgorithmConfig) bool { return *f.at(c).(*bool) }

// Uint returns an unsigned field of c; ok is false when an optional field
// is unset.
func (f *Field) Uint(c *AlgorithmConfig) (u uint64, ok bool) {
	switch p := f.at(c).(type) {
	case *uint64:
		return *p, true
	case **uint64:
		if *p == nil {
			return 0, false
		}
		return **p, true
	case *int:
		return uint64(max(*p, 0)), true
	}
	panic(fmt.Sprintf("lb: %s is not an unsigned field", f.Name))
}

// Float returns a TypeF64 field of c; ok is false when an optional field
// is unset.
func (f *Field) Float(c *AlgorithmConfig) (x float64, ok bool) {
	switch p := f.at(c).(type) {
	case *float64:
		return *p, true
	case **float64:
		if *p == nil {
			return 0, false
		}
		return **p, true
	}
	panic(fmt.Sprintf("lb: %s is not a number field", f.Name))
}

// Text renders a field's value of c the way lb-config writes it ("4",
// "0.25", "true", "ttft", the seed as is); ok is false for an unset
// optional (pointer) field and for the request_algorithms map. A field
// whose "unset" is its zero value (seed, k) reads as "" or "0".
func (f *Field) Text(c *AlgorithmConfig) (s string, ok bool) {
	switch f.Type {
	case TypeBool:
		return strconv.FormatBool(f.Bool(c)), true
	case TypeString:
		return *f.at(c).(*string), true
	case TypeU64, TypeUsize:
		u, ok := f.Uint(c)
		return strconv.FormatUint(u, 10), ok
	case TypeF64:
		x, ok := f.Float(c)
		return strconv.FormatFloat(x, 'g', -1, 64), ok
	case TypeComparator:
		return f.at(c).(*Comparator).String(), true
	case TypeWeight:
		return f.at(c).(*RendezvousWeight).String(), true
	}
	return "", false
}

// setText stores the lb-config text s (a registry Default) in c.
func (f *Field) setText(c *AlgorithmConfig, s string) error {
	switch f.Type {
	case TypeBool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		f.SetBool(c, b)
	case TypeString:
		f.SetString(c, s)
	case TypeU64, TypeUsize:
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return err
		}
		f.SetUint(c, u)
	case TypeF64:
		x, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		f.SetFloat(c, x)
	case TypeComparator:
		cmp, ok := ParseComparator(s)
		if !ok {
			return fmt.Errorf("unknown comparator %q", s)
		}
		f.SetComparator(c, cmp)
	case TypeWeight:
		w, ok := ParseRendezvousWeight(s)
		if !ok {
			return fmt.Errorf("unknown rendezvous weight %q", s)
		}
		f.SetWeight(c, w)
	default:
		return fmt.Errorf("no default text for a %s", f.Type)
	}
	return nil
}

// defaultConfigs are the string-form settings per algorithm, built by
// init from the registry defaults.
var defaultConfigs [len(canonicalNames)]AlgorithmConfig

// optionalFields are the rows whose value sits behind a pointer (unset is
// nil), built by init; cloneConfig copies them.
var optionalFields []*Field

func init() {
	var probe AlgorithmConfig
	for _, f := range fields {
		switch f.at(&probe).(type) {
		case **uint64, **float64:
			optionalFields = append(optionalFields, f)
		}
	}
	fieldIndex = make(map[string]*Field, len(fields))
	for _, f := range fields {
		fieldIndex[f.Name] = f
		for _, a := range f.Aliases {
			fieldIndex[a] = f
		}
	}
	for _, a := range Algorithms {
		c := AlgorithmConfig{Algorithm: a}
		for _, f := range fields {
			if !f.Parsed.Has(a) || f.Default == "unset" || f.Type == TypeMap {
				continue
			}
			if err := f.setText(&c, f.Default); err != nil {
				panic(fmt.Sprintf("lb: field %s: default %q: %v", f.Name, f.Default, err))
			}
		}
		defaultConfigs[a] = c
	}
}

// ExpressionParameter reports whether name is a routing-expression
// parameter of any algorithm (X3: otherwise unknown_parameter).
func ExpressionParameter(name string) bool {
	f := FieldByName(name)
	return f != nil && f.Expression != 0
}

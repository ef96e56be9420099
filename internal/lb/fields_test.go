package lb

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestFieldRegistryCoversConfig fails when a field of AlgorithmConfig has
// no registry row, when two rows point at one field, when a row's name is
// not the JSON name of the field it points at, or when the field's Go type
// does not fit the row's ValueType.
func TestFieldRegistryCoversConfig(t *testing.T) {
	var c AlgorithmConfig
	base := uintptr(unsafe.Pointer(&c))
	byOffset := map[uintptr]*Field{}
	for _, f := range Fields() {
		p := reflect.ValueOf(f.at(&c))
		if p.Kind() != reflect.Pointer {
			t.Fatalf("%s: accessor returns %s, want a pointer", f.Name, p.Kind())
		}
		off := p.Pointer() - base
		if prev := byOffset[off]; prev != nil {
			t.Errorf("%s and %s point at the same struct field", prev.Name, f.Name)
		}
		byOffset[off] = f
	}
	typ := reflect.TypeOf(c)
	wantType := map[reflect.Type][]ValueType{
		reflect.TypeOf(false):                            {TypeBool},
		reflect.TypeOf(""):                               {TypeString},
		reflect.TypeOf(0):                                {TypeUsize},
		reflect.TypeOf(uint64(0)):                        {TypeU64},
		reflect.TypeOf((*uint64)(nil)):                   {TypeU64},
		reflect.TypeOf(0.0):                              {TypeF64},
		reflect.TypeOf((*float64)(nil)):                  {TypeF64},
		reflect.TypeOf(Comparator(0)):                    {TypeComparator},
		reflect.TypeOf(RendezvousWeight(0)):              {TypeWeight},
		reflect.TypeOf(map[Algorithm]*AlgorithmConfig{}): {TypeMap},
	}
	rows := 0
	for i := range typ.NumField() {
		sf := typ.Field(i)
		if sf.Name == "Algorithm" || sf.Name == "Spelling" {
			continue // the entry's name, not a field of the detailed object
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		f := byOffset[sf.Offset]
		if f == nil {
			t.Errorf("AlgorithmConfig.%s (%q) has no row in the field registry (internal/lb/fields.go)", sf.Name, name)
			continue
		}
		rows++
		if f.Name != name {
			t.Errorf("row %s points at AlgorithmConfig.%s, whose JSON name is %q", f.Name, sf.Name, name)
		}
		if name == "" || strings.ContainsAny(name, ",\"-") {
			t.Errorf("AlgorithmConfig.%s: JSON name %q is not an lb-config key", sf.Name, name)
		}
		if types := wantType[sf.Type]; len(types) == 0 || types[0] != f.Type {
			t.Errorf("row %s: type %s does not fit Go type %s", f.Name, f.Type, sf.Type)
		}
		if FieldByName(f.Name) != f {
			t.Errorf("FieldByName(%q) does not return its row", f.Name)
		}
	}
	if rows != len(Fields()) {
		t.Errorf("%d rows point at AlgorithmConfig fields, the registry has %d", rows, len(Fields()))
	}
}

// TestFieldRegistryRules checks the rows against the rules of
// lb-config.md: router rejections only for parsed algorithms, expression
// parameters only for algorithms that accept the field (X3), the common
// fields on every algorithm.
func TestFieldRegistryRules(t *testing.T) {
	for _, f := range Fields() {
		if f.RouterRejects&^f.Parsed != 0 {
			t.Errorf("%s: rejected by a router of an algorithm that does not parse it", f.Name)
		}
		if (f.RouterRejects != 0) != (f.RouterMessage != "") {
			t.Errorf("%s: router rejection without its message, or the reverse", f.Name)
		}
		for _, a := range f.Expression.Algorithms() {
			if !f.Accepted(a) {
				t.Errorf("%s: an expression parameter of %s, which does not accept it", f.Name, a)
			}
		}
		if f.Type == TypeMap && f.Expression != 0 {
			t.Errorf("%s: a map cannot be an expression parameter", f.Name)
		}
	}
	for _, name := range []string{"require_cache_affinity_key", "require_input_tokens", "max_input_work_seconds", "request_algorithms"} {
		if f := FieldByName(name); f == nil || f.Parsed != allAlgorithms {
			t.Errorf("%s: not a common field (§6.1)", name)
		}
	}
}

// TestDefaultAlgorithmConfigFromRegistry checks the defaults built from
// the registry text against lb-config.md §6.2/6.3.
func TestDefaultAlgorithmConfigFromRegistry(t *testing.T) {
	p := DefaultAlgorithmConfig(PowerOfN)
	if p.SampleCount != 2 || p.Comparator != CompareTTFT || p.N != 0 {
		t.Errorf("power-of-n defaults: %+v", p)
	}
	for _, a := range []Algorithm{WaitAndWiden, PulsarWaitAndWiden} {
		w := DefaultAlgorithmConfig(a)
		if w.N != 2 || w.TTFTBucketSizeMs != 20 || w.NextBucketUnlockFactor != 0.25 || w.CacheAffinityVirtualNodes != 150 ||
			w.CacheAffinityInputTokensScale != 1.0 || w.SampleCount != 0 || w.MaxQueueTimeFloorMs != nil || w.BandWidenIntervalMs != nil {
			t.Errorf("%s defaults: %+v", a, w)
		}
	}
	if r := DefaultAlgorithmConfig(Random); !reflect.DeepEqual(r, AlgorithmConfig{Algorithm: Random}) {
		t.Errorf("random defaults: %+v", r)
	}
	if z := DefaultAlgorithmConfig(0); z.Algorithm != 0 || z.N != 0 {
		t.Errorf("zero algorithm: %+v", z)
	}
}

// TestFieldAccessRoundTrip stores every row's default text through the
// typed setters and reads it back through Text; an unset optional field
// reads as not set.
func TestFieldAccessRoundTrip(t *testing.T) {
	for _, f := range Fields() {
		var c AlgorithmConfig
		if f.Type == TypeMap {
			if _, ok := f.Text(&c); ok {
				t.Errorf("%s: a map has no text", f.Name)
			}
			continue
		}
		if f.Default == "unset" {
			// Optional fields read as not set; seed and k keep their
			// zero value for "unset" (§6.3: empty seed, k 0 = no group).
			if s, ok := f.Text(&c); ok && s != "" && s != "0" {
				t.Errorf("%s: unset by default, but Text reports %q", f.Name, s)
			}
			continue
		}
		if err := f.setText(&c, f.Default); err != nil {
			t.Fatalf("%s: %v", f.Name, err)
		}
		got, ok := f.Text(&c)
		if !ok {
			t.Errorf("%s: set to %q, Text reports unset", f.Name, f.Default)
			continue
		}
		if f.Type == TypeF64 {
			want, _ := strconv.ParseFloat(f.Default, 64)
			if x, _ := strconv.ParseFloat(got, 64); x != want {
				t.Errorf("%s: Text %q after setting %q", f.Name, got, f.Default)
			}
		} else if got != f.Default {
			t.Errorf("%s: Text %q after setting %q", f.Name, got, f.Default)
		}
	}
	var c AlgorithmConfig
	FieldN.SetUint(&c, 0)
	FieldMaxQueueTimeFloorMs.SetUint(&c, 7)
	FieldMaxInputWorkSeconds.SetFloat(&c, 2.5)
	if c.N != 1 || c.MaxQueueTimeFloorMs == nil || *c.MaxQueueTimeFloorMs != 7 || c.MaxInputWorkSeconds == nil || *c.MaxInputWorkSeconds != 2.5 {
		t.Errorf("setters: %+v", c)
	}
	if u, ok := FieldMaxQueueTimeCeilMs.Uint(&c); ok || u != 0 {
		t.Errorf("unset ceiling reads %d, %v", u, ok)
	}
}

// TestFieldNameFromTag checks how a row gets its name: for every row,
// jsonFieldName of its accessor is the row's Name (the tag before
// ",omitempty"); an accessor that points at no json-named field of the
// struct is an error, and newField panics on it naming the row's line.
func TestFieldNameFromTag(t *testing.T) {
	var c AlgorithmConfig
	for _, f := range Fields() {
		name, err := jsonFieldName(&c, f.at(&c))
		if err != nil || name != f.Name || name == "" {
			t.Errorf("row %q: jsonFieldName = %q, %v", f.Name, name, err)
		}
	}
	if FieldMaxQueueTimeFloorMs.Name != "max_queue_time_floor_ms" {
		t.Errorf("a tag with ,omitempty: name %q", FieldMaxQueueTimeFloorMs.Name)
	}

	type probe struct {
		Tagged   int `json:"tagged,omitempty"`
		Untagged int
		Skipped  int `json:"-"`
		Other    string
	}
	var p probe
	outside := 0
	for _, tc := range []struct {
		ptr       any
		want, err string
	}{
		{&p.Tagged, "tagged", ""},
		{&p.Untagged, "", "probe.Untagged, which has no JSON name"},
		{&p.Skipped, "", "probe.Skipped, which has no JSON name"},
		{&outside, "", "returns a *int that is not the address of a field of lb.probe"},
		{(*int)(unsafe.Pointer(&p.Other)), "", "returns a *int that is not the address of a field"}, // right address, wrong type
		{p.Tagged, "", "returns int, not a pointer"},
		{(*int)(nil), "", "returns *int, not a pointer"},
	} {
		got, err := jsonFieldName(&p, tc.ptr)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("jsonFieldName(%T) = %q, %v; want %q, error containing %q", tc.ptr, got, err, tc.want, tc.err)
		}
	}

	defer func() {
		msg, _ := recover().(string)
		if !strings.Contains(msg, "lb: field registry: the row at fields_test.go:") || !strings.Contains(msg, "not the address of a field of lb.AlgorithmConfig") {
			t.Errorf("newField with a bad accessor: panic %q", msg)
		}
	}()
	newField(Field{Type: TypeBool, at: func(*AlgorithmConfig) any { return new(bool) }})
	t.Error("newField accepted an accessor that points outside AlgorithmConfig")
}

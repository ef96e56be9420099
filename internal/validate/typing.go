package validate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lcctl/lcctl/internal/lb"
)

// Typing of the fields of a detailed entry (lb-config.md §7.1, V11–V17),
// driven by the rows of the lb field registry.

const comparatorVariants = "expected one of `ttft`, `queue-time`, `input-work-seconds`, `utilization`, `num-requests-queued`"

const weightVariants = "expected `last-mean-input-tps` or `max-input-tps`"

// typeField checks one accepted field's type (lb-config.md §7.1, from its
// registry row f) and stores its value in ac. It reports false after an
// error.
func (c *checker) typeField(e *Entry, m Member, f *lb.Field, ac *lb.AlgorithmConfig, set *present) bool {
	v := m.Value
	if v.Kind == KindInvalid {
		return false
	}
	fail := func(code Code, text, hint string) bool {
		c.add(code, v.Start, fieldPath(e.Path, m.Key), m.Key, e, fmt.Sprintf("`%s` on %s: %s", m.Key, algLabel(e), text), hint)
		return false
	}
	if v.Kind == KindNull {
		if !f.NullRejected {
			return true // Option<_>: null is the same as absent
		}
		hint := "remove the field to get the default (" + f.Default + ")"
		if f.Type == lb.TypeComparator || f.Type == lb.TypeWeight {
			return fail(CodeEnumField, "invalid type: null, expected string or map", hint)
		}
		if f.Range != nil {
			hint += fmt.Sprintf(", or write an integer %g–%g", f.Range.Min, f.Range.Max)
		}
		return fail(CodeUnsignedField, "invalid type: null, expected "+f.Type.String(), hint)
	}
	switch f.Type {
	case lb.TypeBool:
		if v.Kind != KindBool {
			return fail(CodeBoolField, fmt.Sprintf("invalid type: %s, expected a boolean", v.describe()), "write true or false without quotes")
		}
		f.SetBool(ac, v.Text == "true")
	case lb.TypeString:
		if v.Kind != KindString {
			return fail(CodeStringField, fmt.Sprintf("invalid type: %s, expected a string", v.describe()), fmt.Sprintf("quote the %s: \"%s\": \"%s\"", f.Name, f.Name, v.Text))
		}
		f.SetString(ac, v.Text)
	case lb.TypeU64, lb.TypeUsize:
		want := f.Type.String()
		if v.Kind != KindNumber {
			hint := "write a non-negative integer"
			if v.Kind == KindString {
				hint = "write the number without quotes"
			}
			return fail(CodeUnsignedField, fmt.Sprintf("invalid type: %s, expected %s", v.describe(), want), hint)
		}
		switch v.Number {
		case NumInt:
			return fail(CodeUnsignedField, fmt.Sprintf("invalid value: integer `%d`, expected %s", v.Int(), want), "the field is unsigned: write 0 or more")
		case NumFloat:
			return fail(CodeUnsignedField, fmt.Sprintf("invalid type: floating point `%s`, expected %s", serdeJSONFloat(v.Float()), want),
				"write an integer literal without fraction or exponent (serde_json reads 2.0, 1e3, -0 and values above 18446744073709551615 as floats)")
		}
		f.SetUint(ac, v.Uint())
	case lb.TypeF64:
		if v.Kind != KindNumber {
			hint := "write a number"
			if v.Kind == KindString {
				hint = "write the number without quotes"
			}
			return fail(CodeNumberField, fmt.Sprintf("invalid type: %s, expected f64", v.describe()), hint)
		}
		f.SetFloat(ac, v.Float())
	case lb.TypeComparator:
		cmp, ok := enumField(c, e, m, "write one of the comparator names as a string", comparatorVariants, lb.ParseComparator,
			"ttft", "queue-time", "input-work-seconds", "utilization", "num-requests-queued")
		if !ok {
			return false
		}
		f.SetComparator(ac, cmp)
	case lb.TypeWeight:
		w, ok := enumField(c, e, m, "write max-input-tps or last-mean-input-tps", weightVariants, lb.ParseRendezvousWeight,
			"max-input-tps", "last-mean-input-tps")
		if !ok {
			return false
		}
		f.SetWeight(ac, w)
	}
	set.put(f, v)
	return true
}

// enumField reads the enum field m (comparator, rendezvous_weight)
// through enumName and parse; a name parse does not know is reported
// (CodeEnumField) with the variants and a hint among values. It reports
// false after an error.
func enumField[T any](c *checker, e *Entry, m Member, hint, variants string, parse func(string) (T, bool), values ...string) (T, bool) {
	var zero T
	name, ok := c.enumName(e, m, hint, func(s string) bool { _, ok := parse(s); return ok })
	if !ok {
		return zero, false
	}
	x, ok := parse(name.Text)
	if !ok {
		c.add(CodeEnumField, name.Start, fieldPath(e.Path, m.Key), m.Key, e,
			fmt.Sprintf("`%s` on %s: unknown variant `%s`, %s", m.Key, algLabel(e), name.Text, variants),
			enumHint(name.Text, values...))
		return zero, false
	}
	return x, true
}

// enumName returns the value naming the variant of an enum field
// (comparator, rendezvous_weight; null was handled by the caller), or
// reports why there is none. Stargate reads these fields from the entry's
// serde_json::Value through serde's content deserializer (config.rs parses
// every entry to a Value first), whose derived enums accept a string or the
// externally tagged one-key map {"NAME": null}; serde also reads the unit
// value from an empty map there, so {"NAME": {}} is accepted too. Any
// other map is `invalid value: map, expected map with a single key`, any
// other type `invalid type: X, expected string or map`, and a value other
// than null or {} `invalid type: X, expected unit` (serde reads the variant
// name first: an unknown name is left to the caller, which reports it as
// for a string). The map form gets warning LC2102. The returned string
// value is positioned at the name.
func (c *checker) enumName(e *Entry, m Member, hint string, known func(string) bool) (*Value, bool) {
	v := m.Value
	path := fieldPath(e.Path, m.Key)
	fail := func(pos Pos, text, hint string) (*Value, bool) {
		c.add(CodeEnumField, pos, path, m.Key, e, fmt.Sprintf("`%s` on %s: %s", m.Key, algLabel(e), text), hint)
		return nil, false
	}
	switch v.Kind {
	case KindString:
		return v, true
	case KindObject:
	default:
		return fail(v.Start, fmt.Sprintf("invalid type: %s, expected string or map", v.describe()), hint)
	}
	// serde_json::Value keeps the last of repeated keys (D3).
	members := c.collapse(v, path, e)
	if len(members) != 1 {
		return fail(v.Start, "invalid value: map, expected map with a single key", hint)
	}
	k := members[0]
	name := &Value{Kind: KindString, Text: k.Key, Start: k.KeyStart, End: k.KeyEnd, Node: k.KeyNode}
	switch {
	case !known(k.Key):
		return name, true
	case k.Value.Kind == KindInvalid:
		return nil, false
	case k.Value.Kind == KindNull:
	case k.Value.Kind == KindObject && len(k.Value.Members) == 0:
	default:
		c.add(CodeEnumField, k.Value.Start, path, m.Key, e,
			fmt.Sprintf("`%s` on %s: invalid type: %s, expected unit", m.Key, algLabel(e), k.Value.describe()),
			fmt.Sprintf("write \"%s\": %q", m.Key, k.Key))
		return nil, false
	}
	c.add(CodeEnumObjectForm, v.Start, path, m.Key, e,
		fmt.Sprintf("`%s` on %s is written as {%q: %s}; Stargate reads it as %q", m.Key, algLabel(e), k.Key, compactValue(k.Value), k.Key),
		fmt.Sprintf("write \"%s\": %q", m.Key, k.Key))
	return name, true
}

func compactValue(v *Value) string {
	if v.Kind == KindObject {
		return "{}"
	}
	return "null"
}

func enumHint(got string, values ...string) string {
	norm := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(got)), "_", "-")
	for _, v := range values {
		if v == norm {
			return fmt.Sprintf("values are exact kebab-case: write %q", v)
		}
	}
	return "one of: " + strings.Join(values, ", ")
}

// rangeRules are the codes and hints of the range checks (V16, V17) of
// the registry rows with a Range.
var rangeRules = map[*lb.Field]struct {
	code Code
	hint string
}{
	lb.FieldSampleCount:                   {CodeSampleCountRange, "sample 1–64 candidates; values above the candidate count compare all of them"},
	lb.FieldCacheAffinityInputTokensScale: {CodeScaleRange, "the scale multiplies the prefill estimate in the affinity phase: 0.0 ignores it, 1.0 keeps it"},
}

// ranges applies the registry ranges (V16, V17) to typed values.
func (c *checker) ranges(e *Entry, set present) bool {
	ok := true
	for _, f := range lb.Fields() {
		v := set.get(f)
		if v == nil || f.Range == nil {
			continue
		}
		x, got := float64(v.Uint()), strconv.FormatUint(v.Uint(), 10)
		if f.Type == lb.TypeF64 {
			x, got = v.Float(), rustFloatDisplay(v.Float())
		}
		if f.Range.Contains(x) {
			continue
		}
		rule := rangeRules[f]
		c.add(rule.code, v.Start, fieldPath(e.Path, f.Name), f.Name, e,
			fmt.Sprintf("`%s` on %s: %s, got %s", f.Name, algLabel(e), f.Range.Message, got), rule.hint)
		ok = false
	}
	return ok
}

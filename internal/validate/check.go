package validate

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/suggest"
)

// algorithmVariants is serde's list of expected variants for an algorithm
// name (lb-config.md open point 5, decided from serde_derive 1.0.228): the
// derived VARIANTS constant lists, per variant in declaration order, the
// variant's names — its kebab-case name and its aliases — as a sorted set
// (serde_derive de/enum_.rs prepare_enum_variant_enum, attr.rs aliases();
// serde's own test_identifier.rs expects "`Aaa`, `Bbb`, `Ccc`, `Ddd`" for
// Bbb aliased Ccc and Ddd). LoadBalancerAlgorithm and the internally tagged
// RawLoadBalancerAlgorithmConfig (config.rs) have the same names.
const algorithmVariants = "expected one of `power-of-n`, `power-of-two`, `powerOf2`, `powerOfN`, `powerof2`, `powerofn`, `groq-multiregion`, `wait-and-widen`, `round-robin`, `random`, `pulsar`, `pulsar-multiregion`, `pulsar-wait-and-widen`"

// checker applies the V and W rules to a decoded document.
type checker struct {
	file    string
	diags   []Diagnostic
	entries []*Entry

	defaultEntry *Entry
	models       []*Entry // winners, document order
	topRA        []*Entry // winners

	// errorsOnly drops every diagnostic that is not an error (CheckErrors);
	// the warning rules are not run at all.
	errorsOnly bool
	// noConfig keeps no typed config (CheckEntries): Entry.Config and
	// Result.Config stay nil. Only the warning rules and the typed config
	// read an entry's config, and noConfig goes with errorsOnly.
	noConfig bool
}

// keepConfig sets e's typed config unless the checker keeps none.
func (c *checker) keepConfig(e *Entry, ac *lb.AlgorithmConfig) {
	if !c.noConfig {
		e.Config = ac
	}
}

func (c *checker) add(code Code, pos Pos, path, field string, e *Entry, msg, hint string) {
	if c.errorsOnly && codeInfo(code).Severity != SeverityError {
		return
	}
	d := newDiag(code, c.file, pos, path, field, msg)
	d.Hint = hint
	if e != nil && e.Algorithm != 0 {
		d.Algorithm = e.Algorithm.String()
		d.Spelling = e.Spelling
	}
	c.diags = append(c.diags, d)
}

// algLabel names an entry's algorithm for messages: canonical, plus the
// spelling used when it differs.
func algLabel(e *Entry) string {
	if e == nil || e.Algorithm == 0 {
		return "entry"
	}
	if e.Spelling != "" {
		return fmt.Sprintf("%s (written %q)", e.Algorithm, e.Spelling)
	}
	return e.Algorithm.String()
}

// check validates the whole document rooted at root.
func (c *checker) check(root *Value) {
	switch root.Kind {
	case KindInvalid:
		return
	case KindObject:
		seen := map[string]bool{}
		for _, m := range root.Members {
			switch {
			case slices.Contains(lb.TopLevelFields[:], m.Key):
				if seen[m.Key] {
					c.add(CodeDuplicateTopLevel, m.KeyStart, m.Key, m.Key, nil,
						fmt.Sprintf("top-level field `%s` appears again: duplicate field `%s`", m.Key, m.Key),
						"keep one occurrence; the repeated value was not examined")
					continue
				}
				seen[m.Key] = true
				c.topLevel(m.Key, m.Value)
			default:
				c.add(CodeUnknownTopLevelField, m.KeyStart, fieldPath("", m.Key), m.Key, nil,
					fmt.Sprintf("top-level field `%s`: unknown field `%s`, expected one of `default`, `request_algorithms`, `models`", m.Key, m.Key),
					unknownTopLevelHint(m.Key))
			}
		}
	case KindArray:
		c.add(CodePositional, root.Start, "", "", nil,
			"the top level is serde's positional form [default, request_algorithms, models]; Stargate accepts it but it is hard to read",
			"write the object form {\"default\": ..., \"request_algorithms\": ..., \"models\": ...}")
		for i, item := range root.Items() {
			if i >= len(lb.TopLevelFields) {
				c.add(CodeTopLevelType, item.Start, "["+strconv.Itoa(i)+"]", "", nil,
					fmt.Sprintf("the positional top level holds %d elements: trailing characters (at most 3: default, request_algorithms, models; expected struct LoadBalancerConfig)", len(root.Items())),
					"remove the extra elements or write the object form")
				break
			}
			c.topLevel(lb.TopLevelFields[i], item)
		}
	default:
		c.add(CodeTopLevelType, root.Start, "", "", nil,
			fmt.Sprintf("the document: invalid type: %s, expected struct LoadBalancerConfig", root.describe()),
			"an lb-config is an object with the fields default, request_algorithms and models")
	}
	if !c.errorsOnly {
		c.unreachable()
	}
}

func unknownTopLevelHint(key string) string {
	if k, ok := suggest.Closest(key, lb.TopLevelFields[:]); ok {
		return fmt.Sprintf("did you mean `%s`? Field names are case-sensitive", k)
	}
	if lb.FieldByName(key) != nil || key == "algorithm" {
		return fmt.Sprintf("`%s` belongs inside an entry, e.g. {\"models\": {\"MODEL\": {\"algorithm\": \"pulsar\", ...}}}", key)
	}
	return "the top level accepts only default, request_algorithms and models"
}

func (c *checker) topLevel(name string, v *Value) {
	switch name {
	case lb.TopLevelDefault:
		c.defaultField(v)
	case lb.TopLevelModels:
		c.modelsField(v)
	case raKey:
		c.requestAlgorithms(v, raKey, nil, false)
	}
}

// canonicalAlgorithmNames are the candidates of nameHint's "did you mean".
var canonicalAlgorithmNames = func() []string {
	out := make([]string, len(lb.Algorithms))
	for i, a := range lb.Algorithms {
		out[i] = a.String()
	}
	return out
}()

// nameHint suggests the canonical spelling for an algorithm name Stargate's
// file parser refuses but its header parser (H9) would accept.
func nameHint(name string) string {
	norm := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	if a, ok := lb.ParseAlgorithmName(norm); ok {
		return fmt.Sprintf("names in the file are exact and case-sensitive: write %q", a.String())
	}
	if best, ok := suggest.Closest(norm, canonicalAlgorithmNames); ok {
		return fmt.Sprintf("did you mean %q?", best)
	}
	return "algorithms: power-of-n, wait-and-widen, round-robin, random, pulsar, pulsar-wait-and-widen (aliases power-of-two, powerOf2, powerOfN, powerof2, powerofn, groq-multiregion, pulsar-multiregion)"
}

func (c *checker) deprecated(pos Pos, path, field string, e *Entry, spelling string) {
	a, _ := lb.ParseAlgorithmName(spelling)
	c.add(CodeDeprecatedName, pos, path, field, e,
		fmt.Sprintf("%q is a deprecated spelling of %s", spelling, a),
		fmt.Sprintf("write %q; Stargate prints the canonical name in every message and metric", a.String()))
}

// defaultField checks `default` (V5): a name string, or serde_json's
// one-key `{"NAME": null}` form.
func (c *checker) defaultField(v *Value) {
	e := &Entry{Role: RoleDefault, Path: lb.TopLevelDefault, Value: v, Active: true, StringForm: true}
	c.entries = append(c.entries, e)
	c.defaultEntry = e
	fail := func(pos Pos, text, hint string) {
		c.add(CodeDefault, pos, lb.TopLevelDefault, lb.TopLevelDefault, nil, "`default`: "+text, hint)
	}
	var name *Value
	switch v.Kind {
	case KindInvalid:
		return
	case KindString:
		name = v
	case KindObject:
		if len(v.Members) == 0 {
			fail(v.Start, "expected value (an empty object names no algorithm)", "write an algorithm name, e.g. \"default\": \"power-of-n\"")
			return
		}
		m := v.Members[0]
		if _, ok := lb.ParseAlgorithmName(m.Key); !ok {
			hint := "`default` has no detailed form: it always runs with default settings; put a detailed entry under models or request_algorithms"
			if m.Key != "algorithm" {
				hint = nameHint(m.Key)
			}
			fail(m.KeyStart, fmt.Sprintf("unknown variant `%s`, %s", m.Key, algorithmVariants), hint)
			return
		}
		switch m.Value.Kind {
		case KindNull:
		case KindInvalid:
			return
		default:
			what := "expected unit"
			fail(m.Value.Start, fmt.Sprintf("invalid type: %s, %s", m.Value.describe(), what), "`default` has no settings; write \"default\": \""+m.Key+"\"")
			return
		}
		if len(v.Members) > 1 {
			fail(v.Members[1].KeyStart, "expected value (a second key after the algorithm)", "write \"default\": \""+m.Key+"\"")
			return
		}
		c.add(CodeDefaultObjectForm, v.Start, lb.TopLevelDefault, lb.TopLevelDefault, nil,
			fmt.Sprintf("`default` is written as {%q: null}; Stargate reads it as %q", m.Key, m.Key),
			fmt.Sprintf("write \"default\": %q", m.Key))
		name = &Value{Kind: KindString, Text: m.Key, Start: m.KeyStart}
		e.StringForm = false
	default:
		fail(v.Start, fmt.Sprintf("expected value (got %s; `default` takes an algorithm name string)", v.Kind), "write an algorithm name, e.g. \"default\": \"power-of-n\"")
		return
	}
	a, ok := lb.ParseAlgorithmName(name.Text)
	if !ok {
		fail(name.Start, fmt.Sprintf("unknown variant `%s`, %s", name.Text, algorithmVariants), nameHint(name.Text))
		return
	}
	e.Algorithm, e.Parsed = a, true
	if a.String() != name.Text {
		e.Spelling = name.Text
		c.deprecated(name.Start, lb.TopLevelDefault, lb.TopLevelDefault, e, name.Text)
	}
	ac := lb.DefaultAlgorithmConfig(a)
	ac.Spelling = e.Spelling
	c.keepConfig(e, &ac)
	if a == lb.PulsarWaitAndWiden {
		e.NoSLO = true
		c.add(CodeNoSLO, v.Start, lb.TopLevelDefault, lb.TopLevelDefault, e,
			fmt.Sprintf("`default` is %s with no queue SLO: %s", algLabel(e), noSLOChange),
			"`default` cannot hold fields: run `lcctl migrate` (pulsar target, or bounded model entries for listed models; M9)")
	}
	if a == lb.Pulsar || a == lb.PulsarWaitAndWiden {
		c.add(CodeImplicitWeight, v.Start, lb.TopLevelDefault, lb.TopLevelDefault, e,
			fmt.Sprintf("`default` %s ranks clusters by max-input-tps (a string entry cannot set rendezvous_weight)", a),
			"make sure Pylons report max_input_tps, or route models through a detailed entry with rendezvous_weight")
	}
}

// noSLOChange says what the last-cluster release changes for a no-SLO
// pulsar-wait-and-widen entry (lb-config.md M2/M3).
const noSLOChange = "today an eligible Pulsar rank-1 cluster wins at once with no capacity, queue or TTFT check; the last-cluster release removes that shortcut, so rank 1 must then admit the request within max_engine_concurrency + max_queued (default 0) and the affinity wait cache_affinity_wait_ms (default 0) applies, and requests overflow to other clusters as soon as rank 1 has no free engine slot"

func (c *checker) modelsField(v *Value) {
	switch v.Kind {
	case KindInvalid:
		return
	case KindObject:
	default:
		hint := "models maps model IDs to algorithms, e.g. {\"models\": {\"my-model\": \"pulsar\"}}"
		if v.Kind == KindArray {
			hint = "this looks like a function configuration (models as a list of model specs); an lb-config maps model IDs to entries, e.g. {\"models\": {\"my-model\": \"pulsar\"}}"
		}
		c.add(CodeModelsType, v.Start, lb.TopLevelModels, lb.TopLevelModels, nil,
			fmt.Sprintf("`models`: invalid type: %s, expected a map", v.describe()), hint)
		return
	}
	_, last := winners(v)
	for i, m := range v.Members {
		path := keyPath(lb.TopLevelModels, m.Key)
		e := &Entry{Role: RoleModel, Path: path, Model: m.Key, Value: m.Value, Active: last[m.Key] == i}
		e.Shadowed = !e.Active
		if e.Shadowed {
			w := v.Members[last[m.Key]]
			c.add(CodeDuplicateKey, m.KeyStart, path, m.Key, nil,
				fmt.Sprintf("models key %q appears again at line %d; Stargate keeps the last occurrence and ignores this one (D2)", m.Key, w.KeyStart.Line),
				"remove one of the occurrences")
		} else if m.Key == "" || strings.TrimSpace(m.Key) != m.Key {
			c.add(CodeModelKeyBlank, m.KeyStart, path, m.Key, nil,
				fmt.Sprintf("models key %q is empty or has leading/trailing whitespace: x-model is trimmed and must be non-blank, so no request reaches it", m.Key),
				fmt.Sprintf("write the model ID exactly: %q", strings.TrimSpace(m.Key)))
		}
		c.entry(e, m.KeyStart)
		if e.Active {
			c.models = append(c.models, e)
		}
	}
}

// requestAlgorithms checks a request_algorithms map (V6) and its entries.
// parent is nil for the top level. inEntry is true for a map inside an
// entry, where D3 collapses exact repeats and D4 resolves alias-equal keys
// by byte order.
func (c *checker) requestAlgorithms(v *Value, path string, parent *Entry, inEntry bool) map[lb.Algorithm]*Entry {
	if v.Kind == KindInvalid {
		return nil
	}
	if v.Kind != KindObject {
		c.add(CodeRequestAlgorithms, v.Start, path, raKey, parent,
			fmt.Sprintf("`request_algorithms`%s: invalid type: %s, expected a map", onEntry(parent), v.describe()),
			"request_algorithms maps algorithm names to entries, e.g. {\"pulsar\": \"pulsar\"}")
		return nil
	}
	members := v.Members
	if inEntry {
		members = c.collapse(v, path, parent)
	}
	role := RoleRequestAlgorithm
	switch {
	case parent == nil:
	case parent.Role == RoleModel:
		role = RoleModelRequestAlgorithm
	default:
		role = RoleDiscarded
	}
	type cand struct {
		e   *Entry
		key Member
	}
	var entries []cand
	for _, m := range members {
		p := keyPath(path, m.Key)
		e := &Entry{Role: role, Path: p, Key: m.Key, Value: m.Value, Parent: parent}
		if parent != nil {
			e.Model = parent.Model
			parent.children = append(parent.children, e)
		}
		a, ok := lb.ParseAlgorithmName(m.Key)
		if !ok {
			c.add(CodeRequestAlgorithms, m.KeyStart, p, m.Key, parent,
				fmt.Sprintf("`request_algorithms` key %q%s: unknown variant `%s`, %s", m.Key, onEntry(parent), m.Key, algorithmVariants),
				nameHint(m.Key))
		} else {
			e.KeyAlgorithm = a
			if a.String() != m.Key {
				c.deprecated(m.KeyStart, p, m.Key, nil, m.Key)
			}
		}
		entries = append(entries, cand{e, m})
	}
	// Decide the winner per algorithm: D2 (top level, document order: the
	// last occurrence) or D4 (inside an entry: the key that sorts last).
	winners := map[lb.Algorithm]int{}
	for i, ce := range entries {
		a := ce.e.KeyAlgorithm
		if a == 0 {
			continue
		}
		j, seen := winners[a]
		switch {
		case !seen:
			winners[a] = i
		case !inEntry:
			winners[a] = i
		case ce.key.Key >= entries[j].key.Key:
			winners[a] = i
		}
	}
	out := map[lb.Algorithm]*Entry{}
	for i, ce := range entries {
		e := ce.e
		a := e.KeyAlgorithm
		if a != 0 && winners[a] != i {
			e.Shadowed = true
			w := entries[winners[a]]
			rule := "D2: the last occurrence wins"
			if inEntry {
				rule = "D4: inside an entry the key that sorts last wins"
			}
			c.add(CodeDuplicateKey, ce.key.KeyStart, e.Path, e.Key, nil,
				fmt.Sprintf("request_algorithms key %q names %s, as does %q at line %d; Stargate ignores this occurrence (%s)", e.Key, a, w.key.Key, w.key.KeyStart.Line, rule),
				"keep one entry per algorithm")
		}
		e.Active = role != RoleDiscarded && !e.Shadowed && a != 0 && (parent == nil || parent.Active)
		c.entry(e, ce.key.KeyStart)
		if a != 0 && !e.Shadowed {
			out[a] = e
		}
		if parent == nil && e.Active {
			c.topRA = append(c.topRA, e)
		}
	}
	return out
}

func onEntry(e *Entry) string {
	if e == nil || e.Algorithm == 0 {
		return ""
	}
	return " of " + algLabel(e) + " entry"
}

// winners returns the members of an object that survive serde_json's
// last-wins reading (D3), in document order, and each key's last index.
func winners(v *Value) ([]Member, map[string]int) {
	last := make(map[string]int, len(v.Members))
	for i, m := range v.Members {
		last[m.Key] = i
	}
	if len(last) == len(v.Members) {
		return v.Members, last
	}
	out := make([]Member, 0, len(last))
	for i, m := range v.Members {
		if last[m.Key] == i {
			out = append(out, m)
		}
	}
	return out, last
}

// collapse applies D3 to one object inside an entry: repeated keys keep
// their last occurrence, earlier ones are reported (W15) and not examined.
func (c *checker) collapse(v *Value, path string, e *Entry) []Member {
	out, last := winners(v)
	if len(out) == len(v.Members) {
		return out
	}
	for i, m := range v.Members {
		if j := last[m.Key]; j != i {
			c.add(CodeDuplicateKey, m.KeyStart, joinPath(path, m.Key), m.Key, e,
				fmt.Sprintf("key %q appears again at line %d in this entry; Stargate keeps the last occurrence and ignores this one, unchecked (D3)", m.Key, v.Members[j].KeyStart.Line),
				"remove one of the occurrences")
		}
	}
	return out
}

// entry checks one entry (V8–V21 and the entry warnings). keyPos is the
// position of its key, used for V19.
func (c *checker) entry(e *Entry, keyPos Pos) {
	c.entries = append(c.entries, e)
	v := e.Value
	switch v.Kind {
	case KindInvalid:
		return
	case KindString:
		e.StringForm = true
		a, ok := lb.ParseAlgorithmName(v.Text)
		if !ok {
			c.add(CodeEntryName, v.Start, e.Path, lastField(e.Path), nil,
				fmt.Sprintf("entry %s: unknown variant `%s`, %s", e.Path, v.Text, algorithmVariants), nameHint(v.Text))
			return
		}
		e.Algorithm, e.Parsed = a, true
		if a.String() != v.Text {
			e.Spelling = v.Text
			c.deprecated(v.Start, e.Path, lastField(e.Path), e, v.Text)
		}
		ac := lb.DefaultAlgorithmConfig(a)
		ac.Spelling = e.Spelling
		c.keepConfig(e, &ac)
		e.setNoSLO(nil)
	case KindObject:
		c.detailed(e)
	default:
		c.add(CodeEntryType, v.Start, e.Path, lastField(e.Path), nil,
			fmt.Sprintf("entry %s is %s: load-balancer model config must be an algorithm name or detailed config object", e.Path, article(v.Kind)),
			"write an algorithm name (\"pulsar\") or an object with an algorithm key ({\"algorithm\": \"pulsar\", ...})")
		return
	}
	if e.Algorithm == 0 {
		return
	}
	c.routerChecks(e, keyPos)
	if e.Active && e.Config != nil && !c.errorsOnly {
		c.entryWarnings(e)
	}
}

func article(k Kind) string {
	switch k {
	case KindArray:
		return "an array"
	case KindObject:
		return "an object"
	case KindNull:
		return "null"
	}
	return "a " + k.String()
}

// routerChecks are the checks Stargate runs while building the router, on
// active entries only (V19–V21).
func (c *checker) routerChecks(e *Entry, keyPos Pos) {
	if !e.Active {
		return
	}
	if (e.Role == RoleRequestAlgorithm || e.Role == RoleModelRequestAlgorithm) && e.KeyAlgorithm != 0 && e.KeyAlgorithm != e.Algorithm {
		c.add(CodeKeyMismatch, keyPos, e.Path, e.Key, e,
			fmt.Sprintf("request_algorithms key %s does not match configured algorithm %s", e.KeyAlgorithm, e.Algorithm),
			fmt.Sprintf("put this %s entry under the key %q, or set its algorithm to %q", e.Algorithm, e.Algorithm.String(), e.KeyAlgorithm.String()))
	}
	if e.Value.Kind != KindObject {
		return
	}
	members, _ := winners(e.Value)
	for _, m := range members {
		f := lb.FieldByName(m.Key)
		if f == nil || !f.RouterRejects.Has(e.Algorithm) || m.Value.IsNull() {
			continue
		}
		// V20 is pulsar-wait-and-widen's refusal, V21 wait-and-widen's.
		code, hint := CodePulsarOnlyField, "remove it, or use pulsar-wait-and-widen"
		if e.Algorithm == lb.PulsarWaitAndWiden {
			code, hint = CodePWAWComparator, "remove "+f.Name+": pulsar-wait-and-widen orders clusters by the Pulsar ranking"
		}
		c.add(code, m.KeyStart, fieldPath(e.Path, m.Key), m.Key, e,
			fmt.Sprintf("`%s` on %s: %s", m.Key, algLabel(e), f.RouterMessage), hint)
	}
}

// present records which fields a detailed entry sets to a non-null value,
// in the order typed. An entry sets a handful of fields, so a slice
// searched in order is smaller and faster than a map (one per entry:
// 124,000 of them were a tenth of migrate's memory).
type present []presentField

type presentField struct {
	f *lb.Field
	v *Value
}

// get returns the value f is set to, nil when it is not set.
func (p present) get(f *lb.Field) *Value {
	for _, x := range p {
		if x.f == f {
			return x.v
		}
	}
	return nil
}

// put records that f is set to v (a field typed twice keeps the last).
func (p *present) put(f *lb.Field, v *Value) {
	for i := range *p {
		if (*p)[i].f == f {
			(*p)[i].v = v
			return
		}
	}
	*p = append(*p, presentField{f, v})
}

// detailed checks a detailed entry: algorithm (V10), field types
// (V11–V15), ranges (V16, V17), unsupported fields (V18), and builds the
// normalised config.
func (c *checker) detailed(e *Entry) {
	v := e.Value
	members := c.collapse(v, e.Path, nil)
	var algV *Value
	for _, m := range members {
		if m.Key == "algorithm" {
			algV = m.Value
		}
	}
	switch {
	case algV == nil:
		c.add(CodeEntryAlgorithm, v.Start, e.Path, "algorithm", nil,
			fmt.Sprintf("entry %s: missing field `algorithm`", e.Path),
			"add \"algorithm\": \"NAME\"; a detailed entry must say which algorithm it configures")
	case algV.Kind == KindInvalid:
	case algV.Kind != KindString:
		c.add(CodeEntryAlgorithm, algV.Start, fieldPath(e.Path, "algorithm"), "algorithm", nil,
			fmt.Sprintf("`algorithm` of entry %s: invalid type: %s, expected variant identifier", e.Path, algV.describe()),
			"write the algorithm name as a string")
	default:
		a, ok := lb.ParseAlgorithmName(algV.Text)
		if !ok {
			c.add(CodeEntryAlgorithm, algV.Start, fieldPath(e.Path, "algorithm"), "algorithm", nil,
				fmt.Sprintf("`algorithm` of entry %s: unknown variant `%s`, %s", e.Path, algV.Text, algorithmVariants), nameHint(algV.Text))
		} else {
			e.Algorithm = a
			if a.String() != algV.Text {
				e.Spelling = algV.Text
				c.deprecated(algV.Start, fieldPath(e.Path, "algorithm"), "algorithm", e, algV.Text)
			}
		}
	}
	algKnown := e.Algorithm != 0
	ok := algKnown
	a := e.Algorithm
	var ac lb.AlgorithmConfig
	if algKnown {
		ac = lb.DefaultAlgorithmConfig(a)
		ac.Spelling = e.Spelling
	}
	var set present
	var unsupported []Member
	var raValue *Value
	for _, m := range members {
		if m.Key == "algorithm" {
			continue
		}
		f := lb.FieldByName(m.Key)
		if !algKnown {
			// Without an algorithm only the common fields can be judged.
			if f != nil && f.Common() {
				if f.Type == lb.TypeMap {
					raValue = m.Value
				} else if !c.typeField(e, m, f, &ac, &set) {
					ok = false
				}
			}
			continue
		}
		if f == nil || !f.Parsed.Has(a) {
			unsupported = append(unsupported, m)
			continue
		}
		if f.Type == lb.TypeMap {
			raValue = m.Value
			continue
		}
		if !c.typeField(e, m, f, &ac, &set) {
			ok = false
		}
	}
	if algKnown && !c.ranges(e, set) {
		ok = false
	}
	if len(unsupported) > 0 && e.Algorithm != 0 {
		names := make([]string, len(unsupported))
		for i, m := range unsupported {
			names[i] = m.Key
		}
		slices.Sort(names)
		first := unsupported[0]
		c.add(CodeUnsupportedField, first.KeyStart, fieldPath(e.Path, first.Key), first.Key, e,
			fmt.Sprintf("%s config does not support field(s): %s", e.Algorithm, strings.Join(names, ", ")),
			unsupportedHint(e.Algorithm, names))
		ok = false
	}
	if raValue != nil {
		inner := e
		if e.Role != RoleModel {
			c.add(CodeDiscarded, raValue.Start, fieldPath(e.Path, raKey), raKey, e,
				fmt.Sprintf("`request_algorithms` inside the %s entry %s is parsed and then discarded: only a models entry's request_algorithms is used", algLabel(e), e.Path),
				"move these entries to the top-level request_algorithms or to a models entry")
		}
		if raValue.Kind == KindNull {
			c.add(CodeRequestAlgorithms, raValue.Start, fieldPath(e.Path, raKey), raKey, e,
				fmt.Sprintf("`request_algorithms`%s: invalid type: null, expected a map", onEntry(e)),
				"remove the field or write an object")
			ok = false
		} else {
			winners := c.requestAlgorithms(raValue, fieldPath(e.Path, raKey), inner, true)
			if e.Role == RoleModel && len(winners) > 0 {
				ac.RequestAlgorithms = map[lb.Algorithm]*lb.AlgorithmConfig{}
				for alg, we := range winners {
					if we.Config != nil {
						ac.RequestAlgorithms[alg] = we.Config
					}
				}
			}
		}
	}
	if !algKnown {
		return
	}
	// The typed values are kept even when the entry has errors, so the
	// entry warnings can still speak about the fields that are fine; only
	// a parsed entry is classified by M1 (M16) or used in the config.
	c.keepConfig(e, &ac)
	if !c.errorsOnly {
		// Only the warning rules read it.
		e.present = set
	}
	if !ok {
		return
	}
	e.Parsed = true
	e.setNoSLO(set)
}

// maxHintedFields bounds how many unsupported fields the V18 hint explains
// (the message itself lists them all, as Stargate does); each explanation
// costs an edit distance against every field name.
const maxHintedFields = 10

func unsupportedHint(a lb.Algorithm, names []string) string {
	var parts []string
	for i, n := range names {
		if i == maxHintedFields {
			parts = append(parts, fmt.Sprintf("%d more not explained here", len(names)-i))
			break
		}
		if algs := algorithmsAccepting(n); len(algs) > 0 {
			parts = append(parts, fmt.Sprintf("%s is for %s", n, strings.Join(algs, ", ")))
			continue
		}
		best, near := suggest.Closest(n, fieldNames)
		switch {
		case near && FieldAccepted(a, best):
			parts = append(parts, fmt.Sprintf("%s: did you mean %s?", n, best))
		case near:
			parts = append(parts, fmt.Sprintf("%s: did you mean %s (a field of %s)?", n, best, strings.Join(algorithmsAccepting(best), ", ")))
		default:
			parts = append(parts, n+" is not an lb-config field")
		}
	}
	return strings.Join(parts, "; ") + fmt.Sprintf("; %s accepts: algorithm, %s", a, strings.Join(AcceptedFields(a), ", "))
}

// setNoSLO classifies a parsed entry by M1 and M4.
func (e *Entry) setNoSLO(set present) {
	if e.Algorithm != lb.PulsarWaitAndWiden || !e.Active || e.Shadowed {
		return
	}
	if set.get(lb.FieldMaxQueueTimeFloorMs) != nil && set.get(lb.FieldMaxQueueTimeCeilMs) != nil {
		return
	}
	e.NoSLO = true
	e.Bounded = set.get(lb.FieldMaxQueued) != nil && set.get(lb.FieldCacheAffinityWaitMs) != nil
}

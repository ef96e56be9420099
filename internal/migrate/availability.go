package migrate

import (
	"math/bits"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
)

// algSet is a set of algorithms, bit a for algorithm a (lb has six, all
// below 32). One word per config set: the selectable sets of the input
// are kept while the rewritten text is checked, one per model (a slice
// each was 12 MB on 124,000 models).
type algSet uint32

func (s algSet) with(a lb.Algorithm) algSet {
	if a == 0 || a >= 32 {
		return s
	}
	return s | 1<<a
}

// list returns the algorithms of s in ascending order, canonical names.
func (s algSet) list() []string {
	out := []string{}
	for s != 0 {
		a := lb.Algorithm(bits.TrailingZeros32(uint32(s)))
		out = append(out, a.String())
		s &^= 1 << a
	}
	return out
}

// selectable returns, per config set, the algorithms x-routing-method can
// select (lb-config.md E1–E3): for the default set `default`'s algorithm
// plus the top-level request_algorithms keys; for a model set the model's
// algorithm, its model-level keys and the top-level keys. Sets whose own
// algorithm cannot be read are left out.
func selectable(r *validate.Result) map[string]algSet {
	out := make(map[string]algSet, len(r.Entries))
	var top algSet
	def := lb.PowerOfN
	defaultOK := true
	for _, e := range r.Entries {
		switch {
		case e.Role == validate.RoleRequestAlgorithm && e.Active:
			top = top.with(e.KeyAlgorithm)
		case e.Role == validate.RoleDefault:
			if e.Algorithm != 0 {
				def = e.Algorithm
			} else {
				defaultOK = false
			}
		}
	}
	if defaultOK {
		out[lb.TopLevelDefault] = top.with(def)
	}
	modelLevel := map[*validate.Entry]algSet{}
	for _, c := range r.Entries {
		if c.Role == validate.RoleModelRequestAlgorithm && c.Active {
			modelLevel[c.Parent] = modelLevel[c.Parent].with(c.KeyAlgorithm)
		}
	}
	for _, e := range r.Entries {
		if e.Role != validate.RoleModel || !e.Active || e.Algorithm == 0 {
			continue
		}
		out[e.Path] = (top | modelLevel[e]).with(e.Algorithm)
	}
	return out
}

// availabilityChanges compares what each config set can select before and
// after (M8 reports both directions). A model set that exists only after
// (an M9 entry) is compared with the default set it left.
// b is selectable(before), computed before the input's entries were let
// go.
func availabilityChanges(b map[string]algSet, after *validate.Result) []Availability {
	a := selectable(after)
	var keys []string
	if _, ok := a[lb.TopLevelDefault]; ok {
		keys = append(keys, lb.TopLevelDefault)
	}
	for _, e := range after.Entries {
		if e.Role == validate.RoleModel && e.Active {
			if _, ok := a[e.Path]; ok {
				keys = append(keys, e.Path) // active models keys are unique (D2 winners)
			}
		}
	}
	var out []Availability
	for _, k := range keys {
		old, ok := b[k]
		if !ok {
			old, ok = b[lb.TopLevelDefault]
			if !ok {
				continue
			}
		}
		nw := a[k]
		if added, removed := nw&^old, old&^nw; added|removed != 0 {
			out = append(out, Availability{ConfigSet: k, Added: added.list(), Removed: removed.list()})
		}
	}
	return out
}

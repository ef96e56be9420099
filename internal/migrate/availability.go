package migrate

import (
	"slices"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
)

// selectable returns, per config set, the algorithms x-routing-method can
// select (lb-config.md E1–E3): for the default set `default`'s algorithm
// plus the top-level request_algorithms keys; for a model set the model's
// algorithm, its model-level keys and the top-level keys. Sets whose own
// algorithm cannot be read are left out.
func selectable(r *validate.Result) map[string][]lb.Algorithm {
	out := make(map[string][]lb.Algorithm, len(r.Entries))
	var top []lb.Algorithm
	def := lb.PowerOfN
	defaultOK := true
	for _, e := range r.Entries {
		switch {
		case e.Role == validate.RoleRequestAlgorithm && e.Active:
			top = append(top, e.KeyAlgorithm)
		case e.Role == validate.RoleDefault:
			if e.Algorithm != 0 {
				def = e.Algorithm
			} else {
				defaultOK = false
			}
		}
	}
	if defaultOK {
		out[lb.TopLevelDefault] = union([]lb.Algorithm{def}, top)
	}
	modelLevel := map[*validate.Entry][]lb.Algorithm{}
	for _, c := range r.Entries {
		if c.Role == validate.RoleModelRequestAlgorithm && c.Active {
			modelLevel[c.Parent] = append(modelLevel[c.Parent], c.KeyAlgorithm)
		}
	}
	for _, e := range r.Entries {
		if e.Role != validate.RoleModel || !e.Active || e.Algorithm == 0 {
			continue
		}
		out[e.Path] = union(append([]lb.Algorithm{e.Algorithm}, modelLevel[e]...), top)
	}
	return out
}

func union(a, b []lb.Algorithm) []lb.Algorithm {
	var out []lb.Algorithm
	for _, x := range append(slices.Clone(a), b...) {
		if x != 0 && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// availabilityChanges compares what each config set can select before and
// after (M8 reports both directions). A model set that exists only after
// (an M9 entry) is compared with the default set it left.
// b is selectable(before), computed before the input's entries were let
// go.
func availabilityChanges(b map[string][]lb.Algorithm, after *validate.Result) []Availability {
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
		ch := Availability{ConfigSet: k, Added: []string{}, Removed: []string{}}
		for _, x := range nw {
			if !slices.Contains(old, x) {
				ch.Added = append(ch.Added, x.String())
			}
		}
		for _, x := range old {
			if !slices.Contains(nw, x) {
				ch.Removed = append(ch.Removed, x.String())
			}
		}
		if len(ch.Added)+len(ch.Removed) > 0 {
			out = append(out, ch)
		}
	}
	return out
}

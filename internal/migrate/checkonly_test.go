package migrate

import (
	"testing"

	"github.com/lcctl/lcctl/internal/validate"
)

// The idempotence re-run (planCheck, M13) makes no copy of the document
// up front; it must still see every change a full plan makes, in each
// strategy path: bounding, the pulsar switch with its header entry, the
// `default` switch (header entry added at the top level) and a model pin.
func TestPlanCheckSeesEveryChange(t *testing.T) {
	for _, c := range []struct {
		in       string
		strategy Strategy
		pins     []string
	}{
		{`{"models": {"m": "pulsar-wait-and-widen", "n": {"algorithm": "pulsar-wait-and-widen", "seed": "s"}}}`, Bounded, nil},
		{`{"models": {"m": "pulsar-wait-and-widen", "n": {"algorithm": "pulsar-wait-and-widen", "seed": "s"}}}`, Pulsar, nil},
		{`{"default": "pulsar-wait-and-widen"}`, Pulsar, nil},
		{`{"default": "pulsar-wait-and-widen", "models": {"a": "random"}}`, Bounded, []string{"m1", "m2"}},
	} {
		opts := DefaultOptions()
		opts.Strategy = c.strategy
		opts.DefaultModels = c.pins
		r := validate.CheckErrors(validate.Decode("in.json", []byte(c.in), validate.FormatJSON))
		full, check := plan(r, opts), planCheck(r, opts)
		if len(full.changes) == 0 {
			t.Fatalf("%s (%s): the full plan changes nothing; notes %v", c.in, c.strategy, full.notes)
		}
		if len(check.changes) != len(full.changes) {
			t.Errorf("%s (%s): planCheck sees %d changes, the full plan %d", c.in, c.strategy, len(check.changes), len(full.changes))
		}
		checkChanges, fullChanges := changeList(check.changes), changeList(full.changes)
		for i := range checkChanges {
			if a, b := checkChanges[i], fullChanges[i]; a.Path != b.Path || string(a.After) != string(b.After) {
				t.Errorf("%s: change %d: planCheck %s %s, plan %s %s", c.in, i, a.Path, a.After, b.Path, b.After)
			}
		}
	}
}

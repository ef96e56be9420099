package migrate

import (
	"testing"

	"github.com/lcctl/lcctl/internal/validate"
)

// TestBoundAfterIsTheEditedEntry checks that the after text a bound
// change record makes from its before text (boundAfter) is the compact
// JSON of the edited entry, for every shape: string entries, objects
// with none, one or both bounds missing, a null bound (kept as given),
// YAML literals that JSON writes otherwise, and keys that need escaping.
func TestBoundAfterIsTheEditedEntry(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"a.json", `{"models": {"s": "pulsar-wait-and-widen", "o": {"algorithm": "pulsar-wait-and-widen", "seed": "x\"<y>"},
			"q": {"algorithm": "pulsar-wait-and-widen", "max_queued": 2}, "w": {"cache_affinity_wait_ms": 9, "algorithm": "pulsar-wait-and-widen"},
			"n": {"algorithm": "pulsar-wait-and-widen", "max_queued": null}, "é\u2028": {"algorithm": "pulsar-multiregion"}},
			"request_algorithms": {"pulsar-wait-and-widen": {"algorithm": "pulsar-wait-and-widen", "rendezvous_weight": "max-input-tps"}}}`},
		{"a.yaml", "models:\n  s: pulsar-multiregion\n  h: {algorithm: pulsar-wait-and-widen, ttft_bucket_size_ms: 0x10, seed: 'a''b'}\n  n:\n    algorithm: pulsar-wait-and-widen\n    cache_affinity_wait_ms: ~\n"},
	} {
		doc, _ := validate.Decode(c.name, []byte(c.in), validate.FormatUnknown)
		res := validate.CheckEntries(doc, nil)
		opts := DefaultOptions()
		opts.Strategy = Bounded
		p := plan(res, opts)
		if len(p.changes) < 3 {
			for _, e := range res.Errors() {
				t.Log(e)
			}
			t.Fatalf("%s: %d changes, notes %v", c.name, len(p.changes), p.notes)
		}
		shapes := map[afterShape]int{}
		for _, ch := range p.changes {
			var edited *node
			for _, e := range res.Entries {
				if e.Path == ch.path && e.NoSLO {
					edited = p.idx[e.Value]
				}
			}
			if edited == nil {
				t.Fatalf("%s: no entry at %s", c.name, ch.path)
			}
			shapes[ch.shape]++
			if got, want := string(boundAfter(ch)), string(edited.jsonText()); got != want {
				t.Errorf("%s %s (shape %d): after %s, the edited entry is %s", c.name, ch.path, ch.shape, got, want)
			}
		}
		if shapes[afterGiven] == 0 || shapes[afterAppended] == 0 || shapes[afterStringEntry] == 0 {
			t.Errorf("%s: shapes %v, want every shape", c.name, shapes)
		}
	}
}

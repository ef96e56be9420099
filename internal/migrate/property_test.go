package migrate

import (
	"bytes"
	"cmp"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/lcctl/lcctl/internal/validate"
)

func drawOptions(t *rapid.T) Options {
	o := DefaultOptions()
	o.Strategy = rapid.SampledFrom([]Strategy{Bounded, Pulsar}).Draw(t, "strategy")
	if rapid.Bool().Draw(t, "custom-bounds") {
		o.MaxQueued = rapid.Uint64Range(0, 16).Draw(t, "max-queued")
		o.AffinityWaitMs = rapid.Uint64Range(0, MaxAffinityWaitMs-1).Draw(t, "wait")
	}
	o.NoPreserveHeaderMethod = rapid.IntRange(0, 3).Draw(t, "no-preserve") == 0
	pick := func(label string) []string {
		var ids []string
		for _, id := range append(slices.Clone(modelIDs), "absent-model") {
			if rapid.IntRange(0, 2).Draw(t, label+"-"+id) == 0 {
				ids = append(ids, id)
			}
		}
		return ids
	}
	if rapid.IntRange(0, 2).Draw(t, "has-only") == 0 {
		o.Only = pick("only")
	}
	if o.Strategy == Bounded && rapid.IntRange(0, 2).Draw(t, "has-default-models") == 0 {
		o.DefaultModels = pick("default-models")
	}
	return o
}

// parentPath strips the last ["key"] of an entry path.
func parentPath(p string) string {
	if i := strings.LastIndex(p, "[\""); i >= 0 && strings.HasSuffix(p, "\"]") {
		return p[:i]
	}
	return ""
}

// changedRegions maps the changes of res to byte ranges of the input,
// using only the generator's own record of where it wrote each entry.
func changedRegions(t tester, res *Result, sp *gSpans) [][2]int {
	var out [][2]int
	for _, c := range res.Changes {
		if r, ok := sp.member[c.Path]; ok {
			out = append(out, r)
			continue
		}
		parent := parentPath(c.Path)
		if r, ok := sp.tail[parent]; ok {
			out = append(out, r)
			continue
		}
		if parent == "models" || parent == "request_algorithms" {
			out = append(out, sp.tail[""])
			continue
		}
		// A model-level entry added to a models entry that itself changed.
		covered := false
		for _, o := range res.Changes {
			covered = covered || o.Path != c.Path && strings.HasPrefix(c.Path, o.Path+".")
		}
		if !covered {
			t.Fatalf("change %s has no recorded region", c.Path)
		}
	}
	return out
}

// checkOutside asserts that out is in with each region replaced: the
// pieces of in between the regions appear in out in order, the first as
// its prefix and the last as its suffix.
func checkOutside(t tester, in, out []byte, regions [][2]int) {
	t.Helper()
	slices.SortFunc(regions, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	var segs [][]byte
	pos := 0
	for _, r := range regions {
		if r[0] > pos {
			segs = append(segs, in[pos:r[0]])
		} else if r[0] < pos {
			// overlapping regions merge
			pos = max(pos, r[1])
			continue
		} else if len(segs) == 0 {
			segs = append(segs, nil)
		}
		pos = max(pos, r[1])
	}
	segs = append(segs, in[pos:])
	if len(regions) == 0 {
		if !bytes.Equal(in, out) {
			t.Fatalf("no change reported but the output differs")
		}
		return
	}
	at := 0
	for i, s := range segs {
		switch {
		case i == 0:
			if !bytes.HasPrefix(out, s) {
				t.Fatalf("bytes before the first changed entry differ:\n%s", UnifiedDiff("in", "out", in, out))
			}
			at = len(s)
		case i == len(segs)-1:
			if !bytes.HasSuffix(out, s) || len(out)-len(s) < at {
				t.Fatalf("bytes after the last changed entry differ (%q):\n%s", s, UnifiedDiff("in", "out", in, out))
			}
		default:
			k := bytes.Index(out[at:], s)
			if k < 0 {
				t.Fatalf("unchanged text %q is missing from the output:\n%s", s, UnifiedDiff("in", "out", in, out))
			}
			at += k + len(s)
		}
	}
}

// legitRefusal reports whether an error note is one the options and a
// valid generated config can cause (M7, M9).
func legitRefusal(n Note, opts Options) bool {
	switch n.Rule {
	case "M7":
		return opts.Strategy == Pulsar && strings.Contains(n.Path, "request_algorithms[")
	case "M9":
		if n.Path == "default" {
			return opts.Strategy == Bounded && len(opts.DefaultModels) == 0 && opts.sharedInScope()
		}
		return opts.Strategy == Pulsar && len(opts.Only) > 0
	}
	return false
}

// TestMigrateProperties: for generated valid configs and options,
// validate(migrate(x)) has no errors, migrate(migrate(x)) == migrate(x),
// every byte outside the changed entries is unchanged, and a file is only
// left alone or refused for the reasons the rules give.
func TestMigrateProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := drawConfig(t)
		format := rapid.SampledFrom([]string{"json-compact", "json-2", "json-4", "json-tab", "yaml"}).Draw(t, "format")
		var data []byte
		var sp *gSpans
		name := "gen.json"
		switch format {
		case "json-compact":
			data, sp = renderGenJSON(c, "")
		case "json-2":
			data, sp = renderGenJSON(c, "  ")
		case "json-4":
			data, sp = renderGenJSON(c, "    ")
		case "json-tab":
			data, sp = renderGenJSON(c, "\t")
		default:
			name = "gen.yaml"
			data, sp = renderGenYAML(t, c)
		}
		before := validate.File(name, data)
		if !before.Valid() {
			t.Fatalf("generator bug: invalid config %v\n%s", before.Errors(), data)
		}
		opts := drawOptions(t)
		res, err := Migrate(name, data, opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("input:\n%s\noutput:\n%s\nnotes: %v", data, res.Output, res.Notes)
		switch res.Status {
		case StatusPending:
			checkMigrated(t, name, res, opts)
			checkOutside(t, data, res.Output, changedRegions(t, res, sp))
		case StatusUnchanged:
			if !bytes.Equal(res.Output, data) {
				t.Fatal("unchanged but output differs")
			}
			if left := unboundedInScope(before, opts); len(left) > 0 {
				t.Fatalf("nothing migrated although %v are in scope", left)
			}
		case StatusRefused:
			if len(res.Refusals()) == 0 {
				t.Fatal("refused without an error note")
			}
			for _, n := range res.Refusals() {
				if !legitRefusal(n, opts) {
					t.Fatalf("unexpected refusal: %+v", n)
				}
			}
		default:
			t.Fatalf("status %s for a valid input: %v %v", res.Status, res.Notes, res.Errors)
		}
	})
}

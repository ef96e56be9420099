package explain

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
)

// migratedPair is the situation of `lcctl migrate --strategy bounded` on a
// no-SLO pulsar-wait-and-widen entry: the same request under the migrated
// entry (max_queued 4) and under the original (max_queued 0), with the
// labels the two file names give.
func migratedPair(t *testing.T, left, right string) *Report {
	t.Helper()
	cfg := lb.DefaultAlgorithmConfig(lb.PulsarWaitAndWiden)
	cfg.Seed, cfg.CacheAffinityWaitMs, cfg.LastClusterAffinity = "model-a-v1", 300, true
	cs := []cluster{{id: "A"}, {id: "B", running: 1}, {id: "C"}}
	for i := range cs {
		cs[i].rttMs, cs[i].tps, cs[i].maxTPS, cs[i].conc = 5, 100, 100, 1
	}
	snap := snapshot(cs...)
	req := lb.Request{Model: "model-a", RoutingKey: "rk-1", CacheAffinityKey: "session-6", LastClusterID: "B", InputTokens: 2000}
	orig := report(t, cfg, snap, req)
	cfg.MaxQueued = 4
	migrated := report(t, cfg, snap, req)
	rep := migrated
	rep.Compare = &Comparison{What: "config", Left: migrated.Run, Right: orig.Run}
	rep.Compare.Left.Label, rep.Compare.Right.Label = left, right
	rep.Compare.Differences = Differences(rep, rep.Compare)
	rep.Compare.ConfigFields = ConfigFieldDifferences(rep.Compare)
	return rep
}

// The comparison names the config fields that differ between the two
// effective entries, with both values and the entry's place, in the text
// and in JSON; before, only the derived X / s / S row was compared and a
// decision that differed had no visible cause.
func TestCompareConfigFields(t *testing.T) {
	rep := migratedPair(t, "on.json", "on.json.bak")
	c := rep.Compare
	if i := slices.Index(c.Differences, "config_fields"); i != slices.Index(c.Differences, "entry")+1 || i < 0 {
		t.Errorf("differences %v: want config_fields right after entry's place", c.Differences)
	}
	if !slices.Contains(c.Differences, "decision") {
		t.Fatalf("the migrated entry should decide differently (the test's premise): %v", c.Differences)
	}
	want := []FieldDifference{{Field: lb.FieldMaxQueued.Name, Left: json.RawMessage("4"), Right: json.RawMessage("0"),
		LeftEntry: `models["model-a"]`, RightEntry: `models["model-a"]`}}
	got, _ := json.Marshal(c.ConfigFields)
	if w, _ := json.Marshal(want); string(got) != string(w) {
		t.Errorf("config_fields %s, want %s", got, w)
	}
	out := render(t, rep, Options{})
	for _, re := range []string{
		`\n  Config fields that differ, in the entry models\["model-a"\] of both configs:\n`,
		`\n  field +on\.json +on\.json\.bak\n`,
		`\n  max_queued +4 requests +0 requests\n`,
		`\n  \d+ aspects \(marked ≠\) and 1 config field differ\.\n`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("text lacks %s:\n%s", re, out)
		}
	}

	// The same entry on both sides: nothing to list, and the key is absent.
	same := &Comparison{What: "config", Left: c.Right, Right: c.Right}
	if d := ConfigFieldDifferences(same); d == nil || len(d) != 0 {
		t.Errorf("identical entries: %#v, want []", d)
	}
	if slices.Contains(Differences(rep, same), "config_fields") {
		t.Error("identical entries list config_fields")
	}
	// A run rejected before resolution has no entry to compare.
	none := &Comparison{What: "config", Left: c.Left, Right: c.Right}
	none.Right.Config = nil
	if d := ConfigFieldDifferences(none); len(d) != 0 {
		t.Errorf("no entry on one side: %v", d)
	}
	// --compare flag: the flag is an aspect of its own, not a field row.
	flag := &Comparison{What: "flag", Left: c.Right, Right: c.Right}
	on := *c.Right.Config
	on.LastClusterAffinity = false
	flag.Left.Config = &on
	if d := ConfigFieldDifferences(flag); len(d) != 0 {
		t.Errorf("flag comparison lists %v", d)
	}
}

// fieldValue renders what the config holds: unset optional fields and
// zero-valued "unset" fields (k, seed) as unset / null, an explicit 0 of
// an optional u64 as 0, counts with their unit in the singular for 1, a
// seed quoted (it may hold anything).
func TestCompareFieldValue(t *testing.T) {
	c := lb.DefaultAlgorithmConfig(lb.PulsarWaitAndWiden)
	zero := uint64(0)
	c.MaxQueueTimeFloorMs = &zero
	for _, tc := range []struct {
		f          *lb.Field
		set        func(*lb.AlgorithmConfig)
		text, json string
	}{
		{lb.FieldCacheAffinityBackendSelectionCount, nil, "unset", "null"},
		{lb.FieldCacheAffinityBackendSelectionCount, func(c *lb.AlgorithmConfig) { c.CacheAffinityBackendSelectionCount = 1 }, "1 cluster", "1"},
		{lb.FieldCacheAffinityBackendSelectionCount, func(c *lb.AlgorithmConfig) { c.CacheAffinityBackendSelectionCount = 3 }, "3 clusters", "3"},
		{lb.FieldSeed, nil, "unset", "null"},
		{lb.FieldSeed, func(c *lb.AlgorithmConfig) { c.Seed = "a\x1b[2Jb" }, `"a\x1b[2Jb"`, `"a\u001b[2Jb"`},
		{lb.FieldMaxQueueTimeFloorMs, nil, "0 ms", "0"},
		{lb.FieldMaxQueueTimeCeilMs, nil, "unset", "null"},
		{lb.FieldCacheAffinityWaitMs, func(c *lb.AlgorithmConfig) { c.CacheAffinityWaitMs = 1 }, "1 ms", "1"},
		{lb.FieldCacheAffinityInputTokensScale, func(c *lb.AlgorithmConfig) { c.CacheAffinityInputTokensScale = 0.1 }, "0.1", "0.1"},
		{lb.FieldConsiderKVFreeTokens, nil, "false", "false"},
		{lb.FieldRendezvousWeight, nil, "max-input-tps", `"max-input-tps"`},
	} {
		cc := c
		if tc.set != nil {
			tc.set(&cc)
		}
		text, js := fieldValue(tc.f, &cc)
		if text != tc.text || string(js) != tc.json {
			t.Errorf("%s: %q %s, want %q %s", tc.f.Name, text, js, tc.text, tc.json)
		}
	}
}

// Fields that only one side's algorithm reads are not compared (the
// algorithm row differs already); the fields both read are.
func TestCompareFieldsAcrossAlgorithms(t *testing.T) {
	rep := migratedPair(t, "a", "b")
	c := rep.Compare
	won := lb.DefaultAlgorithmConfig(lb.WaitAndWiden)
	won.Seed = "other"
	c.Right.Config = &won
	var names []string
	for _, d := range ConfigFieldDifferences(c) {
		names = append(names, d.Field)
	}
	// pulsar-wait-and-widen's defaults and wait-and-widen's share every
	// field but seed, max_queued, X and last_cluster_affinity here; the
	// Pulsar fields (consider_kv_free_tokens, rendezvous_weight) are read
	// by one side only.
	want := []string{lb.FieldSeed.Name, lb.FieldMaxQueued.Name, lb.FieldCacheAffinityWaitMs.Name}
	if !slices.Equal(names, want) {
		t.Errorf("fields %v, want %v", names, want)
	}
}

// The column headers of every comparison table stay distinct after the
// table cuts them to its width: two file names that share a long stem
// (ON.json, ON.json.bak) were both cut to the same prefix at 100 columns.
func TestCompareLabelsDistinctAfterCut(t *testing.T) {
	stem := "e2e-last-cluster-pulsar-wait-and-widen-on"
	for _, tc := range []struct{ left, right string }{
		{stem + ".json", stem + ".json.bak"},
		{stem + "-v1.json", stem + "-v2.json"},
		// Distinct only in the middle: no cut keeps that, the flag names
		// are the labels then.
		{stem + "-v1-" + stem + ".json", stem + "-v2-" + stem + ".json"},
		{"本番-" + stem + "-前.json", "本番-" + stem + "-後.json"},
	} {
		rep := migratedPair(t, tc.left, tc.right)
		for _, width := range []int{MinWidth, 72, 80, DefaultWidth, 120} {
			out := render(t, rep, Options{Width: width})
			for _, head := range tableHeads(t, out) {
				l, r := head[0], head[1]
				if l == r {
					t.Errorf("%q / %q at %d columns: both headers read %q\n%s", tc.left, tc.right, width, l, out)
				}
				for _, h := range []struct{ got, full string }{{l, tc.left}, {r, tc.right}} {
					if h.got != h.full && !strings.Contains(h.got, "…") && h.got != "--config" && h.got != "--compare" {
						t.Errorf("header %q at %d columns is neither %q, a cut of it nor a flag name", h.got, width, h.full)
					}
				}
			}
		}
	}
	// A pair that fits stays as it is.
	out := render(t, migratedPair(t, "on.json", "on.json.bak"), Options{Width: DefaultWidth})
	if heads := tableHeads(t, out); heads[0] != [2]string{"on.json", "on.json.bak"} {
		t.Errorf("headers %v", heads)
	}
}

// tableHeads returns the two run headers of each comparison table of a
// rendering (the compared aspects, then the config fields): the line
// above each rule after "Compare".
func tableHeads(t *testing.T, out string) [][2]string {
	t.Helper()
	_, cmp, ok := strings.Cut(out, "\nCompare")
	if !ok {
		t.Fatalf("no comparison:\n%s", out)
	}
	lines := strings.Split(cmp, "\n")
	var heads [][2]string
	for i := 1; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], " ─") {
			continue
		}
		cells := regexp.MustCompile(` {2,}`).Split(strings.TrimSpace(lines[i-1]), -1)
		if cells[0] == "field" {
			cells = cells[1:]
		}
		if len(cells) != 2 {
			t.Fatalf("header %q: want two run labels", lines[i-1])
		}
		heads = append(heads, [2]string{cells[0], cells[1]})
	}
	if len(heads) != 2 {
		t.Fatalf("%d comparison tables, want 2:\n%s", len(heads), out)
	}
	return heads
}

// Entries that differ in a field this request does not reach decide the
// same: the table lists the field, the closing line says the decisions
// agree.
func TestCompareFieldsWithoutAspect(t *testing.T) {
	rep := migratedPair(t, "a.json", "b.json")
	c := rep.Compare
	other := *c.Left.Config
	other.NextBucketUnlockFactor = 0.5
	c.Right = c.Left
	c.Right.Config = &other
	c.Right.Label = "b.json"
	if d := Differences(rep, c); !slices.Equal(d, []string{"config_fields"}) {
		t.Fatalf("differences %v, want only config_fields", d)
	}
	out := render(t, rep, Options{})
	for _, want := range []string{"\n  next_bucket_unlock_factor  0.25    0.5\n",
		"\n  Both runs decide the same at every step; the entries differ in 1 config field.\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
}

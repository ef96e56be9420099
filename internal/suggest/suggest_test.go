package suggest

import "testing"

func TestClosest(t *testing.T) {
	models := []string{"meta/llama-3.1-70b-instruct", "meta/llama-3.1-8b-instruct"}
	for _, tc := range []struct {
		name  string
		cands []string
		want  string
		ok    bool
	}{
		{"meta/llama-3.1-70b-instruc", models, "meta/llama-3.1-70b-instruct", true},
		{"meta/llama-3.1-8b-instrct", models, "meta/llama-3.1-8b-instruct", true},
		{"meta/llama-3.1-8b-instruct", models, "", false}, // exact: nothing to suggest
		{"mistral/mixtral", models, "", false},
		{"model-b", []string{"model-a"}, "model-a", true},
		{"MODEL-A", []string{"model-a"}, "model-a", true},
		{"STARGATE_LAST_CLUSTER_TTLL", []string{"STARGATE_LAST_CLUSTER_ENABLED", "STARGATE_LAST_CLUSTER_TTL"}, "STARGATE_LAST_CLUSTER_TTL", true},
		{"STARGATE_LAST_CLUSTER_FOO", []string{"STARGATE_LAST_CLUSTER_TTL"}, "", false}, // a shared prefix is not a near miss
		{"x", nil, "", false},
		{"ab", []string{"xy"}, "", false}, // at most half the name changed
		{"abcd", []string{"abxy"}, "abxy", true},
		{"abc", []string{"xyz"}, "", false},
	} {
		got, ok := Closest(tc.name, tc.cands)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if got := DidYouMean("model-b", []string{"model-a"}); got != `; did you mean "model-a"?` {
		t.Errorf("DidYouMean = %q", got)
	}
	if got := DidYouMean("zzz", []string{"model-a"}); got != "" {
		t.Errorf("DidYouMean far = %q", got)
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"", "abc", 3}, {"kitten", "sitting", 3}, {"scan", "scna", 2}, {"ttl", "ttll", 1}} {
		if got := Distance(tc.a, tc.b); got != tc.d || Distance(tc.b, tc.a) != tc.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
	}
}

package validate

import (
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
)

// TestRangeRowsHaveCodes fails when a registry row gains a Range without a
// diagnostic code for it (rangeRules).
func TestRangeRowsHaveCodes(t *testing.T) {
	for _, f := range lb.Fields() {
		if f.Range != nil && rangeRules[f].code == "" {
			t.Errorf("%s has a range but no entry in rangeRules", f.Name)
		}
	}
}

// TestUnsupportedHintSuggestions checks the V18 "did you mean" through
// internal/suggest: a case slip is suggested, a key far from every field
// is not, a field of another algorithm names that algorithm.
func TestUnsupportedHintSuggestions(t *testing.T) {
	for _, c := range []struct {
		alg  lb.Algorithm
		key  string
		want string
	}{
		{lb.WaitAndWiden, "MAX_QUEUED", "MAX_QUEUED: did you mean max_queued?"},
		{lb.WaitAndWiden, "max_queue", "max_queue: did you mean max_queued?"},
		{lb.Pulsar, "max_queue", "max_queue: did you mean max_queued (a field of wait-and-widen, pulsar-wait-and-widen)?"},
		{lb.WaitAndWiden, "xed", "xed is not an lb-config field"},
		{lb.PowerOfN, "band_widen_interval_ms", "band_widen_interval_ms is for pulsar-wait-and-widen"},
	} {
		got := unsupportedHint(c.alg, []string{c.key})
		if !strings.HasPrefix(got, c.want+";") {
			t.Errorf("%s on %s: hint %q, want it to start with %q", c.key, c.alg, got, c.want)
		}
	}
}

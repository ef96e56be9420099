package cli

import (
	"strings"
	"testing"
)

// TestContextValuesRedactLikeEverySource: a context's URL settings are
// printed through the same redaction as every other source, so a lone
// token and an unparsable URL's password are hidden too (url.Redacted,
// used before, printed both).
func TestContextValuesRedactLikeEverySource(t *testing.T) {
	for _, v := range []string{"http://TOKENSECRET@127.0.0.1:9/metrics", "http://u:TOKENSECRET%zz@127.0.0.1:9/", "https://u:TOKENSECRET@h/x"} {
		if got := redactValue(v); strings.Contains(got, "TOKENSECRET") {
			t.Errorf("redactValue(%q) = %q: the secret is printed", v, got)
		}
	}
	if got := redactValue("examples/lb.yaml"); got != "examples/lb.yaml" {
		t.Errorf("a path changed: %q", got)
	}
}

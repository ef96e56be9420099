package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/ui"
)

// The demo reads store get's result as a value (emit), in text mode as
// in JSON mode, never from the printed text.
func TestStoreGetEmitsItsValue(t *testing.T) {
	seedTestDMap(t, 5)
	args := storeArgs(t, "get", "--routing-key", "fn-alpha", "--model", "company/model", "--session-id", "session-1", "--source", "prompt_cache_key")
	for _, mode := range []string{"text", "json"} {
		var got []*getJSON
		var out, errb strings.Builder
		s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
		code := run(context.Background(), append(args, "--output", mode), s, func(doc string, v any) {
			if g, ok := v.(getJSON); ok && doc == "store-get" {
				got = append(got, &g)
			}
		})
		if code != 0 || len(got) != 1 {
			t.Fatalf("%s: exit %d, %d values\n%s%s", mode, code, len(got), out.String(), errb.String())
		}
		if c, err := clusterFromGet(got[0]); err != nil || c != "cluster-b" {
			t.Errorf("%s: cluster %q, %v; want cluster-b", mode, c, err)
		}
	}
	f := false
	for _, g := range []*getJSON{nil, {entryJSON: entryJSON{Found: &f}}} {
		if _, err := clusterFromGet(g); err == nil {
			t.Errorf("clusterFromGet(%+v) found a cluster", g)
		}
	}
}

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

// Options are validated without cobra: the run functions take the
// options struct, and a bad value is a usage error before anything
// starts.
func TestOptionsValidateWithoutCobra(t *testing.T) {
	usage := func(err error) bool {
		ee, ok := err.(*ExitError)
		return ok && ee.Code == ExitUsage
	}
	if err := (&demoOptions{simRequests: 50}).validate(nil); !usage(err) {
		t.Errorf("demo --sim-requests 50: %v", err)
	}
	if err := (&demoOptions{simRequests: 100, step: 9}).validate(nil); !usage(err) {
		t.Errorf("demo --step 9: %v", err)
	}
	if err := (&demoOptions{cmdInput: given("step"), simRequests: 100}).validate(nil); !usage(err) {
		t.Errorf("demo --step 0: %v", err)
	}
	if err := (&demoOptions{simRequests: 100}).validate(nil); err != nil {
		t.Errorf("demo: %v", err)
	}
	if err := (&demoOptions{simRequests: 100, only: "store"}).validate(nil); err != nil {
		t.Errorf("demo --only store: %v", err)
	}
	var s strings.Builder
	env := &Env{Streams: &ui.Streams{Out: &s, Err: &s, Getenv: func(string) string { return "" }}, Global: &GlobalOptions{}}
	ok := storeServeOptions{conn: &connFlags{}, bind: "127.0.0.1", port: 0, demoEntries: 10, demoTTL: "1h"}
	if err := ok.validate(env); err != nil || ok.ttl.String() != "1h0m0s" || ok.conn.dmap != "stargate-last-cluster" {
		t.Errorf("serve-dev: %v %v %q", ok.ttl, err, ok.conn.dmap)
	}
	for _, bad := range []storeServeOptions{
		{bind: "10.0.0.1", demoEntries: 10, demoTTL: "1h"},
		{bind: "127.0.0.1", port: 70000, demoEntries: 10, demoTTL: "1h"},
		{bind: "127.0.0.1", demoEntries: 1, demoTTL: "1h"},
		{bind: "127.0.0.1", demoEntries: 10, demoTTL: "x"},
		{bind: "127.0.0.1", demoEntries: 10, demoTTL: "1h", conn: &connFlags{dmap: "bad name"}},
	} {
		s.Reset()
		if bad.conn == nil {
			bad.conn = &connFlags{}
		}
		if err := runValidated(context.Background(), env, &bad, runStoreServeDev); !usage(err) || s.Len() != 0 {
			t.Errorf("serve-dev %+v: %v (printed %q)", bad, err, s.String())
		}
	}
}

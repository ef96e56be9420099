package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/store/storetest"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// The store command tests share one 3-member loopback Olric cluster with
// replica count 2, started on first use and left running until the test
// binary exits (this package has no TestMain of its own). Each test uses
// its own DMap.
var (
	cliClusterOnce sync.Once
	cliCluster     *storetest.Cluster
	cliClusterErr  error
)

func storeCluster(t *testing.T) *storetest.Cluster {
	t.Helper()
	cliClusterOnce.Do(func() { cliCluster, cliClusterErr = storetest.New(3, 2) })
	if cliClusterErr != nil {
		t.Fatalf("start olric cluster: %v", cliClusterErr)
	}
	return cliCluster
}

type result struct {
	out, err string
	code     int
}

// lcctl runs the command in-process with the given stdin and environment.
func lcctl(t *testing.T, stdin string, env map[string]string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(stdin), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}
	code := Main(context.Background(), args, s)
	return result{out.String(), errb.String(), code}
}

// storeArgs prefixes args with the cluster address and the test's DMap.
func storeArgs(t *testing.T, args ...string) []string {
	cl := storeCluster(t)
	return append([]string{"store", "--olric", cl.AddrList(), "--dmap", testDMap(t)}, args...)
}

// testDMaps names the DMap of each running test: the cluster outlives a
// test, so a name must not be used twice in one test binary (go test
// -count=2 runs every test again against the entries its first run left).
var (
	testDMapsMu sync.Mutex
	testDMaps   = map[*testing.T]string{}
	testDMapSeq int
)

// testDMap returns the DMap of t's run: "cli-" + the test's name + a
// number, the same for every call within the run and never used before
// in this process.
func testDMap(t *testing.T) string {
	testDMapsMu.Lock()
	defer testDMapsMu.Unlock()
	if d, ok := testDMaps[t]; ok {
		return d
	}
	testDMapSeq++
	d := fmt.Sprintf("cli-%s-%d", regexp.MustCompile(`[^A-Za-z0-9_-]+`).ReplaceAllString(t.Name(), "_"), testDMapSeq)
	testDMaps[t] = d
	t.Cleanup(func() {
		testDMapsMu.Lock()
		defer testDMapsMu.Unlock()
		delete(testDMaps, t)
	})
	return d
}

// seedTestDMap writes n demo sessions (TTL 1 h) into the test's own DMap
// (the one storeArgs names).
func seedTestDMap(t *testing.T, n int) {
	t.Helper()
	c, err := store.Connect(context.Background(), store.Options{Addrs: storeCluster(t).Addrs(), DMap: storeArgs(t)[4]})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := store.SeedDemo(context.Background(), c, store.DemoSessions(n), time.Hour); err != nil {
		t.Fatal(err)
	}
}

func wantCode(t *testing.T, r result, code int, args []string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("lcctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.out, r.err)
	}
}

// runStore runs `lcctl store --olric <cluster> --dmap <test's> args...`
// and checks the exit code.
func runStore(t *testing.T, code int, args ...string) result {
	t.Helper()
	a := storeArgs(t, args...)
	r := lcctl(t, "", nil, a...)
	wantCode(t, r, code, a)
	return r
}

func TestStoreKeyCommand(t *testing.T) {
	vec1 := "lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6"
	ak1 := "mt:v1:session:84097828fc31a8c8d29210df48901a85de7fd013f686b17be77d1be29cb7a98b"
	tests := []struct {
		name string
		args []string
		out  string
	}{
		{"session id", []string{"--routing-key", "fn-alpha", "--model", "company/model", "--session-id", "session-1", "--source", "prompt_cache_key"}, vec1 + "\n"},
		{"header passes the affinity key through", []string{"--routing-key", "fn-alpha", "--model", "company/model", "--session-id", "  " + ak1, "--source", "header"}, vec1 + "\n"},
		{"affinity key", []string{"--client-model", "fn-alpha/company/model", "--affinity-key", ak1}, vec1 + "\n"},
		{"empty parts", []string{"--routing-key", "", "--model", "", "--affinity-key", ""}, "lc:v1:9d908ecfb6b256def8b49a7c504e6c889c4b0e41fe6ce3e01863dd7b61a20aa0\n"},
		{"show session", []string{"--routing-key", "fn-alpha", "--model", "company/model", "--session-id", "session-1", "--source", "conversation_id", "--show-session"},
			vec1 + ` routing_key="fn-alpha" model="company/model" affinity_key="` + ak1 + `"` + "\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"store", "key"}, tc.args...)
			r := lcctl(t, "", nil, args...)
			wantCode(t, r, 0, args)
			if r.out != tc.out {
				t.Fatalf("stdout %q, want %q", r.out, tc.out)
			}
			if !strings.Contains(strings.Join(tc.args, " "), "--show-session") && strings.Contains(r.out+r.err, "session-1") {
				t.Fatalf("the raw session id was printed without --show-session: %q", r.out)
			}
		})
	}

	r := lcctl(t, "", nil, "store", "key", "-o", "json", "--routing-key", "fn-alpha", "--model", "company/model", "--session-id", "session-1", "--source", "prompt_cache_key")
	var j map[string]any
	if err := json.Unmarshal([]byte(r.out), &j); err != nil || j["key"] != vec1 || j["partition"] != float64(97) || j["partitions"] != float64(271) || j["session"] != nil {
		t.Fatalf("json %q: %v", r.out, err)
	}

	usage := map[string][]string{
		"no parts":                {},
		"payload source":          {"--model", "m", "--session-id", "s", "--source", "payload"},
		"both affinity and id":    {"--model", "m", "--affinity-key", "k", "--session-id", "s", "--source", "header"},
		"control char in id":      {"--model", "m", "--session-id", "a\tb", "--source", "prompt_cache_key"},
		"client model and model":  {"--client-model", "fn/m", "--model", "m", "--affinity-key", "k"},
		"client model without /":  {"--client-model", "m", "--affinity-key", "k"},
		"unknown source":          {"--model", "m", "--session-id", "s", "--source", "body"},
		"zero partitions":         {"--model", "m", "--affinity-key", "k", "--partitions", "0"},
		"batch and session flags": {"--batch", "--model", "m"},
	}
	for name, a := range usage {
		args := append([]string{"store", "key"}, a...)
		r := lcctl(t, "", nil, args...)
		if r.code != ExitUsage || r.err == "" {
			t.Errorf("%s: exit %d, stderr %q; want 2 and a message", name, r.code, r.err)
		}
		if strings.Contains(r.err, "a\tb") {
			t.Errorf("%s: the session id is echoed in %q", name, r.err)
		}
	}
}

func TestStoreKeyBatch(t *testing.T) {
	in := `{"routing_key":"fn-alpha","model":"company/model","session_id":"session-1","source":"prompt_cache_key"}

{"client_model":"e2e/e2e-model","session_id":"e2e-last-cluster-session","source":"header"}
{"model":"m","session_id":"s","source":"payload"}
not json
{"routing_key":"fn-alpha","model":"company-name/model-name","session_id":"pck-1","source":"prompt_cache_key"}
`
	r := lcctl(t, in, nil, "store", "key", "--batch")
	wantCode(t, r, ExitUsage, []string{"store", "key", "--batch"})
	want := "lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6\n" +
		"lc:v1:22b2bec6305b7f927fa937e701a7f21f7b4477647161f751669673c68dd0401e\n" +
		"lc:v1:32f9796aa11d986e7b42cf7943dfae3255ea11338a0d3bf4417ac0ff34cab0e3\n"
	if r.out != want {
		t.Fatalf("stdout %q, want %q", r.out, want)
	}
	for _, s := range []string{"stdin:4: source \"payload\" is never eligible", "stdin:5: not a JSON object", "2 of 5 lines rejected"} {
		if !strings.Contains(r.err, s) {
			t.Errorf("stderr %q lacks %q", r.err, s)
		}
	}

	r = lcctl(t, in, nil, "store", "key", "--batch", "-o", "json", "--show-session")
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d JSON lines: %q", len(lines), r.out)
	}
	var first, bad keyJSON
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.Line != 1 || first.Session == nil || first.Session.RoutingKey != "fn-alpha" {
		t.Errorf("line 1 %q: %v", lines[0], err)
	}
	if err := json.Unmarshal([]byte(lines[3]), &bad); err != nil || bad.Line != 5 || bad.Error == "" || bad.Key != "" {
		t.Errorf("line 5 %q: %v", lines[3], err)
	}
	r = lcctl(t, "\n\n", nil, "store", "key", "--batch")
	if r.code != ExitUsage || !strings.Contains(r.err, "no JSON lines") {
		t.Errorf("empty batch: %+v", r)
	}
}

func TestStoreEntryCommands(t *testing.T) {
	session := []string{"--routing-key", "fn-alpha", "--model", "company/model", "--session-id", "session-1", "--source", "prompt_cache_key"}
	key := "lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6"
	run := func(code int, args ...string) result { t.Helper(); return runStore(t, code, args...) }

	r := run(1, append([]string{"get"}, session...)...)
	if !strings.Contains(r.out, "(not found)") || !strings.Contains(r.err, "no entry for this key") {
		t.Fatalf("get of an absent key: %+v", r)
	}
	r = run(0, append([]string{"put", "--cluster", "cluster-b"}, session...)...)
	if !strings.Contains(r.out, "dry run: would write "+key+" = cluster-b (ttl 10m0s; now: no entry)") {
		t.Fatalf("put dry run: %q", r.out)
	}
	run(1, append([]string{"get"}, session...)...) // the dry run wrote nothing
	r = run(0, append([]string{"put", "--cluster", "cluster-b", "--ttl", "90s", "--yes"}, session...)...)
	if !strings.HasPrefix(r.out, "wrote "+key+" = cluster-b (ttl 1m30s; was: no entry)") {
		t.Fatalf("put: %q", r.out)
	}
	dmap := storeArgs(t)[4]
	part := store.Partition(dmap, key, 271) // 97 in the gateway's DMap (gateway.md §3.3)
	r = run(0, "get", "--key", key)
	for _, s := range []string{"key          " + key, "cluster      cluster-b", "ttl          1m", fmt.Sprintf("partition    %d of 271", part), "owner        127.0.0.1:", "replicas     127.0.0.1:"} {
		if !strings.Contains(r.out, s) {
			t.Errorf("get output lacks %q:\n%s", s, r.out)
		}
	}
	r = run(0, "get", "--key", key, "-o", "json", "--show-session")
	var g getJSON
	if err := json.Unmarshal([]byte(r.out), &g); err != nil {
		t.Fatal(err)
	}
	if *g.Found != true || g.Cluster != "cluster-b" || *g.TTLMs <= 60000 || *g.TTLMs > 90000 || g.Partition != part || g.Owner == "" || g.ExpiresAt == nil || g.Session != nil {
		t.Fatalf("get json: %s", r.out)
	}
	r = run(1, append([]string{"put", "--cluster", "cluster-c", "--if-absent", "--yes"}, session...)...)
	if !strings.Contains(r.err, "key already exists: condition not met: nothing written") {
		t.Errorf("put --if-absent on a present key: %q", r.err)
	}
	if r := run(0, "get", "--key", key); !strings.Contains(r.out, "cluster      cluster-b") {
		t.Errorf("a refused --if-absent put changed the entry:\n%s", r.out)
	}
}

func TestStorePutDelete(t *testing.T) {
	key := "lc:v1:22b2bec6305b7f927fa937e701a7f21f7b4477647161f751669673c68dd0401e"
	run := func(code int, args ...string) result { t.Helper(); return runStore(t, code, args...) }
	run(0, "put", "--key", key, "--cluster", "cluster-a", "--yes")
	r := run(1, "put", "--key", key, "--cluster", "cluster-c", "--if-absent", "--yes")
	if !strings.Contains(r.err, "key already exists") {
		t.Errorf("if-absent: %q", r.err)
	}
	r = run(0, "del", "--key", key)
	if !strings.Contains(r.out, "dry run: would delete "+key+" (was cluster-a, ttl ") {
		t.Errorf("del dry run: %q", r.out)
	}
	r = run(1, "del", "--key", key, "--if-cluster", "cluster-b", "--yes")
	if !strings.Contains(r.out, "it points to cluster-a, not cluster-b") {
		t.Errorf("del if-cluster: %q", r.out)
	}
	r = run(0, "del", "--key", key, "--yes", "-o", "json")
	var d delJSON
	if err := json.Unmarshal([]byte(r.out), &d); err != nil || d.Outcome != "deleted" || !d.Applied || d.Before == nil || d.Before.Cluster != "cluster-a" {
		t.Fatalf("del json %q: %v", r.out, err)
	}
	r = run(1, "del", "--key", key, "--yes")
	if !strings.Contains(r.out, "no entry "+key) {
		t.Errorf("del of an absent key: %q", r.out)
	}
}

func TestStoreScanEvictStats(t *testing.T) {
	cl := storeCluster(t)
	a := storeArgs(t)
	c, err := store.Connect(context.Background(), store.Options{Addrs: cl.Addrs(), DMap: a[4]})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sessions := store.DemoSessions(120)
	if _, err := store.SeedDemo(context.Background(), c, sessions, time.Hour); err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, s := range sessions {
		per[s.Cluster]++
	}
	run := func(code int, args ...string) result { t.Helper(); return runStore(t, code, args...) }

	// Text scan: one line per entry, then the summary.
	r := run(0, "scan")
	lines := strings.Split(r.out, "\n")
	entryLine := regexp.MustCompile(`^lc:v1:[0-9a-f]{64}  cluster-[abc]\s+(59m\d+|1h0m0)s$`)
	n := 0
	for _, l := range lines {
		if entryLine.MatchString(l) {
			n++
		}
	}
	if n != 120 {
		t.Fatalf("scan printed %d entry lines, want 120:\n%s", n, r.out)
	}
	for _, s := range []string{"(complete)", "120 keys, 120 live entries", fmt.Sprintf("cluster-a  %8d", per["cluster-a"]), fmt.Sprintf("cluster-c  %8d", per["cluster-c"])} {
		if !strings.Contains(r.out, s) {
			t.Errorf("scan summary lacks %q:\n%s", s, r.out)
		}
	}

	// JSON lines with --cluster: entries of cluster-c, then the summary.
	r = run(0, "scan", "--cluster", "cluster-c", "-o", "json")
	sc := bufio.NewScanner(strings.NewReader(r.out))
	entries := 0
	var summary scanSummaryJSON
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		switch e["type"] {
		case "entry":
			entries++
			if e["cluster"] != "cluster-c" || e["valid"] != true || e["ttl_ms"].(float64) < 3.5e6 || e["expires_at"] == nil {
				t.Errorf("entry %v", e)
			}
			for _, k := range []string{"expires_at", "written_at"} {
				if v, _ := e[k].(string); !storeTimeRE.MatchString(v) {
					t.Errorf("entry %s %q: want RFC 3339 UTC with 3 fractional digits", k, v)
				}
			}
		case "summary":
			if err := json.Unmarshal(sc.Bytes(), &summary); err != nil {
				t.Fatal(err)
			}
		default:
			t.Errorf("line without a type: %q", sc.Text())
		}
	}
	if entries != per["cluster-c"] || summary.Matched != entries || summary.Entries != 120 || !summary.Complete || summary.PerCluster["cluster-b"] != per["cluster-b"] {
		t.Fatalf("%d entries, summary %+v", entries, summary)
	}

	r = run(0, "scan", "--limit", "3", "--summary-only")
	if !strings.Contains(r.out, "(stopped at --limit; counts cover the keys examined so far)") || strings.Contains(r.out, "lc:v1:") {
		t.Errorf("limit: %q", r.out)
	}
	// --cluster with --limit: the summary counts add up (keys, entries,
	// per_cluster and matched once disagreed).
	r = run(0, "scan", "--cluster", "cluster-c", "--limit", "5", "-o", "json")
	lines = strings.Split(strings.TrimSpace(r.out), "\n")
	summary = scanSummaryJSON{}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &summary); err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, n := range summary.PerCluster {
		sum += n
	}
	if len(lines) != 6 || summary.Matched != 5 || !summary.Truncated || summary.PerCluster["cluster-c"] != 5 ||
		summary.Keys != summary.Entries+summary.Vanished+summary.Unreadable || sum != summary.Entries || summary.Problems == nil {
		t.Errorf("scan --cluster cluster-c --limit 5: %d lines, summary %+v", len(lines), summary)
	}

	// Evict: dry run, then --yes.
	r = run(0, "evict", "--cluster", "cluster-c", "--sample", "3")
	if !strings.Contains(r.out, fmt.Sprintf("dry run: %d entries point to cluster-c (of 120 entries scanned", per["cluster-c"])) || strings.Count(r.out, "\n  lc:v1:") != 3 || !strings.Contains(r.out, "run again with --yes") {
		t.Fatalf("evict dry run:\n%s", r.out)
	}
	r = run(0, "evict", "--cluster", "cluster-c", "--yes", "-o", "json")
	var ev evictJSON
	if err := json.Unmarshal([]byte(r.out), &ev); err != nil {
		t.Fatal(err)
	}
	if !ev.Applied || ev.Deleted != per["cluster-c"] || ev.Failed != 0 || ev.SkippedChanged+ev.SkippedGone != 0 || ev.Candidates != per["cluster-c"] {
		t.Fatalf("evict: %s", r.out)
	}
	// Documented keys are present when empty (errors [], scan problems []).
	var evRaw struct {
		Errors json.RawMessage `json:"errors"`
		Scan   struct {
			Problems json.RawMessage `json:"problems"`
		} `json:"scan"`
	}
	if err := json.Unmarshal([]byte(r.out), &evRaw); err != nil || string(evRaw.Errors) != "[]" || string(evRaw.Scan.Problems) != "[]" {
		t.Errorf("evict JSON: errors %s, scan.problems %s (want [] and []): %v", evRaw.Errors, evRaw.Scan.Problems, err)
	}
	r = run(0, "evict", "--cluster", "cluster-c", "--yes")
	if !strings.Contains(r.out, "evicted cluster-c: deleted 0, skipped 0 (0 changed since the scan, 0 already gone), failed 0 (of 0 candidates") {
		t.Errorf("second evict: %q", r.out)
	}

	// Stats.
	r = run(0, "stats", "-o", "json")
	var st statsJSON
	if err := json.Unmarshal([]byte(r.out), &st); err != nil {
		t.Fatal(err)
	}
	left := 120 - per["cluster-c"]
	if len(st.Members) != 3 || st.Partitions != 271 || st.ReplicaCount != 2 || st.Entries != left || st.Distribution == nil || st.Distribution.PerCluster["cluster-a"] != per["cluster-a"] {
		t.Fatalf("stats: %s", r.out)
	}
	var stRaw struct {
		Members []map[string]json.RawMessage `json:"members"`
	}
	if err := json.Unmarshal([]byte(r.out), &stRaw); err != nil {
		t.Fatal(err)
	}
	for _, m := range stRaw.Members {
		for _, k := range []string{"error", "version", "version_note", "uptime_seconds"} {
			if _, ok := m[k]; !ok {
				t.Errorf("stats JSON: member without %q: %v", k, m)
			}
		}
		// The embedded Olric is v0.7.4, whose STATS says 0.7.3.
		if string(m["version"]) != `"0.7.3"` || !strings.Contains(string(m["version_note"]), "Olric v0.7.4 also reports 0.7.3") {
			t.Errorf("stats JSON: version %s, version_note %s", m["version"], m["version_note"])
		}
		if string(m["error"]) != `""` {
			t.Errorf("stats JSON: a member that answered has error %s", m["error"])
		}
	}
	r = run(0, "stats", "--no-scan")
	if !strings.Contains(r.out, "entries, counted") || !strings.Contains(r.out, "3 members, 271 partitions, replica count 2") || strings.Contains(r.out, "CLUSTER") ||
		strings.Count(r.out, " 0.7.3* ") != 3 || strings.Count(r.out, "\n* Olric v0.7.4 also reports 0.7.3 (its ReleaseVersion constant was not bumped)") != 1 {
		t.Errorf("stats text:\n%s", r.out)
	}
	r = run(0, "probe")
	if strings.Count(r.out, " ok ") != 6 {
		t.Errorf("probe:\n%s", r.out)
	}
}

func TestStoreBadInput(t *testing.T) {
	cl := storeCluster(t)
	addr := cl.Addrs()[0]
	good := "lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6"
	tests := []struct {
		name string
		env  map[string]string
		args []string
		code int
		msg  string
	}{
		{"invalid ttl", nil, []string{"store", "--olric", addr, "put", "--key", good, "--cluster", "b", "--ttl", "30"}, 2, "--ttl: invalid ttl \"30\""},
		{"ttl under 1ms", nil, []string{"store", "--olric", addr, "put", "--key", good, "--cluster", "b", "--ttl", "500us"}, 2, "without expiry"},
		{"bad address", nil, []string{"store", "--olric", "10.0.0.1", "get", "--key", good}, 2, "not host:port"},
		{"url address", nil, []string{"store", "--olric", "redis://h:3320", "get", "--key", good}, 2, "is a URL"},
		{"no address", nil, []string{"store", "get", "--key", good}, 2, "LCCTL_OLRIC_ADDRS"},
		{"env address", map[string]string{EnvOlricAddrs: "h:99999"}, []string{"store", "get", "--key", good}, 2, "1-65535"},
		{"foreign key", nil, []string{"store", "--olric", addr, "get", "--key", "rate-limit:x"}, 2, "must start with \"lc:v1:\""},
		{"short key", nil, []string{"store", "--olric", addr, "del", "--key", "lc:v1:abc", "--yes"}, 2, "got 9 bytes"},
		{"huge value", nil, []string{"store", "--olric", addr, "put", "--key", good, "--cluster", strings.Repeat("x", 5000)}, 2, "5000 bytes"},
		{"non-printable value", nil, []string{"store", "--olric", addr, "put", "--key", good, "--cluster", "a\x1bb"}, 2, "0x1b"},
		{"empty cluster", nil, []string{"store", "--olric", addr, "evict", "--cluster", ""}, 2, "must not be empty"},
		{"missing cluster", nil, []string{"store", "--olric", addr, "evict"}, 2, "--cluster is required"},
		{"negative rate", nil, []string{"store", "--olric", addr, "evict", "--cluster", "b", "--max-rate", "-1"}, 2, "--max-rate"},
		{"rate too small to pace", nil, []string{"store", "--olric", addr, "evict", "--cluster", "b", "--yes", "--max-rate", "1e-300"}, 2, "want 0 (no limit) or 0.01-1e+09"},
		{"infinite rate", nil, []string{"store", "--olric", addr, "evict", "--cluster", "b", "--max-rate", "+Inf"}, 2, "want 0 (no limit) or 0.01-1e+09"},
		{"key and session", nil, []string{"store", "--olric", addr, "get", "--key", good, "--model", "m"}, 2, "not both"},
		{"bad dmap", nil, []string{"store", "--olric", addr, "--dmap", "a b", "scan"}, 2, "--dmap"},
		{"bad map-addr", nil, []string{"store", "--olric", addr, "--map-addr", "x", "scan"}, 2, "MEMBER=LOCAL"},
		{"serve-dev on a public address", nil, []string{"store", "serve-dev", "--bind", "0.0.0.0"}, 2, "loopback"},
		{"unreachable", nil, []string{"store", "--olric", "127.0.0.1:1", "--dial-timeout", "200ms", "get", "--key", good}, 1, "cannot connect to Olric: unreachable"},
		// Olric's expiry arithmetic overflows: the put reported success
		// and the entry was gone at once.
		{"ttl over 100 years", nil, []string{"store", "--olric", addr, "put", "--key", good, "--cluster", "b", "--ttl", "2562047h", "--yes"}, 2, "over 100 years"},
		// An unset shell variable (--olric "$ADDRS") silently fell back to
		// $LCCTL_OLRIC_ADDRS, possibly another cluster; --dmap "" to the
		// default DMap.
		{"empty --olric", map[string]string{EnvOlricAddrs: addr}, []string{"store", "--olric", "", "get", "--key", good}, 2, "--olric is empty"},
		{"empty --dmap", nil, []string{"store", "--olric", addr, "--dmap", "", "get", "--key", good}, 2, "--dmap is empty"},
		// Both printed the help and exited 0 (lcctl check exits 2).
		{"no subcommand", nil, []string{"store"}, 2, "missing subcommand: lcctl store needs one of key, get, put, del, scan, evict, stats, probe, serve-dev"},
		{"unknown subcommand", nil, []string{"store", "scna"}, 2, `unknown command "scna" for "lcctl store"`},
		// Read with os.ReadFile until memory ran out.
		{"endless password file", nil, []string{"store", "--olric", addr, "--password-file", "/dev/zero", "get", "--key", good}, 2, "--password-file: failed to read /dev/zero: larger than"},
		{"endless CA file", nil, []string{"store", "--olric", addr, "--tls-ca", "/dev/zero", "get", "--key", good}, 2, "--tls-ca: failed to read /dev/zero: larger than"},
		{"endless client certificate", nil, []string{"store", "--olric", addr, "--tls-cert", "/dev/zero", "--tls-key", "/dev/zero", "get", "--key", good}, 2, "--tls-cert: failed to read /dev/zero: larger than"},
		{"too many seeds", nil, []string{"store", "--olric", strings.Repeat(addr+",", 40) + "h:1", "get", "--key", good}, 2, "give at most 32 seeds"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := lcctl(t, "", tc.env, tc.args...)
			if r.code != tc.code || !strings.Contains(r.err, tc.msg) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", r.code, r.err, tc.code, tc.msg)
			}
			if strings.Contains(r.err, "panic") || len(r.err) > 600 {
				t.Fatalf("stderr %q", r.err)
			}
		})
	}
}

func TestStoreServeDev(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var out testutil.SyncBuffer
	done := make(chan int, 1)
	go func() {
		s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: io.Discard, Getenv: func(string) string { return "" }}
		done <- Main(ctx, []string{"store", "serve-dev", "--port", "0", "--seed-demo", "--demo-entries", "50"}, s)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "serving until interrupted") {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("serve-dev did not come up:\n%s", out.String())
		}
		select {
		case code := <-done:
			t.Fatalf("serve-dev exited %d:\n%s", code, out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	per := map[string]int{}
	for _, s := range store.DemoSessions(50) {
		per[s.Cluster]++
	}
	seeded := fmt.Sprintf("seeded 50 demo sessions (ttl 1h0m0s): cluster-a %d cluster-b %d cluster-c %d", per["cluster-a"], per["cluster-b"], per["cluster-c"])
	m := regexp.MustCompile(`export LCCTL_OLRIC_ADDRS=(127\.0\.0\.1:\d+)\n`).FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), seeded) {
		t.Fatalf("serve-dev output:\n%s", out.String())
	}
	env := map[string]string{EnvOlricAddrs: m[1]}
	r := lcctl(t, "", env, "store", "get", "--routing-key", "fn-alpha", "--model", "company/model", "--session-id", "session-1", "--source", "prompt_cache_key")
	if r.code != 0 || !strings.Contains(r.out, "cluster      cluster-b") {
		t.Fatalf("get demo session: %+v", r)
	}
	r = lcctl(t, "", env, "store", "evict", "--cluster", "cluster-c", "--yes")
	if r.code != 0 || !strings.Contains(r.out, fmt.Sprintf("deleted %d,", per["cluster-c"])) {
		t.Fatalf("evict demo cluster: %+v", r)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(out.String(), "stopping") {
			t.Fatalf("serve-dev exited %d:\n%s", code, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve-dev did not stop after the context was cancelled")
	}
}

// TestScanSummaryPlurals: counts of one read "1 key", "1 live entry", not
// "1 keys".
func TestScanSummaryPlurals(t *testing.T) {
	var b strings.Builder
	writeScanSummary(&b, store.ScanReport{DMap: "d", Keys: 1, Entries: 1, Matched: 1, Restarts: 1, Invalid: 1, NoExpiry: 1, Ignored: 1, Unreadable: 1,
		PerCluster: map[string]int{"a": 1}}, "a")
	out := b.String()
	for _, want := range []string{": 1 key, 1 live entry, resumed 1 time\n", "shown: 1 entry pointing to a\n", "1 entry holds a value", "1 entry has no TTL",
		"1 key starts with lc:v1: but is not a store key; ignored", "1 key could not be read"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	b.Reset()
	writeScanSummary(&b, store.ScanReport{DMap: "d", Keys: 2, Entries: 0, Complete: true, PerCluster: map[string]int{}}, "")
	if !strings.Contains(b.String(), ": 2 keys, 0 live entries\n") {
		t.Errorf("plural counts:\n%s", b.String())
	}
}

// TestStoreProbeUnreachable: a probe that cannot connect names the
// address once: the step line says FAILED, the error (on stderr) says why,
// and the dial error does not repeat the seed.
func TestStoreProbeUnreachable(t *testing.T) {
	r := lcctl(t, "", nil, "store", "--olric", "127.0.0.1:1", "--dial-timeout", "1s", "probe")
	if r.code != 1 || !regexp.MustCompile(`(?m)^connect\s+FAILED \S+$`).MatchString(r.out) {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.out, r.err)
	}
	if n := strings.Count(r.out+r.err, "127.0.0.1:1"); n != 1 || !strings.Contains(r.err, "connection refused") {
		t.Errorf("the address appears %d times, want once:\nstdout:\n%s\nstderr:\n%s", n, r.out, r.err)
	}
}

// storeTimeRE is the documented format of store times.
var storeTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

// TestStoreTimeFormat: expires_at (Olric: ms) and written_at (Olric: ns)
// share one format, RFC 3339 UTC with exactly three fractional digits
// (trailing zeros kept, nanoseconds truncated).
func TestStoreTimeFormat(t *testing.T) {
	loc := time.FixedZone("x", 3600)
	e := store.Entry{Key: "k", Cluster: "c", Valid: true,
		ExpiresAt: time.Date(2026, 11, 30, 1, 10, 14, 150e6, loc),
		WrittenAt: time.Date(2026, 11, 30, 0, 10, 14, 11028687, loc),
		ReadAt:    time.Date(2026, 11, 30, 0, 10, 20, 0, loc)}
	j := newEntryJSON(e)
	if *j.ExpiresAt != "2026-11-30T00:10:14.150Z" || *j.WrittenAt != "2026-11-29T23:10:14.011Z" {
		t.Errorf("expires_at %q, written_at %q", *j.ExpiresAt, *j.WrittenAt)
	}
	e.ExpiresAt = time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	if got := formatStoreTime(e.ExpiresAt); got != "2026-11-30T00:00:00.000Z" {
		t.Errorf("whole second: %q", got)
	}
}

// TestScanProgressLine: the progress line counts entries "shown" only
// when they are printed; --summary-only prints none, so it says "read".
func TestScanProgressLine(t *testing.T) {
	p := store.ScanProgress{Keys: 301, Entries: 301, Matched: 301, Elapsed: 1234 * time.Millisecond}
	for _, c := range []struct {
		o    storeScanOptions
		want string
	}{
		{storeScanOptions{}, "scanning d: 301 keys, 301 entries, 301 shown (1.2s)"},
		{storeScanOptions{summaryOnly: true}, "scanning d: 301 keys, 301 entries read (1.2s)"},
		{storeScanOptions{summaryOnly: true, cluster: "cluster-c"}, "scanning d: 301 keys, 301 entries read, 301 pointing to cluster-c (1.2s)"},
	} {
		if got := scanProgressLine("d", p, &c.o); got != c.want {
			t.Errorf("%+v: %q, want %q", c.o, got, c.want)
		}
	}
	// On a terminal stderr, a real --summary-only scan draws that line.
	seedTestDMap(t, 5)
	var out, errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, ErrTTY: true, Getenv: func(string) string { return "" }}
	if code := Main(context.Background(), storeArgs(t, "scan", "--summary-only"), s); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(errb.String(), "5 entries read (") || strings.Contains(errb.String(), "shown") {
		t.Errorf("progress on stderr: %q", errb.String())
	}
}

// TestEvictNoMatchHint: an evict that finds nothing names the clusters
// the scan saw (most entries first, at most five) and a close one, and
// still exits 0.
func TestEvictNoMatchHint(t *testing.T) {
	per := map[string]int{"cluster-a": 149, "cluster-b": 92, "cluster-c": 59}
	for _, c := range []struct{ cluster, want string }{
		{"nosuch", "no entry points to nosuch; the scan saw cluster-a (149), cluster-b (92), cluster-c (59)"},
		{"clustr-b", `no entry points to clustr-b; the scan saw cluster-a (149), cluster-b (92), cluster-c (59); did you mean "cluster-b"?`},
		// Case, one byte more or less, two swapped: a hint.
		{"cluster-C", `; did you mean "cluster-c"?`},
		{"cluster-bb", `; did you mean "cluster-b"?`},
		{"culster-a", `; did you mean "cluster-a"?`},
		// One substituted byte is how sibling clusters differ (a second
		// evict of cluster-d after a successful one): no hint.
		{"cluster-d", "no entry points to cluster-d; the scan saw cluster-a (149), cluster-b (92), cluster-c (59)"},
		{"cluster-x", "no entry points to cluster-x; the scan saw cluster-a (149), cluster-b (92), cluster-c (59)"},
	} {
		if got := evictNoMatchHint(c.cluster, per); !strings.HasSuffix(got, c.want) || (strings.HasPrefix(c.want, "no entry") && got != c.want) {
			t.Errorf("%s: %q, want %q", c.cluster, got, c.want)
		}
	}
	if got := evictNoMatchHint("x", map[string]int{}); got != "" {
		t.Errorf("empty scan: %q", got)
	}
	many := map[string]int{"a": 1, "b": 7, "c": 3, "d": 3, "e": 9, "f": 2, "g": 5}
	if got, want := evictNoMatchHint("zzz", many), "the scan saw e (9), b (7), g (5), c (3), d (3), … (7 clusters in all)"; !strings.HasSuffix(got, want) {
		t.Errorf("%q, want the suffix %q", got, want)
	}

	seedTestDMap(t, 30)
	r := runStore(t, 0, "evict", "--cluster", "cluster-x")
	if !strings.Contains(r.out, "dry run: 0 entries point to cluster-x") || !regexp.MustCompile(`note: no entry points to cluster-x; the scan saw cluster-\w \(\d+\), `).MatchString(r.err) {
		t.Errorf("stdout:\n%s\nstderr:\n%s", r.out, r.err)
	}
	// Entries to evict: no note.
	r = runStore(t, 0, "evict", "--cluster", "cluster-a")
	if strings.Contains(r.err, "note:") {
		t.Errorf("note with candidates: %s", r.err)
	}
}

// A timeout flag out of range is named alone: "--dial-timeout 0" used to
// print "--dial-timeout 0s and --request-timeout 2s must be at least 1ms".
func TestStoreTimeoutFlagNamedAlone(t *testing.T) {
	key := "lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6"
	for flag, other := range map[string]string{"--dial-timeout": "--request-timeout", "--request-timeout": "--dial-timeout"} {
		r := lcctl(t, "", nil, "store", "--olric", "127.0.0.1:1", flag, "0", "get", "--key", key)
		if r.code != 2 || !strings.Contains(r.err, flag+" 0s must be at least 1ms") || strings.Contains(r.err, other) {
			t.Errorf("%s 0: exit %d, stderr %q; want exit 2 naming only %s", flag, r.code, r.err, flag)
		}
	}
}

// TestEvictStrictAndClusterSeen: a cluster the scan never saw is
// cluster_seen false in the JSON and, with --strict, exit 1 (a mistyped
// name in a drain script); without --strict it stays exit 0.
func TestEvictStrictAndClusterSeen(t *testing.T) {
	seedTestDMap(t, 30)
	r := runStore(t, 0, "evict", "--cluster", "cluster-C", "-o", "json")
	if !strings.Contains(r.out, `"cluster_seen": false`) || !strings.Contains(r.out, `"outcomes": [`) {
		t.Errorf("json:\n%s", r.out)
	}
	r = runStore(t, 1, "evict", "--cluster", "cluster-C", "--strict")
	if !strings.Contains(r.err, `--strict: the scan saw no entry of cluster-C`) || !strings.Contains(r.err, `did you mean "cluster-c"?`) {
		t.Errorf("stderr: %s", r.err)
	}
	r = runStore(t, 0, "evict", "--cluster", "cluster-a", "--strict", "-o", "json")
	if !strings.Contains(r.out, `"cluster_seen": true`) {
		t.Errorf("json:\n%s", r.out)
	}
	runStore(t, 2, "evict", "--cluster", "cluster-a", "--settle-timeout", "0s")
}

// TestPutTrimsCluster: spaces around --cluster are trimmed, as the gateway
// trims the cluster id before validating it.
func TestPutTrimsCluster(t *testing.T) {
	key := "lc:v1:eee6fa399e47d629fce76042cba103c8ca61ca8af6cb29be4c57083afb356db6"
	runStore(t, 0, "put", "--key", key, "--cluster", "  cluster-b  ", "--yes")
	r := runStore(t, 0, "get", "--key", key, "-o", "json")
	if !strings.Contains(r.out, `"cluster": "cluster-b"`) {
		t.Errorf("get after put of a padded cluster:\n%s", r.out)
	}
}

package gateway

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/testutil"
)

func read(t *testing.T, path string) NamedInput {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return NamedInput{Name: path, Data: data}
}

func loadDotenv(t *testing.T, name string) (*Settings, []Problem) {
	t.Helper()
	in := read(t, filepath.Join("testdata", name))
	env, err := ParseDotenv(in.Name, in.Data)
	if err != nil {
		t.Fatal(err)
	}
	return Check(env, "")
}

func loadValues(t *testing.T, paths ...string) (*Settings, []Problem) {
	t.Helper()
	var ins []NamedInput
	for _, p := range paths {
		ins = append(ins, read(t, p))
	}
	env, err := ParseValues(ins...)
	if err != nil {
		t.Fatal(err)
	}
	return Check(env, "")
}

func hintsOf(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Hint)
	}
	return out
}

func messages(ps []Problem) []string {
	var out []string
	for _, p := range ps {
		out = append(out, string(p.Severity)+" "+string(p.Category)+" "+p.String())
	}
	return out
}

func TestUpstreamChartValues(t *testing.T) {
	dir := filepath.Join(testutil.SharedDir(t), "examples", "gateway")
	chart := filepath.Join(dir, "chart-values-2026-08-22.yaml")
	s, ps := loadValues(t, chart)
	if len(ps) != 0 {
		t.Errorf("chart defaults: unexpected problems %v", messages(ps))
	}
	if s.LastClusterEnabled.Value || s.TTL.Value != 10*time.Minute || s.LookupTimeout.Value != 20*time.Millisecond || s.LocalMaxEntries.Value != 100000 {
		t.Errorf("last-cluster defaults: %+v", s)
	}
	if s.LastClusterEnabled.Var.Pos.File != ChartDefaults {
		t.Errorf("lastCluster.enabled comes from %v, want the chart default", s.LastClusterEnabled.Var.Pos)
	}
	if !s.OlricEnabled.Value || s.OlricEnv.Value != "lan" || s.OlricBindPort.Value != 3320 || s.OlricMemberlistPort.Value != 3322 ||
		s.OlricDMapName.Value != "rate-limit" || s.OlricPartitionCount.Value != 271 || !s.PodNamespace.Set() || s.Replicas != 3 {
		t.Errorf("olric from the chart: %+v", s)
	}
	// Positions point into the real file: `enabled: true` under olric.
	if p := s.OlricEnabled.Var.Pos; p.File != chart || p.Line != 84 || p.Col != 14 {
		t.Errorf("olric.enabled position %v", p)
	}
	if got := s.OlricEnv.Var.ValuesPath; got != "llmApiGateway.olric.env" {
		t.Errorf("values path %q", got)
	}
	if sel := s.OlricEnabled.Var; sel.Value != "true" {
		t.Errorf("OLRIC_ENABLED rendered %q", sel.Value)
	}

	// The local override alone sits on the chart defaults.
	s, ps = loadValues(t, filepath.Join(dir, "values-local-2026-08-22.yaml"))
	if len(ps) != 0 || !s.OlricEnabled.Value || s.OlricEnabled.Var.Pos.File != ChartDefaults {
		t.Errorf("values-local: %v %+v", messages(ps), s.OlricEnabled)
	}
	// Chart + stage-2 override: the feature is on, from the override file.
	over := filepath.Join("testdata", "values-stage2.yaml")
	s, ps = loadValues(t, chart, over)
	if len(ps) != 0 || !s.LastClusterEnabled.Value || s.LastClusterEnabled.Var.Pos != (Pos{File: over, Line: 5, Col: 16}) {
		t.Errorf("stage 2 override: %v %+v", messages(ps), s.LastClusterEnabled.Var)
	}
	if s.MetricsPort.Value != 9464 || !s.MetricsPort.Set() {
		t.Errorf("metrics port %+v", s.MetricsPort)
	}
}

func TestValuesVariants(t *testing.T) {
	s, ps := loadValues(t, filepath.Join("testdata", "values-feature-off.yaml"))
	if s.LastClusterEnabled.Value || len(ps) != 0 {
		t.Errorf("feature off: %v", messages(ps))
	}

	s, ps = loadValues(t, filepath.Join("testdata", "values-olric-off.yaml"))
	if s.OlricEnabled.Value || s.Store() != "local" || s.Replicas != 3 {
		t.Errorf("olric off: %+v", s)
	}
	if len(ps) != 1 || ps[0].Category != CategoryOlric || ps[0].Severity != SeverityWarning || !strings.Contains(ps[0].Message, "1/3") {
		t.Errorf("olric off problems: %v", messages(ps))
	}

	// The warning names the values that decided it, each where it was
	// read: it used to say "not set (gateway default)" of OLRIC_ENABLED,
	// which the chart does not render with Olric off.
	off := filepath.Join("testdata", "values-olric-off.yaml")
	if want := `warning olric ` + off + `:8:14: last-cluster hints are on (llmApiGateway.config.lastCluster.enabled=true, ` + off + `:6:16) with Olric off (llmApiGateway.olric.enabled=false, ` + off + `:8:14) and 3 replicas (llmApiGateway.replicaCount=3, ` + off + `:3:17): each replica keeps its own LRU, so the hit rate drops to about 1/3`; len(ps) != 1 || messages(ps)[0] != want {
		t.Errorf("olric off problems:\n got %q\nwant %q", messages(ps), want)
	}
	// Over the upstream chart: the replica count is the chart file's, a
	// default left to the chart is named as such.
	chart := filepath.Join(testutil.SharedDir(t), "examples", "gateway", "chart-values-2026-08-22.yaml")
	over := filepath.Join("testdata", "values-olric-off-override.yaml")
	for _, tc := range []struct {
		files    []string
		replicas string
	}{
		{[]string{chart, over}, "llmApiGateway.replicaCount=3, " + chart + ":17:17"},
		{[]string{over}, "llmApiGateway.replicaCount=3, chart default"},
	} {
		s, ps = loadValues(t, tc.files...)
		if s.OlricSwitch.Pos != (Pos{File: over, Line: 8, Col: 14}) || s.OlricSwitch.Value != "false" {
			t.Errorf("%v: olric switch %+v", tc.files, s.OlricSwitch)
		}
		want := `warning olric ` + over + `:8:14: last-cluster hints are on (llmApiGateway.config.lastCluster.enabled=true, ` + over + `:6:16) with Olric off (llmApiGateway.olric.enabled=false, ` + over + `:8:14) and 3 replicas (` + tc.replicas + `)`
		if len(ps) != 1 || !strings.HasPrefix(messages(ps)[0], want+": ") {
			t.Errorf("%v:\n got %q\nwant prefix %q", tc.files, messages(ps), want)
		}
	}

	bad := filepath.Join("testdata", "values-bad.yaml")
	_, ps = loadValues(t, bad)
	want := []string{
		`error values ` + bad + `:4:16: invalid STARGATE_LAST_CLUSTER_ENABLED="maybe": not a boolean to Go's strconv.ParseBool (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False); the gateway does not start`,
		`error values ` + bad + `:5:12: invalid STARGATE_LAST_CLUSTER_TTL="600": time: missing unit in duration "600"`,
		`error values ` + bad + `:6:22: invalid STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT="0s": must be > 0`,
		`error values ` + bad + `:7:24: invalid STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES="-1": must be > 0`,
		`warning olric ` + bad + `:9:14: llmApiGateway.olric.enabled is the string "false", which Helm treats as true: Olric is enabled`,
		`error dmap ` + bad + `:10:15: OLRIC_DMAP_NAME="stargate-last-cluster": the rate limiter would share the last-cluster DMap`,
		`error values ` + bad + `:12:7: llmApiGateway.olric.bindPort must be a single value, not a mapping (it renders OLRIC_BIND_PORT)`,
	}
	if got := messages(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("bad values:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	// A duration without a unit is told to add one; 0s has its unit and
	// is told to be above 0 (it used to get the unit hint too).
	hints := map[string]string{
		"STARGATE_LAST_CLUSTER_TTL":               "set llmApiGateway.config.lastCluster.ttl to a Go duration with a unit, e.g. 10m (the default)",
		"STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT":    "set llmApiGateway.config.lastCluster.lookupTimeout to a duration above 0, e.g. 20ms (the default)",
		"STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES": "set llmApiGateway.config.lastCluster.localMaxEntries to a count above 0, e.g. 100000 (the default)",
	}
	for _, p := range ps {
		if want, ok := hints[p.Name]; ok && p.Hint != want {
			t.Errorf("%s hint %q, want %q", p.Name, p.Hint, want)
		}
	}
	for _, tc := range []struct{ env, want string }{
		{"STARGATE_LAST_CLUSTER_TTL=0s", "set STARGATE_LAST_CLUSTER_TTL to a duration above 0, e.g. 10m (the default)"},
		{"STARGATE_LAST_CLUSTER_TTL=-1h", "set STARGATE_LAST_CLUSTER_TTL to a duration above 0, e.g. 10m (the default)"},
		{"STARGATE_LAST_CLUSTER_TTL=10", "set STARGATE_LAST_CLUSTER_TTL to a Go duration with a unit, e.g. 10m (the default)"},
		{"STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT=-5ms", "set STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT to a duration above 0, e.g. 20ms (the default)"},
		{"OLRIC_STARTUP_TIMEOUT=15", "set OLRIC_STARTUP_TIMEOUT to a Go duration with a unit, e.g. 15s (the default)"},
	} {
		env, err := ParseDotenv("e.env", []byte(tc.env+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, ps := Check(env, ""); len(ps) != 1 || ps[0].Hint != tc.want {
			t.Errorf("%s: %v hints %q, want %q", tc.env, messages(ps), hintsOf(ps), tc.want)
		}
	}

	broken := read(t, filepath.Join("testdata", "values-broken.yaml"))
	_, err := ParseValues(broken)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Pos.Line == 0 || !strings.Contains(se.Msg, "not valid YAML") {
		t.Errorf("broken YAML: %v", err)
	}
	for _, tc := range []struct{ data, msg string }{
		{"- a\n- b\n", "must be a mapping"},
		{"a: 1\n---\nb: 2\n", "several YAML documents"},
	} {
		_, err := ParseValues(NamedInput{Name: "v.yaml", Data: []byte(tc.data)})
		if !errors.As(err, &se) || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("%q: %v, want %q", tc.data, err, tc.msg)
		}
	}
	// A section the chart reads through, given as a scalar or a list,
	// fails Helm's rendering; it used to be ignored (chart defaults
	// reported as if the file were fine). Siblings are still checked;
	// sections inside a broken one are not.
	sections := []struct {
		files []string
		want  []string
	}{
		{[]string{"llmApiGateway: 5\n"}, []string{
			`error values v0.yaml:1:16: llmApiGateway must be a mapping, not a number: Helm keeps it over the chart's defaults and the chart fails to render`}},
		{[]string{"llmApiGateway:\n  config: [1, 2]\n  olric: \"off\"\n"}, []string{
			`error values v0.yaml:2:11: llmApiGateway.config must be a mapping, not a list: Helm keeps it over the chart's defaults and the chart fails to render`,
			`error values v0.yaml:3:10: llmApiGateway.olric must be a mapping, not a string: Helm keeps it over the chart's defaults and the chart fails to render`}},
		// The last file wins, as with helm -f a -f b.
		{[]string{"llmApiGateway:\n  config:\n    lastCluster: yes\n", "llmApiGateway:\n  config:\n    lastCluster: {enabled: true}\n"}, nil},
		{[]string{"llmApiGateway:\n  config:\n    lastCluster: {enabled: true}\n", "llmApiGateway:\n  config:\n    lastCluster: yes\n"}, []string{
			`error values v1.yaml:3:18: llmApiGateway.config.lastCluster must be a mapping, not a boolean: Helm keeps it over the chart's defaults and the chart fails to render`}},
	}
	for _, tc := range sections {
		var in []NamedInput
		for i, d := range tc.files {
			in = append(in, NamedInput{Name: fmt.Sprintf("v%d.yaml", i), Data: []byte(d)})
		}
		env, err := ParseValues(in...)
		if err != nil {
			t.Fatalf("%q: %v", tc.files, err)
		}
		_, ps := Check(env, "")
		var got []string
		for _, m := range messages(ps) {
			if strings.Contains(m, "must be a mapping") {
				got = append(got, m)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q:\n got %s\nwant %s", tc.files, strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
		}
	}
	// Empty and null documents are no values at all.
	for _, d := range []string{"", "# nothing\n", "~\n"} {
		env, err := ParseValues(NamedInput{Name: "v.yaml", Data: []byte(d)})
		if err != nil || env.Get("STARGATE_LAST_CLUSTER_ENABLED").Value != "false" {
			t.Errorf("%q: %v", d, err)
		}
	}
}

func TestHelmRendering(t *testing.T) {
	for _, tc := range []struct {
		yaml, name, want string
	}{
		{"llmApiGateway: {config: {lastCluster: {enabled: yes}}}", "STARGATE_LAST_CLUSTER_ENABLED", "true"},
		{"llmApiGateway: {config: {lastCluster: {enabled: 'yes'}}}", "STARGATE_LAST_CLUSTER_ENABLED", "yes"},
		{"llmApiGateway: {config: {lastCluster: {localMaxEntries: 1e6}}}", "STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES", "1000000"},
		{"llmApiGateway: {config: {lastCluster: {localMaxEntries: 2.7}}}", "STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES", "2"},
		{"llmApiGateway: {olric: {bindPort: 1000000}}", "OLRIC_BIND_PORT", "1e+06"},
		{"llmApiGateway: {config: {lastCluster: {ttl: null}}}", "STARGATE_LAST_CLUSTER_TTL", ""},
		{"llmApiGateway: {olric: {k8sLabelSelector: app=x}}", "OLRIC_K8S_LABEL_SELECTOR", "app=x"},
		{"llmApiGateway: {nameOverride: gw}", "OLRIC_K8S_LABEL_SELECTOR", "app.kubernetes.io/name=gw"},
		{"base: &b {enabled: true}\nllmApiGateway: {config: {lastCluster: *b}}", "STARGATE_LAST_CLUSTER_ENABLED", "true"},
	} {
		env, err := ParseValues(NamedInput{Name: "v.yaml", Data: []byte(tc.yaml)})
		if err != nil {
			t.Fatalf("%s: %v", tc.yaml, err)
		}
		if got := env.Get(tc.name).Value; got != tc.want {
			t.Errorf("%s: %s=%q, want %q", tc.yaml, tc.name, got, tc.want)
		}
	}
	// A null is the file's value, not the chart's: it is positioned there.
	env, _ := ParseValues(NamedInput{Name: "v.yaml", Data: []byte("llmApiGateway: {config: {lastCluster: {ttl: null}}}")})
	if v := env.Get("STARGATE_LAST_CLUSTER_TTL"); v.Pos != (Pos{File: "v.yaml", Line: 1, Col: 45}) || v.Origin() != "gateway default: v.yaml:1:45 renders it empty" {
		t.Errorf("ttl: null: %+v, origin %q", v, v.Origin())
	}
	// A null section in a later file removes what earlier files and the
	// chart set under it, as Helm's coalescing does (it was skipped, and
	// the earlier file's enabled: true was read).
	env, _ = ParseValues(NamedInput{Name: "a.yaml", Data: []byte("llmApiGateway: {config: {lastCluster: {enabled: true, ttl: 5m}}, olric: {enabled: true}}")},
		NamedInput{Name: "b.yaml", Data: []byte("llmApiGateway: {config: {lastCluster: null}, olric: null}")})
	if v := env.Get("STARGATE_LAST_CLUSTER_ENABLED"); v.Value == "true" || v.Pos.File != "b.yaml" {
		t.Errorf("lastCluster: null after enabled: true: %+v", v)
	}
	if v := env.Get("STARGATE_LAST_CLUSTER_TTL"); v.Value == "5m" {
		t.Errorf("lastCluster: null after ttl: 5m: %+v", v)
	}
	if _, ok := env.Vars["OLRIC_ENABLED"]; ok {
		t.Error("olric: null must not render OLRIC_ENABLED")
	}
	env, _ = ParseValues(NamedInput{Name: "v.yaml", Data: []byte("llmApiGateway: {olric: {enabled: false}}")})
	if _, ok := env.Vars["OLRIC_ENABLED"]; ok {
		t.Error("olric.enabled=false must not render OLRIC_ENABLED")
	}
	if _, ok := env.Vars["POD_NAMESPACE"]; ok {
		t.Error("olric.enabled=false must not set POD_NAMESPACE")
	}
}

func TestDotenv(t *testing.T) {
	s, ps := loadDotenv(t, "stage2.env")
	if len(ps) != 0 {
		t.Errorf("stage2.env problems: %v", messages(ps))
	}
	if !s.LastClusterEnabled.Value || s.TTL.Value != 10*time.Minute || s.LookupTimeout.Value != 20*time.Millisecond || s.LocalMaxEntries.Value != 100000 {
		t.Errorf("settings %+v", s)
	}
	if !reflect.DeepEqual(s.OlricPeers.Value, []string{"10.0.0.1:3322", "10.0.0.2:3322"}) {
		t.Errorf("peers %q", s.OlricPeers.Value)
	}
	if p := s.TTL.Var.Pos; p.Line != 3 || p.Col != 29 {
		t.Errorf("TTL position %v", p)
	}
	if s.MetricsPort.Var.Pos.File != NotSet || s.MetricsPort.Value != 9464 {
		t.Errorf("unset METRICS_PORT %+v", s.MetricsPort)
	}

	_, ps = loadDotenv(t, "bad.env")
	f := filepath.Join("testdata", "bad.env")
	want := []string{
		`error values ` + f + `:1:31: invalid STARGATE_LAST_CLUSTER_ENABLED="yes": not a boolean to Go's strconv.ParseBool (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False); the gateway does not start`,
		`error values ` + f + `:2:27: invalid STARGATE_LAST_CLUSTER_TTL="30": time: missing unit in duration "30"`,
		`error values ` + f + `:3:38: invalid STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT="-5ms": must be > 0`,
		`error values ` + f + `:4:41: invalid STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES="0": must be > 0`,
		`warning values ` + f + `:5:41: STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT_MS is not a variable the gateway reads; did you mean STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT?`,
		`warning olric ` + f + `:6:15: no OLRIC_PEERS and no POD_NAMESPACE: each gateway replica forms its own one-node Olric cluster, so hints are not shared`,
		`warning olric ` + f + `:7:11: OLRIC_ENV="datacenter" is not local, lan or wan; the gateway treats it as local`,
		`error olric ` + f + `:8:17: Olric's RESP port and memberlist port are both 3322`,
		`error dmap ` + f + `:9:17: OLRIC_DMAP_NAME="stargate-last-cluster": the rate limiter would share the last-cluster DMap`,
	}
	if got := messages(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("bad.env:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

// TestUnknownAndInvalidVars: names a few edits from one the gateway reads
// get "did you mean" (other variables of the environment are ignored),
// and a boolean Go's strconv.ParseBool refuses (yes) is marked invalid
// rather than taken as the default false.
func TestUnknownAndInvalidVars(t *testing.T) {
	env, err := ParseDotenv("t.env", []byte("STARGATE_LAST_CLUSTER_ENABLED=yes\nSTARGATE_LAST_CLUSTER_TTLL=5m\nOLRIC_ENABLD=true\nHOME=/root\nSTARGATE_LAST_CLUSTER_FOO=1\nRATE_LIMIT_ENABLED=on\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, ps := Load(env)
	if !s.LastClusterEnabled.Invalid || s.LastClusterEnabled.Value || !s.RateLimitEnabled.Invalid || s.TTL.Invalid {
		t.Errorf("invalid flags: enabled %+v, rate limit %+v, ttl %+v", s.LastClusterEnabled, s.RateLimitEnabled, s.TTL)
	}
	want := []string{
		`error values t.env:1:31: invalid STARGATE_LAST_CLUSTER_ENABLED="yes": ` + "not a boolean to Go's strconv.ParseBool (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False); the gateway does not start",
		`warning values t.env:2:28: STARGATE_LAST_CLUSTER_TTLL is not a variable the gateway reads; did you mean STARGATE_LAST_CLUSTER_TTL?`,
		`warning values t.env:3:14: OLRIC_ENABLD is not a variable the gateway reads; did you mean OLRIC_ENABLED?`,
		`warning values t.env:5:27: STARGATE_LAST_CLUSTER_FOO is not a variable the gateway reads`,
		`error values t.env:6:20: invalid RATE_LIMIT_ENABLED="on": ` + "not a boolean to Go's strconv.ParseBool (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False); the gateway does not start",
	}
	if got := messages(ps); !reflect.DeepEqual(got, want) {
		t.Errorf("got  %s\nwant %s", strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
	for _, p := range ps {
		if p.Name == "OLRIC_ENABLD" && p.Hint != "rename it to OLRIC_ENABLED: the gateway ignores OLRIC_ENABLD and uses the default" {
			t.Errorf("hint %q", p.Hint)
		}
	}
}

func TestDotenvSyntax(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  string
	}{
		{in: "A=1\nB = two words  \n", want: map[string]string{"A": "1", "B": "two words"}},
		{in: "A=x # note\nB=x#y\n", want: map[string]string{"A": "x", "B": "x#y"}},
		{in: "A='lit $X \\n'\nB=\"q \\\"x\\\" \\n\\t\"  # c\n", want: map[string]string{"A": "lit $X \\n", "B": "q \"x\" \n\t"}},
		{in: "\xef\xbb\xbfexport A=1\r\nexport=2\n", want: map[string]string{"A": "1", "export": "2"}},
		{in: "A=\nB=''\n", want: map[string]string{"A": "", "B": ""}},
		{in: "1A=1", err: "v.env:1:1: expected a variable name"},
		{in: "A 1", err: "v.env:1:3: expected '=' after A"},
		{in: "\nA='x", err: "v.env:2:3: A: unterminated single quote"},
		{in: "A=\"x", err: "v.env:1:3: A: unterminated double quote"},
		{in: "A=\"x\\q\"", err: "v.env:1:5: A: unknown escape \\q"},
		{in: "A='x' y", err: "v.env:1:7: A: unexpected text after the closing quote"},
		{in: "A=it's", err: "v.env:1:5: A: quote inside an unquoted value"},
		{in: "A=\x00", err: "v.env:1:3: control character"},
		{in: "A=\xff", err: "v.env:1: invalid UTF-8"},
	} {
		env, err := ParseDotenv("v.env", []byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want prefix %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		got := map[string]string{}
		for n, v := range env.Vars {
			got[n] = v.Value
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, got, tc.want)
		}
	}
	env, err := ParseDotenv("v.env", []byte("A=1\nA=2\n"))
	if err != nil || env.Get("A").Value != "2" || len(env.Notes) != 1 || env.Notes[0].Pos.Line != 2 {
		t.Errorf("duplicate: %v %+v", err, env)
	}
}

func TestValidateRules(t *testing.T) {
	base := func(kv ...string) *Settings {
		env := &Env{Kind: KindDotenv, Vars: map[string]Var{}}
		for i := 0; i+1 < len(kv); i += 2 {
			env.Vars[kv[i]] = Var{Name: kv[i], Value: kv[i+1], Pos: Pos{File: "e", Line: i/2 + 1}}
		}
		s, ps := Load(env)
		if len(ps) != 0 {
			t.Fatalf("%v: %v", kv, messages(ps))
		}
		return s
	}
	has := func(ps []Problem, sev Severity, cat Category, sub string) bool {
		for _, p := range ps {
			if p.Severity == sev && p.Category == cat && strings.Contains(p.Message, sub) {
				return true
			}
		}
		return false
	}
	if ps := Validate(base("STARGATE_LAST_CLUSTER_TTL", "500us"), ""); !has(ps, SeverityError, CategoryValues, "never expires") {
		t.Errorf("TTL 500us: %v", messages(ps))
	}
	if ps := Validate(base("STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT", "250ms"), ""); !has(ps, SeverityWarning, CategoryValues, "can wait this long") {
		t.Errorf("slow lookup timeout: %v", messages(ps))
	}
	if ps := Validate(base(), "other-dmap"); !has(ps, SeverityError, CategoryDMap, `lcctl store would use DMap "other-dmap"`) {
		t.Errorf("store dmap: %v", messages(ps))
	}
	if ps := Validate(base(), ""); len(ps) != 0 {
		t.Errorf("defaults: %v", messages(ps))
	}
	olric := []string{"OLRIC_ENABLED", "true", "POD_NAMESPACE", "ns"}
	if ps := Validate(base(append(olric, "METRICS_PORT", "3320")...), ""); !has(ps, SeverityError, CategoryOlric, "collides") {
		t.Errorf("metrics port collision: %v", messages(ps))
	}
	if ps := Validate(base(append(olric, "OLRIC_BIND_PORT", "70000")...), ""); !has(ps, SeverityError, CategoryOlric, "not a TCP port") {
		t.Errorf("port range: %v", messages(ps))
	}
	if ps := Validate(base(append(olric, "OLRIC_PEERS", "host-only")...), ""); !has(ps, SeverityWarning, CategoryOlric, "not host:port") {
		t.Errorf("peers: %v", messages(ps))
	}
	if ps := Validate(base(append(olric, "OLRIC_REPLICA_COUNT", "0", "OLRIC_PARTITION_COUNT", "-1", "OLRIC_LOG_LEVEL", "TRACE", "OLRIC_STARTUP_TIMEOUT", "0s")...), ""); len(ps) != 4 {
		t.Errorf("ignored counts, level, startup: %v", messages(ps))
	}
	if ps := Validate(base(append(olric, "STARGATE_LAST_CLUSTER_ENABLED", "1", "RATE_LIMIT_ENABLED", "false")...), ""); !has(ps, SeverityWarning, CategoryOlric, "older than the last-cluster feature") {
		t.Errorf("rate limit off: %v", messages(ps))
	}
	if ps := Validate(base(olric...), ""); len(ps) != 0 {
		t.Errorf("olric on with discovery: %v", messages(ps))
	}
	// A TTL so long that Olric's expiry (now + ttl in int64 ns) wraps:
	// every hint would be stored already expired. Fine for the local LRU.
	if ps := Validate(base(append(olric, "STARGATE_LAST_CLUSTER_TTL", "2562047h")...), ""); !has(ps, SeverityError, CategoryValues, "stored already expired") {
		t.Errorf("TTL 2562047h with Olric: %v", messages(ps))
	}
	if ps := Validate(base(append(olric, "STARGATE_LAST_CLUSTER_TTL", "876000h")...), ""); len(ps) != 0 {
		t.Errorf("TTL 876000h (100 years) with Olric: %v", messages(ps))
	}
	if ps := Validate(base("STARGATE_LAST_CLUSTER_TTL", "2562047h"), ""); len(ps) != 0 {
		t.Errorf("TTL 2562047h with the local store: %v", messages(ps))
	}
}

// TestValuesNotUTF8: Helm values that are not UTF-8 are a syntax error at
// the first invalid byte.
func TestValuesNotUTF8(t *testing.T) {
	_, err := ParseValues(NamedInput{Name: "v.yaml", Data: []byte("llmApiGateway:\n  x: \xe9\n")})
	var se *SyntaxError
	if !errors.As(err, &se) || se.Pos.Line != 2 || se.Pos.Col != 6 || !strings.Contains(se.Msg, "not UTF-8") {
		t.Fatalf("got %v, want not UTF-8 at 2:6", err)
	}
}

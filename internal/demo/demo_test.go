package demo

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/testutil"
)

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"examples/lb-config": "examples/lb-config",
		"127.0.0.1:3320":     "127.0.0.1:3320",
		"a b":                "'a b'",
		"it's":               `'it'\''s'`,
		"":                   "''",
		"$HOME":              "'$HOME'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
	c := Command{Args: []string{"store", "get", "--affinity-key", "my session"}}
	if got := c.Line(); got != "lcctl store get --affinity-key 'my session'" {
		t.Fatalf("Line = %s", got)
	}
}

// TestPlanIsSafe: the demo never writes files or deletes store entries,
// and each command names only example files that exist in the
// repository and in the copy built into lcctl.
func TestPlanIsSafe(t *testing.T) {
	root := testutil.RepoRoot(t)
	steps := Plan(Params{Examples: Examples{Dir: "EX"}, OlricAddr: "127.0.0.1:1"})
	if len(steps) != len(StepNames) {
		t.Fatalf("%d steps, want %d", len(steps), len(StepNames))
	}
	for i, s := range steps {
		if s.Number != i+1 || s.Name != StepNames[i] || s.Title == "" || s.Story == "" || len(s.Commands) == 0 {
			t.Fatalf("step %d is incomplete: %+v", i+1, s)
		}
		for _, c := range s.Commands {
			if len(c.Expect) == 0 || c.Meaning == "" {
				t.Errorf("step %s: %s has no expected exit code or meaning", s.Name, c.Line())
			}
			for _, a := range c.Args {
				if a == "--yes" || a == "--write" || a == "-w" || a == "--backup" {
					t.Errorf("step %s: %s changes something (%s)", s.Name, c.Line(), a)
				}
				if rel, ok := strings.CutPrefix(a, "EX"+string(filepath.Separator)); ok {
					rel = filepath.ToSlash(rel)
					if _, err := os.Stat(filepath.Join(root, "examples", rel)); err != nil {
						t.Errorf("step %s: %s: %v", s.Name, rel, err)
					}
					if !embeddedHas(rel) {
						t.Errorf("step %s: %s is not built into lcctl (lcctl.Examples)", s.Name, rel)
					}
				}
			}
			if usesOlric := slices.Contains(c.Args, "--olric"); usesOlric && !s.NeedsOlric {
				t.Errorf("step %s talks to Olric but NeedsOlric is false", s.Name)
			}
		}
	}
	for _, f := range RequiredFiles {
		if !embeddedHas(f) {
			t.Errorf("required file %s is not built into lcctl", f)
		}
	}
	explain := steps[3].Commands[1]
	if !slices.Contains(explain.Args, LastClusterArg) {
		t.Fatalf("the explain command does not take the last cluster from store get: %v", explain.Args)
	}
	resolved := explain.WithLastCluster("cluster-b")
	if slices.Contains(resolved.Args, LastClusterArg) || !strings.Contains(resolved.Line(), "--last-cluster cluster-b --input-tokens 2000 --timeline --compare flag") {
		t.Fatalf("WithLastCluster: %s", resolved.Line())
	}
	if !slices.Contains(explain.Args, LastClusterArg) {
		t.Fatal("WithLastCluster changed the plan's own command")
	}
}

func TestSelect(t *testing.T) {
	steps := Plan(Params{})
	names := func(ss []Step) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		step int
		only string
		want string
	}{
		{0, "", strings.Join(StepNames, ",")},
		{3, "", StepPreflight},
		{0, "explain", StepExplain},
		{0, "6", StepSimulate},
		{0, "live", StepLive},
	} {
		got, err := Select(steps, tc.step, tc.only)
		if err != nil || names(got) != tc.want {
			t.Errorf("Select(%d, %q) = %s, %v; want %s", tc.step, tc.only, names(got), err, tc.want)
		}
	}
	for _, tc := range []struct {
		step int
		only string
		want string
	}{
		{8, "", "--step 8: want a step from 1 to 7"},
		{-1, "", "--step -1"},
		{0, "0", "--only 0: want a step from 1 to 7"},
		{0, "Validate", `--only "Validate"; did you mean "validate"?: want one of validate, migrate`},
		{0, "simulat", `--only "simulat"; did you mean "simulate"?`},
		{0, "zzzzzzz", `--only "zzzzzzz": want one of`},
		{2, "migrate", "--step and --only both pick a step"},
	} {
		if _, err := Select(steps, tc.step, tc.only); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Select(%d, %q) error %v, want %q", tc.step, tc.only, err, tc.want)
		}
	}
}

func TestFindExamples(t *testing.T) {
	root := testutil.RepoRoot(t)
	ex, cleanup, err := FindExamples(filepath.Join(root, "examples"))
	if err != nil || ex.Embedded || ex.Dir != filepath.Join(root, "examples") {
		t.Fatalf("FindExamples(repo examples) = %+v, %v", ex, err)
	}
	_ = cleanup()

	empty := t.TempDir()
	if _, _, err := FindExamples(empty); err == nil || !strings.Contains(err.Error(), "no lb-config/no-slo-pulsar-wait-and-widen.json in this folder") {
		t.Fatalf("FindExamples(empty) error %v", err)
	}

	// The test runs in internal/demo, which is not a clone's root: the
	// built-in copy is extracted, complete, and removed by cleanup.
	ex, cleanup, err = FindExamples("")
	if err != nil || !ex.Embedded {
		t.Fatalf("FindExamples(\"\") = %+v, %v; want the built-in copy", ex, err)
	}
	for _, f := range RequiredFiles {
		got, err := os.ReadFile(ex.Path(f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(root, "examples", filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: the built-in copy differs from the repository's", f)
		}
	}
	if err := cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ex.Dir); !os.IsNotExist(err) {
		t.Fatalf("cleanup left %s behind: %v", ex.Dir, err)
	}
}

// TestStartSeeds starts the embedded member and reads the seeded entries
// back through the store client.
func TestStartSeeds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b, err := Start(ctx, BackendOptions{Entries: 20, TTL: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(context.Background())
	if b.Seeded != 21 || b.PerCluster[SessionCluster] != 1 || b.DMap != store.DMapName || !strings.HasPrefix(b.Addr, "127.0.0.1:") {
		t.Fatalf("backend %+v", b)
	}
	total := 0
	for _, n := range b.PerCluster {
		total += n
	}
	if total != b.Seeded {
		t.Fatalf("per-cluster counts %v do not add up to %d", b.PerCluster, b.Seeded)
	}
	c, err := store.Connect(ctx, store.Options{Addrs: []string{b.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e, err := c.Get(ctx, Session.Key())
	if err != nil || e.Cluster != SessionCluster {
		t.Fatalf("explain session entry = %+v, %v; want %s", e, err, SessionCluster)
	}
	if ttl := e.TTL(); ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Fatalf("explain session TTL %v, want about 10m", ttl)
	}
	first, err := store.DemoSessions(1 + 1)[0].Session()
	if err != nil {
		t.Fatal(err)
	}
	if e, err := c.Get(ctx, first.Key()); err != nil || e.Cluster != "cluster-b" {
		t.Fatalf("first demo session = %+v, %v; want cluster-b", e, err)
	}
	rep, err := c.Scan(ctx, store.ScanOptions{}, func(store.Entry) error { return nil })
	if err != nil || rep.Entries != b.Seeded {
		t.Fatalf("scan found %d entries (%v), want %d", rep.Entries, err, b.Seeded)
	}
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Done():
	default:
		t.Fatal("Done is open after Close")
	}
	if _, err := Start(ctx, BackendOptions{Entries: 1}); err == nil {
		t.Fatal("Start with 1 entry: want an error")
	}
}

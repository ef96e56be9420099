package migrate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

// fuzzSeeds are the inputs of the config fuzz corpus: the upstream
// examples, the repository examples, validate's fuzz corpus files, the
// golden inputs and the lb-config.md §14 configs used here.
func fuzzSeeds(f *testing.F) [][]byte {
	seeds := testutil.LBConfigFiles(f)
	root := testutil.RepoRoot(f)
	// Crashers and corpus entries validate keeps (go test fuzz v1 files).
	corpus, _ := filepath.Glob(filepath.Join(root, "internal", "validate", "testdata", "fuzz", "*", "*"))
	for _, p := range corpus {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "[]byte("); ok {
				if s, err := unquoteGo(strings.TrimSuffix(v, ")")); err == nil {
					seeds = append(seeds, []byte(s))
				}
			}
		}
	}
	golden, _ := filepath.Glob("testdata/golden/*.txtar")
	for _, g := range golden {
		if ar, err := txtar.ParseFile(g); err == nil {
			for _, fl := range ar.Files {
				if strings.HasPrefix(fl.Name, "in.") {
					seeds = append(seeds, fl.Data)
				}
			}
		}
	}
	for _, s := range []string{
		`{}`, `[]`, `{"default":{"pulsar-wait-and-widen":null}}`,
		`{"models":{"m":"pulsar-wait-and-widen"},"models":{}}`,
		`{"models":{"m":{"algorithm":"pulsar-multiregion","max_queued":null,"cache_affinity_wait_ms":null}}}`,
		`{"request_algorithms":{"pulsar":"pulsar-wait-and-widen"}}`,
		`{"default":"pulsar-wait-and-widen","request_algorithms":{"pulsar":"pulsar"},"models":{"a":{"algorithm":"pulsar-wait-and-widen","request_algorithms":{"pulsar":"pulsar"}}}}`,
		"models:\n  m:\n    pulsar-wait-and-widen\n",
		"models:\n  m: !!str pulsar-wait-and-widen\n",
		"models: {m: pulsar-wait-and-widen, n: {algorithm: pulsar-wait-and-widen, seed: s}}\n",
		"default: pulsar-wait-and-widen\nrequest_algorithms: {}\nmodels: {}\n",
		"default:\n  pulsar-wait-and-widen: ~\n",
		"models:\n  m:\n    algorithm: pulsar-wait-and-widen\n    seed: |\n      # not a comment\n",
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

func unquoteGo(s string) (string, error) {
	var out string
	_, err := fmtSscan(s, &out)
	return out, err
}

// FuzzMigrate feeds the config fuzz corpus (and its mutations) to Migrate
// with every option combination picked by flags. It fails on a panic, on
// a result that is pending but does not validate or is not idempotent,
// on any rewrite refusal for JSON input (JSON layouts are always
// supported), and on the internal M13 self-check refusal.
func FuzzMigrate(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		for _, flags := range []uint8{0, 1, 2, 3, 5, 8} {
			f.Add(s, false, flags)
			f.Add(s, true, flags)
		}
	}
	recoverPanics = false
	f.Fuzz(func(t *testing.T, data []byte, asYAML bool, flags uint8) {
		name := "fuzz.json"
		if asYAML {
			name = "fuzz.yaml"
		}
		opts := DefaultOptions()
		opts.Strategy = Bounded
		if flags&1 != 0 {
			opts.Strategy = Pulsar
		}
		opts.NoPreserveHeaderMethod = flags&2 != 0
		if flags&4 != 0 {
			opts.Only = []string{"m", "model-a", "e2e-model"}
		}
		if flags&8 != 0 && opts.Strategy == Bounded {
			opts.DefaultModels = []string{"m", "model-x"}
		}
		opts.MaxQueued = uint64(flags >> 4)
		res, err := Migrate(name, data, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range res.Refusals() {
			if strings.Contains(n.Message, "internal error") {
				t.Fatalf("internal error: %s", n.Message)
			}
			if n.Rule == "" && res.Format == validate.FormatJSON && strings.Contains(n.Message, "could not rewrite") {
				t.Fatalf("JSON rewrite refused: %s", n.Message)
			}
		}
		if res.Status != StatusPending {
			if string(res.Output) != string(data) {
				t.Fatal("output differs although nothing may be written")
			}
			return
		}
		after := validate.FileAs(name, res.Output, res.Format)
		if !after.Valid() {
			t.Fatalf("pending output does not validate: %v", after.Errors())
		}
		again, err := Migrate(name, res.Output, opts)
		if err != nil || again.Status != StatusUnchanged {
			t.Fatalf("not idempotent: %v %s %v", err, again.Status, again.Notes)
		}
		_ = UnifiedDiff(name, name, data, res.Output)
	})
}

func fmtSscan(s string, out *string) (int, error) { return fmt.Sscan(s, out) }

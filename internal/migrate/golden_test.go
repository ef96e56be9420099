package migrate

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the expected sections of testdata/golden/*.txtar and the generated field lists of docs/migrate.md")

// TestGolden runs every testdata/golden/*.txtar: the archive comment holds
// the flags, "in.EXT" the input, "out.EXT" the expected file (absent when
// the file must stay unchanged) and "report" the expected status, changes,
// notes and availability. go test -run TestGolden -update rewrites
// out.EXT and report from the current behaviour (review the diff!).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/golden/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			opts := parseGoldenFlags(t, string(ar.Comment))
			var in *txtar.File
			for i := range ar.Files {
				if strings.HasPrefix(ar.Files[i].Name, "in.") {
					in = &ar.Files[i]
				}
			}
			if in == nil {
				t.Fatal("no in.EXT section")
			}
			ext := strings.TrimPrefix(in.Name, "in.")
			res, err := Migrate("config."+ext, in.Data, opts)
			if err != nil {
				t.Fatal(err)
			}
			report := goldenReport(res)
			var out []byte
			if res.Changed() {
				out = res.Output
			}
			if *update {
				var keep []txtar.File
				for _, fl := range ar.Files {
					if fl.Name != "out."+ext && fl.Name != "report" {
						keep = append(keep, fl)
					}
				}
				if out != nil {
					keep = append(keep, txtar.File{Name: "out." + ext, Data: out})
				}
				keep = append(keep, txtar.File{Name: "report", Data: []byte(report)})
				ar.Files = keep
				if err := os.WriteFile(f, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			var wantOut, wantReport []byte
			haveOut := false
			for _, fl := range ar.Files {
				switch fl.Name {
				case "out." + ext:
					wantOut, haveOut = fl.Data, true
				case "report":
					wantReport = fl.Data
				}
			}
			if haveOut != (out != nil) || !bytes.Equal(wantOut, out) {
				t.Errorf("output differs:\n%s", UnifiedDiff("want", "got", wantOut, out))
			}
			if string(wantReport) != report {
				t.Errorf("report differs:\n%s", UnifiedDiff("want", "got", wantReport, []byte(report)))
			}
			if res.Changed() {
				checkMigrated(t, "config."+ext, res, opts)
			}
		})
	}
}

func parseGoldenFlags(t *testing.T, comment string) Options {
	t.Helper()
	opts := DefaultOptions()
	fs := flag.NewFlagSet("golden", flag.ContinueOnError)
	strategy := fs.String("strategy", "", "")
	fs.Uint64Var(&opts.MaxQueued, "max-queued", opts.MaxQueued, "")
	fs.Uint64Var(&opts.AffinityWaitMs, "affinity-wait-ms", opts.AffinityWaitMs, "")
	only := fs.String("only", "", "")
	dm := fs.String("default-models", "", "")
	fs.BoolVar(&opts.NoPreserveHeaderMethod, "no-preserve-header-method", false, "")
	var args []string
	for _, l := range strings.Split(comment, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			args = append(args, strings.Fields(l)...)
		}
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	s, err := ParseStrategy(*strategy)
	if err != nil {
		t.Fatal(err)
	}
	opts.Strategy = s
	if *only != "" {
		opts.Only = strings.Split(*only, ",")
	}
	if *dm != "" {
		opts.DefaultModels = strings.Split(*dm, ",")
	}
	return opts
}

// goldenReport renders what a golden file pins besides the bytes.
func goldenReport(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "status %s\n", r.Status)
	if r.RequiresAffinityWaitStargate {
		b.WriteString("requires affinity-wait stargate\n")
	}
	for _, c := range r.Changes {
		fmt.Fprintf(&b, "change %s %s %s: %s -> %s\n", c.Rule, c.Action, c.Path, c.Before, c.After)
		var names []string
		for _, f := range c.RemovedFields {
			names = append(names, f.Name)
		}
		if len(names) > 0 {
			fmt.Fprintf(&b, "  removed %s\n", strings.Join(names, ", "))
		}
		if len(c.Lost) > 2 {
			for _, l := range c.Lost[2:] {
				fmt.Fprintf(&b, "  loses %s\n", l)
			}
		}
	}
	for _, a := range r.Availability {
		fmt.Fprintf(&b, "availability %s +[%s] -[%s]\n", a.ConfigSet, strings.Join(a.Added, " "), strings.Join(a.Removed, " "))
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note %s %s %s: %s\n", n.Severity, n.Rule, n.Path, n.Message)
	}
	var codes []string
	for _, d := range r.Errors {
		codes = append(codes, fmt.Sprintf("%s %s %s", d.Code, d.Rule, d.Path))
	}
	slices.Sort(codes)
	for _, c := range codes {
		fmt.Fprintf(&b, "error %s\n", c)
	}
	return b.String()
}

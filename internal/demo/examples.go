package demo

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/lcctl/lcctl"
)

// Example files the plan uses, relative to the examples folder
// (slash-separated).
const (
	// FileLBConfigs is the folder of shipped lb-configs (one per
	// algorithm, a no-SLO pulsar-wait-and-widen config, mistakes.yaml).
	FileLBConfigs = "lb-config"
	// FileNoSLO is the no-SLO pulsar-wait-and-widen config migrate rewrites.
	FileNoSLO = "lb-config/no-slo-pulsar-wait-and-widen.json"
	// FileMistakes is the lb-config that is invalid on purpose.
	FileMistakes = "lb-config/mistakes.yaml"
	// FileStage2Config is the lb-config preflight checks at stage 2
	// (pulsar-wait-and-widen with a queue SLO, last_cluster_affinity off).
	FileStage2Config = "lb-config/pulsar-wait-and-widen.json"
	// FileGatewayValues are the gateway Helm values of stage 2.
	FileGatewayValues = "gateway/values-stage2.yaml"
	// FileExplainConfig is the lb-config of the explain example of a
	// returning session whose last cluster B is full (session.md S4).
	FileExplainConfig = "explain/pwaw-sessions.lb-config.yaml"
	// FileExplainSnapshot is that example's routing snapshot.
	FileExplainSnapshot = "explain/returning-k1.snapshot.yaml"
	// FileScenario is the simulation scenario with a saturated rank-1
	// cluster.
	FileScenario = "scenarios/saturated-rank1.yaml"
	// FileLiveConfig is the lb-config of the live step (wait-and-widen
	// with last_cluster_affinity for LiveModel).
	FileLiveConfig = "explain/live-session.lb-config.yaml"
	// FileLiveOverlay is the live step's snapshot overlay (rtt_ms,
	// max_input_tps, max_engine_concurrency per demo cluster).
	FileLiveOverlay = "explain/live.overlay.yaml"
)

// RequiredFiles are the example files a demo run reads.
var RequiredFiles = []string{FileNoSLO, FileMistakes, FileStage2Config, FileGatewayValues,
	FileExplainConfig, FileExplainSnapshot, FileScenario, FileLiveConfig, FileLiveOverlay}

// DefaultExamplesDir is where the examples are in a clone of the
// repository, relative to its root.
const DefaultExamplesDir = "examples"

// Examples is where the example files of a demo run are.
type Examples struct {
	// Dir is the folder holding lb-config/, explain/, scenarios/ and
	// gateway/, as it appears in printed command lines.
	Dir string
	// Embedded is true when Dir is a temporary copy of the files built
	// into lcctl (lcctl.Examples).
	Embedded bool
}

// Path returns the path of an example file (slash-separated, relative to
// the examples folder) as command lines use it.
func (e Examples) Path(rel string) string {
	return filepath.Join(e.Dir, filepath.FromSlash(rel))
}

// FindExamples locates the example files. A non-empty dir must hold every
// RequiredFiles entry (an error names the first one missing). Otherwise
// DefaultExamplesDir is used when the current folder is a clone of the
// repository, and a temporary copy of the files built into lcctl when it
// is not. cleanup removes that copy and does nothing otherwise; call it
// once the demo is over.
func FindExamples(dir string) (ex Examples, cleanup func() error, err error) {
	noop := func() error { return nil }
	if dir != "" {
		if err := hasRequired(dir); err != nil {
			return Examples{}, noop, fmt.Errorf("--examples %s: %w", dir, err)
		}
		return Examples{Dir: dir}, noop, nil
	}
	if hasRequired(DefaultExamplesDir) == nil {
		return Examples{Dir: DefaultExamplesDir}, noop, nil
	}
	tmp, err := os.MkdirTemp("", "lcctl-demo-examples-")
	if err != nil {
		return Examples{}, noop, fmt.Errorf("copy the built-in examples: %w", err)
	}
	cleanup = func() error { return os.RemoveAll(tmp) }
	if err := extract(lcctl.Examples, tmp); err != nil {
		_ = cleanup()
		return Examples{}, noop, fmt.Errorf("copy the built-in examples to %s: %w", tmp, err)
	}
	return Examples{Dir: tmp, Embedded: true}, cleanup, nil
}

func hasRequired(dir string) error {
	for _, f := range RequiredFiles {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no %s in this folder", f)
			}
			return err
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", f)
		}
	}
	return nil
}

// extract writes every file of fsys below dir, keeping the layout.
func extract(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
}

// embeddedHas reports whether the built-in copy holds rel (used by tests
// to keep lcctl.Examples and RequiredFiles in step).
func embeddedHas(rel string) bool {
	_, err := fs.Stat(lcctl.Examples, path.Clean(rel))
	return err == nil
}

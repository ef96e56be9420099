package lb_test

import (
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/conformance/conformancetest"
	"github.com/lcctl/lcctl/internal/testutil"
)

// TestConformanceThroughEngine runs every case of
// ../shared/conformance/*.yaml (read at test time) and of the
// upstream-derived set in internal/conformance/testdata/upstream, so that
// `go test ./internal/lb/...` covers the engine's conformance on its own
// (issue 3's acceptance), not only `go test ./internal/conformance`.
// conformance.Evaluate runs a case through internal/validate (config-only
// and config blocks), internal/formats and this engine's proxy step.
func TestConformanceThroughEngine(t *testing.T) {
	t.Run("shared", func(t *testing.T) {
		conformancetest.RunCaseFiles(t, filepath.Join(testutil.SharedDir(t), "conformance"), 90)
	})
	t.Run("upstream", func(t *testing.T) {
		conformancetest.RunCaseFiles(t, filepath.Join("..", "conformance", "testdata", "upstream"), 500)
	})
}

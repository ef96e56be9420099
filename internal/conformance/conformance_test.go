package conformance_test

import (
	"path/filepath"
	"testing"

	"github.com/lcctl/lcctl/internal/conformance/conformancetest"
	"github.com/lcctl/lcctl/internal/testutil"
)

// TestSharedConformance runs every case of ../shared/conformance/*.yaml,
// read at test time.
func TestSharedConformance(t *testing.T) {
	conformancetest.RunCaseFiles(t, filepath.Join(testutil.SharedDir(t), "conformance"), 90)
}

// TestUpstreamConformance runs the cases derived from Stargate's own
// load-balancer tests (testdata/upstream/*.yaml; each case's `source:`
// names the upstream test it mirrors). They complement the shared set with
// every upstream test, and every sub-assertion, the shared set does not
// mirror.
func TestUpstreamConformance(t *testing.T) {
	conformancetest.RunCaseFiles(t, filepath.Join("testdata", "upstream"), 500)
}

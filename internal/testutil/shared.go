// Package testutil locates the read-only shared material (specs,
// conformance cases, upstream examples) that tests read in place.
package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedDir returns the absolute path of the shared folder that sits beside
// the repository root ("../shared" from the directory holding go.mod), or
// $LCCTL_SHARED_DIR when set. It fails the test, never skips it, when the
// folder is missing: the conformance suites are part of the test contract.
func SharedDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("LCCTL_SHARED_DIR"); d != "" {
		return d
	}
	root := RepoRoot(t)
	d := filepath.Join(root, "..", "shared")
	if _, err := os.Stat(filepath.Join(d, "spec")); err != nil {
		t.Fatalf("shared material not found at %s (set LCCTL_SHARED_DIR): %v", d, err)
	}
	return filepath.Clean(d)
}

// RepoRoot returns the directory holding go.mod, walking up from the
// current working directory (the package under test).
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the working directory")
		}
		dir = parent
	}
}

package store

import (
	"strings"
	"testing"

	"github.com/olric-data/olric"
)

// The note is for the version the built-in Olric really reports, and only
// for it.
func TestVersionNote(t *testing.T) {
	if olric.ReleaseVersion != UnbumpedReleaseVersion {
		t.Errorf("olric.ReleaseVersion is %q now, UnbumpedReleaseVersion %q: update VersionNote and docs/store.md", olric.ReleaseVersion, UnbumpedReleaseVersion)
	}
	if n := VersionNote("0.7.3"); !strings.Contains(n, "v0.7.4") {
		t.Errorf("VersionNote(0.7.3) = %q", n)
	}
	for _, v := range []string{"", "0.7.4", "0.8.0"} {
		if n := VersionNote(v); n != "" {
			t.Errorf("VersionNote(%q) = %q, want none", v, n)
		}
	}
}

package cli

import (
	"math"
	"os"
	"runtime/debug"
	"testing"

	"github.com/lcctl/lcctl/internal/validate"
)

// TestMigrateMemoryLimit checks the backstop: without a limit, raise sets
// one that covers the input's live estimate plus the headroom, never
// lowers it for a smaller input, raises it for a larger or YAML one, and
// restore removes it; a limit already in place (GOMEMLIMIT) is kept as
// it is.
func TestMigrateMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok {
		// raise keeps a GOMEMLIMIT the user gave; this test gives none.
		os.Unsetenv("GOMEMLIMIT")
		t.Cleanup(func() { os.Setenv("GOMEMLIMIT", v) })
	}
	limit := func() int64 { return debug.SetMemoryLimit(-1) }

	debug.SetMemoryLimit(math.MaxInt64)
	var l memoryLimit
	l.raise(1<<20, validate.FormatJSON)
	first := limit()
	if first < migrateLiveJSON<<20+migrateHeadroom || first == math.MaxInt64 {
		t.Fatalf("limit %d after a 1 MiB JSON input, want at least %d", first, migrateLiveJSON<<20+migrateHeadroom)
	}
	l.raise(1<<10, validate.FormatJSON)
	if got := limit(); got < first {
		t.Errorf("a smaller input lowered the limit from %d to %d", first, got)
	}
	l.raise(2<<20, validate.FormatYAML)
	if got := limit(); got < migrateLiveYAML*2<<20+migrateHeadroom {
		t.Errorf("limit %d after a 2 MiB YAML input, want at least %d", got, migrateLiveYAML*2<<20+migrateHeadroom)
	}
	l.restore()
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("restore left the limit at %d", got)
	}

	os.Setenv("GOMEMLIMIT", "off") // the user's choice, kept
	var o memoryLimit
	o.raise(100<<20, validate.FormatJSON)
	if got := limit(); got != math.MaxInt64 {
		t.Errorf("GOMEMLIMIT=off: raise set the limit to %d", got)
	}
	o.restore()
	os.Unsetenv("GOMEMLIMIT")

	debug.SetMemoryLimit(500 << 20) // as GOMEMLIMIT=500MiB sets it
	var k memoryLimit
	k.raise(100<<20, validate.FormatYAML)
	if got := limit(); got != 500<<20 {
		t.Errorf("an existing limit of 500 MiB became %d", got)
	}
	k.restore()
	if got := limit(); got != 500<<20 {
		t.Errorf("restore changed an existing limit to %d", got)
	}
}

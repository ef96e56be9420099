package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/live"
	"github.com/lcctl/lcctl/internal/ui"
)

// A span file over the limit is refused naming the limit itself (it said
// MaxSpanFileBytes+1).
func TestSpanLimitMessage(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "big.jsonl")
	fh, err := os.Create(f)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size check reads the file's size, not its bytes.
	if err := fh.Truncate(live.MaxSpanFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	env := &Env{Streams: &ui.Streams{In: strings.NewReader(""), Getenv: func(string) string { return "" }}, Global: &GlobalOptions{}}
	_, err = (&liveFlags{span: f}).loadSpan(env, "req")
	if err == nil || !strings.Contains(err.Error(), " "+strconv.Itoa(live.MaxSpanFileBytes)+"-byte") {
		t.Fatalf("error %v: want the %d-byte limit named", err, live.MaxSpanFileBytes)
	}
}

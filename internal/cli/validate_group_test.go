package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateGroupsIdenticalFindings: 1,000 models entries with the same
// LC2001 print its text once with the paths listed; JSON keeps one item
// per entry.
func TestValidateGroupsIdenticalFindings(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"models": {`)
	for i := range 1000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"m%03d": {"algorithm": "pulsar-wait-and-widen", "rendezvous_weight": "max-input-tps"}`, i)
	}
	b.WriteString("}}")
	f := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(f, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI(t, "", "validate", "-q", f)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	if n := strings.Count(out, "has no queue SLO"); n != 1 {
		t.Errorf("LC2001's text printed %d times, want once", n)
	}
	if !strings.Contains(out, `models["m000"], models["m001"] and 998 more (1000 entries;`) {
		t.Errorf("no grouped path list in:\n%.600s", out)
	}
	if len(out) > 4000 {
		t.Errorf("text output is %d bytes for one grouped finding", len(out))
	}
	code, out, _ = runCLI(t, "", "-o", "json", "validate", f)
	var rep validateReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatalf("json: exit %d", code)
	}
	n := 0
	for _, d := range rep.Files[0].Diagnostics {
		if d.Code == "LC2001" {
			n++
		}
	}
	if n != 1000 {
		t.Errorf("JSON has %d LC2001 items, want one per entry (1000)", n)
	}
}

func TestFindingGroupPathList(t *testing.T) {
	for _, tc := range []struct {
		paths []string
		want  string
	}{
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a and b"},
		{[]string{"a", "b", "c"}, "a, b and c"},
		{[]string{"a", "b", "c", "d"}, "a, b and 2 more"},
	} {
		if got := (&findingGroup{paths: tc.paths}).pathList(); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.paths, got, tc.want)
		}
	}
}

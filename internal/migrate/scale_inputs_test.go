package migrate

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var scaleInputs = flag.String("scale-inputs", "", "write the 124,000-model benchmark inputs (lb-124k.json, lb-124k.yaml) into this directory")

// TestScaleInputs checks that the generator behind BenchmarkMigrateScale
// writes inputs of the size issue 14 measured (a 15.9 MB file of 124,000
// entries, the YAML within 10 % of it), one entry per model, and, given
// -scale-inputs DIR, saves them for the whole-command figures in
// docs/performance.md:
//
//	go test ./internal/migrate -run TestScaleInputs -scale-inputs /tmp
func TestScaleInputs(t *testing.T) {
	const n = 124000
	for _, yaml := range []bool{false, true} {
		data := largeConfig(n, yaml)
		name := "lb-124k.json"
		if yaml {
			name = "lb-124k.yaml"
		}
		if len(data) < 14_300_000 || len(data) > 17_500_000 {
			t.Errorf("%s: %d bytes, want about 15.9 MB", name, len(data))
		}
		if got := bytes.Count(data, []byte("org-")); got != n {
			t.Errorf("%s: %d model ids, want %d", name, got, n)
		}
		if *scaleInputs != "" {
			if err := os.WriteFile(filepath.Join(*scaleInputs, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

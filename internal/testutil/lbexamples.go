package testutil

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// LBConfigExample is one row of the real upstream lb-configs' expected.tsv
// (../shared/examples/lb-config).
type LBConfigExample struct {
	// Name is the file's name in the folder.
	Name string
	// Verdict is Stargate's: "accepted", "rejected", or "n/a" for a file
	// that is not an lb-config (a summary written for the folder).
	Verdict string
	// NoSLO reports a no-SLO pulsar-wait-and-widen entry (third column
	// "yes").
	NoSLO bool
}

// minLBConfigExamples is the least number of rows expected.tsv holds; fewer
// means the file was cut short or misread.
const minLBConfigExamples = 80

// LBConfigExamples returns the folder of the real upstream lb-configs and
// the rows of its expected.tsv in file order, comments and blank lines
// skipped. It fails the test when the file cannot be read, a row does not
// have three tab-separated columns, or there are fewer than 80 rows.
func LBConfigExamples(t testing.TB) (string, []LBConfigExample) {
	t.Helper()
	dir := filepath.Join(SharedDir(t), "examples", "lb-config")
	tsv, err := os.ReadFile(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []LBConfigExample
	sc := bufio.NewScanner(bytes.NewReader(tsv))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("expected.tsv: bad row %q", line)
		}
		rows = append(rows, LBConfigExample{Name: cols[0], Verdict: cols[1], NoSLO: cols[2] == "yes"})
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("expected.tsv: %v", err)
	}
	if len(rows) < minLBConfigExamples {
		t.Fatalf("expected.tsv has only %d rows", len(rows))
	}
	return dir, rows
}

// LBConfigDirs returns the two folders of example lb-configs: the real
// upstream ones (../shared/examples/lb-config) and the repository's own
// (examples/lb-config).
func LBConfigDirs(t testing.TB) []string {
	t.Helper()
	return []string{
		filepath.Join(SharedDir(t), "examples", "lb-config"),
		filepath.Join(RepoRoot(t), "examples", "lb-config"),
	}
}

// LBConfigFiles returns the content of every file in LBConfigDirs, folder
// by folder in name order (expected.tsv and README.md included: fuzz seeds
// need not be valid). It fails the test when a folder or file cannot be
// read.
func LBConfigFiles(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, dir := range LBConfigDirs(t) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, data)
		}
	}
	return out
}

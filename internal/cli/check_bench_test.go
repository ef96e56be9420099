package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/ui"
)

// writeModelsScrape writes a Stargate scrape with one returning-primary
// session selection series for each of n distinct models to a file in
// dir and returns its path.
func writeModelsScrape(tb testing.TB, dir string, n int) string {
	tb.Helper()
	path := filepath.Join(dir, fmt.Sprintf("models-%d.prom", n))
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("# TYPE stargate_routing_session_selections_total counter\n")
	for i := range n {
		fmt.Fprintf(w, `stargate_routing_session_selections_total{algorithm="pulsar-wait-and-widen",model="org/model-%06d",routing_key="fn-a",selection="primary",session_state="returning"} %d`+"\n", i, i+1)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkCheckMetricsModels runs the whole `lcctl check metrics
// --stargate FILE` command (read, parse, report, verdicts, text or JSON
// output to a discarding writer) on scrapes of 2,000, 20,000 and 200,000
// distinct models. Target: 200,000 models within 5 s of CPU for the whole
// command (issue 14); docs/performance.md records the figures.
func BenchmarkCheckMetricsModels(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{2000, 20000, 200000} {
		path := writeModelsScrape(b, dir, n)
		for _, output := range []string{"text", "json"} {
			b.Run(fmt.Sprintf("%s/%d-models", output, n), func(b *testing.B) {
				b.ReportAllocs()
				args := []string{"check", "metrics", "--stargate", path}
				if output == "json" {
					args = append(args, "-o", "json")
				}
				for b.Loop() {
					var out countingWriter
					s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: io.Discard, Getenv: func(string) string { return "" }}
					if code := cli.Main(context.Background(), args, s); code != 0 {
						b.Fatalf("exit %d", code)
					}
					if out.n == 0 {
						b.Fatal("no output")
					}
				}
			})
		}
	}
}

// countingWriter discards what it is given and counts the bytes.
type countingWriter struct{ n int64 }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/ui"
)

// clearScreen is what --watch writes before each redraw on a terminal.
const clearScreen = "\x1b[H\x1b[2J"

// linesThenCancel cancels after n lines were written.
type linesThenCancel struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	n      int
	cancel func()
}

func (w *linesThenCancel) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if bytes.Count(w.buf.Bytes(), []byte("\n")) >= w.n {
		w.cancel()
	}
	return n, err
}

func (w *linesThenCancel) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// runWatch runs lcctl until `lines` lines are out, then "presses Ctrl-C".
func runWatch(t *testing.T, tty bool, lines int, args ...string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out := &linesThenCancel{n: lines, cancel: cancel}
	var errb bytes.Buffer
	s := &ui.Streams{In: strings.NewReader(""), Out: out, Err: &errb, OutTTY: tty, Getenv: func(string) string { return "" }}
	code := cli.Main(ctx, args, s)
	if ctx.Err() == context.DeadlineExceeded {
		t.Fatal("the watch did not stop")
	}
	return code, out.String(), errb.String()
}

func TestCheckMetricsWatchPiped(t *testing.T) {
	t.Parallel()
	srv := serveFixtures(t)
	code, out, errs := runWatch(t, false, 2, "check", "metrics", "--gateway", srv.URL+"/gateway-healthy.prom", "--watch", "--interval", "30ms")
	if code != cli.ExitOK {
		t.Fatalf("Ctrl-C ended the watch with exit %d (want 0)\n%s%s", code, out, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("want a line per interval:\n%s", out)
	}
	for _, l := range lines {
		if !strings.Contains(l, "gateway lookups 0/s hit n/a") || !strings.Contains(l, "| verdicts ") || strings.Contains(l, clearScreen) {
			t.Errorf("line %q", l)
		}
	}
	// JSON: one lcctl.metrics/v1 document per line.
	_, out, _ = runWatch(t, false, 2, "-o", "json", "check", "metrics", "--gateway", srv.URL+"/gateway-healthy.prom", "--watch", "--interval", "30ms")
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var rep cli.MetricsReport
		if err := json.Unmarshal([]byte(l), &rep); err != nil || rep.Schema != "lcctl.metrics/v1" || rep.Window.Mode != "rates" {
			t.Errorf("JSON line %q: %v", l, err)
		}
	}
}

func TestCheckMetricsWatchTerminal(t *testing.T) {
	t.Parallel()
	srv := serveFixtures(t)
	// Each redraw ends with the "updated" line: stop after two.
	code, out, _ := runWatch(t, true, 40, "check", "metrics", "--gateway", srv.URL+"/gateway-healthy.prom", "--watch", "--interval", "30ms")
	if code != 0 || strings.Count(out, clearScreen) < 2 || !strings.Contains(out, "rates over 30ms · Ctrl-C to stop") || !strings.Contains(out, "lookups  hit 0/s") {
		t.Fatalf("exit %d:\n%q", code, out)
	}
	if code, _, errs := runLcctlStdin(t, "", nil, "check", "metrics", "--gateway", metricsFixture("gateway-healthy.prom"), "--watch"); code != cli.ExitUsage || !strings.Contains(errs, "--watch needs http(s) URLs") {
		t.Errorf("file source: exit %d %s", code, errs)
	}
}

func TestPreflightWait(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "lb.json")
	bad, err := os.ReadFile(fixture("examples", "lb-config", "no-slo-pulsar-wait-and-widen.json"))
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(fixture("examples", "lb-config", "pulsar-wait-and-widen.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	// Failing until the timeout: exit 1, the last report printed; the
	// note about --olric at stage 1 is printed once, not once per run.
	code, out, errs := runLcctlStdin(t, "", nil, "preflight", "--stage", "1", "--config", cfg, "--olric", "127.0.0.1:1", "--wait", "--wait-timeout", "150ms", "--wait-interval", "40ms")
	if code != cli.ExitFindings || !strings.Contains(errs, "preflight --wait: still failing after 150ms") || !strings.Contains(errs, "run 1: checks failing; next run in 40ms") || !strings.Contains(out, "✖") ||
		strings.Count(errs, "are not used at stage 1") != 1 {
		t.Fatalf("timeout: exit %d\n%s%s", code, out, errs)
	}
	// The config is fixed while waiting: exit 0 with the passing report.
	// Replaced atomically (as an editor or a ConfigMap update does):
	// os.WriteFile truncates first, and a run that read the empty file
	// in between failed the test with exit 2.
	go func() {
		time.Sleep(100 * time.Millisecond)
		tmp := cfg + ".new"
		if os.WriteFile(tmp, good, 0o644) == nil {
			_ = os.Rename(tmp, cfg)
		}
	}()
	code, out, errs = runLcctlStdin(t, "", nil, "preflight", "--stage", "1", "--config", cfg, "--wait", "--wait-timeout", "20s", "--wait-interval", "30ms", "--wait-settle", "200ms")
	if code != cli.ExitOK || !strings.Contains(errs, "preflight passed on run ") || strings.Count(out, "Status check results") != 1 {
		t.Fatalf("fixed: exit %d\n%s%s", code, out, errs)
	}
	if code, _, errs := runLcctlStdin(t, "", nil, "preflight", "--stage", "1", "--config", "-", "--wait"); code != cli.ExitUsage || !strings.Contains(errs, "standard input (-) can be read only once") {
		t.Errorf("stdin: exit %d %s", code, errs)
	}
	// Ctrl-C while waiting: exit 1, said so.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	var o, e bytes.Buffer
	if err := os.WriteFile(cfg, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	code = cli.Main(ctx, []string{"preflight", "--stage", "1", "--config", cfg, "--wait", "--wait-interval", "30ms"}, &ui.Streams{In: strings.NewReader(""), Out: &o, Err: &e, Getenv: func(string) string { return "" }})
	// A run the cancel cut short is not counted: the wait says which
	// (or that it came in a pause) and prints the last completed report.
	if code != cli.ExitFindings || !regexp.MustCompile(`preflight --wait: interrupted (while waiting|during run \d+); still failing \(\d+ runs?\)`).MatchString(e.String()) || strings.Count(o.String(), "Status check results") != 1 {
		t.Errorf("Ctrl-C: exit %d %s", code, e.String())
	}
}

// TestPreflightWaitConfigMidWrite: a config caught half written (the
// writer pauses between two chunks) is not the end of a --wait: the run
// says so on stderr and waits; the deadline ends it with the last error.
func TestPreflightWaitConfigMidWrite(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(fixture("examples", "lb-config", "pulsar-wait-and-widen.json"))
	if err != nil {
		t.Fatal(err)
	}
	half := len(good) / 2
	cfg := filepath.Join(t.TempDir(), "lb.json")
	if err := os.WriteFile(cfg, good[:half], 0o644); err != nil {
		t.Fatal(err)
	}
	// The second chunk lands after a pause, while lcctl waits.
	done := make(chan error, 1)
	go func() {
		time.Sleep(150 * time.Millisecond)
		f, err := os.OpenFile(cfg, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.Write(good[half:])
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		done <- err
	}()
	code, out, errs := runLcctlStdin(t, "", nil, "preflight", "--stage", "1", "--config", cfg, "--wait", "--wait-timeout", "20s", "--wait-interval", "30ms", "--wait-settle", "100ms")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if code != cli.ExitOK || !strings.Contains(errs, "run 1: input unreadable or incomplete, waiting (next run in 30ms, gives up in ") || !strings.Contains(errs, "): "+cfg+":") || !strings.Contains(errs, "preflight passed on run ") || strings.Count(out, "Status check results") != 1 {
		t.Fatalf("mid-write: exit %d\n%s%s", code, out, errs)
	}
	// Never completed: the deadline ends the wait with the last error
	// (exit 2, an unusable input) and no report.
	code, out, errs = runLcctlStdin(t, "", nil, "preflight", "--stage", "1", "--config", cfg+".missing", "--wait", "--wait-timeout", "100ms", "--wait-interval", "30ms")
	if code != cli.ExitUsage || out != "" || !strings.Contains(errs, "preflight --wait: input still unreadable or incomplete after 100ms") || !strings.Contains(errs, "failed to read "+cfg+".missing") {
		t.Fatalf("deadline: exit %d\n%s%s", code, out, errs)
	}
	// Ctrl-C while the input is unreadable: exit 1, the code of an
	// interrupted wait, with the input's error.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	var o, e bytes.Buffer
	code = cli.Main(ctx, []string{"preflight", "--stage", "1", "--config", cfg + ".missing", "--wait", "--wait-interval", "30ms"}, &ui.Streams{In: strings.NewReader(""), Out: &o, Err: &e, Getenv: func(string) string { return "" }})
	if code != cli.ExitFindings || o.Len() != 0 || !regexp.MustCompile(`interrupted (while waiting|during run \d+); input still unreadable or incomplete \(`).MatchString(e.String()) || !strings.Contains(e.String(), "failed to read "+cfg+".missing") {
		t.Fatalf("Ctrl-C: exit %d\n%s%s", code, o.String(), e.String())
	}
	// Any other usage error still ends the wait at once: nothing to
	// check at stage 1 with only --olric.
	code, _, errs = runLcctlStdin(t, "", nil, "preflight", "--stage", "1", "--olric", "127.0.0.1:1", "--wait", "--wait-timeout", "20s", "--wait-interval", "30ms")
	if code != cli.ExitUsage || !strings.Contains(errs, "nothing was checked at stage 1") || strings.Contains(errs, "waiting") {
		t.Fatalf("usage error: exit %d\n%s", code, errs)
	}
}

// TestPreflightWaitInterruptedDuringRun: Ctrl-C while a run scrapes (the
// server holds the request) keeps the last completed run's report, counts
// only completed runs, and says when no run finished.
func TestPreflightWaitInterruptedDuringRun(t *testing.T) {
	t.Parallel()
	bad, err := os.ReadFile(fixture("examples", "lb-config", "no-slo-pulsar-wait-and-widen.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "lb.json")
	if err := os.WriteFile(cfg, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	healthy, err := os.ReadFile(metricsFixture("stargate-healthy.prom"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		answered int // requests answered before one is held
		wantOut  bool
		wantErr  string
	}{
		{1, true, "preflight --wait: interrupted during run 2; still failing (1 run)"},
		{0, false, "preflight --wait: interrupted during run 1 (no run finished)"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		var hits atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if int(hits.Add(1)) > tc.answered {
				cancel() // Ctrl-C while this scrape is in flight
				<-r.Context().Done()
				return
			}
			_, _ = w.Write(healthy)
		}))
		var o, e bytes.Buffer
		code := cli.Main(ctx, []string{"preflight", "--stage", "1", "--config", cfg, "--stargate-metrics", srv.URL + "/metrics", "--wait", "--wait-interval", "20ms"},
			&ui.Streams{In: strings.NewReader(""), Out: &o, Err: &e, Getenv: func(string) string { return "" }})
		srv.Close()
		cancel()
		if code != cli.ExitFindings || !strings.Contains(e.String(), tc.wantErr) || strings.Contains(o.String(), "Status check results") != tc.wantOut {
			t.Errorf("%d answered: exit %d\nstdout:\n%s\nstderr:\n%s", tc.answered, code, o.String(), e.String())
		}
		if tc.wantOut && (strings.Count(o.String(), "Status check results") != 1 || !strings.Contains(o.String(), "✖")) {
			t.Errorf("%d answered: want run 1's failing report once:\n%s", tc.answered, o.String())
		}
	}
}

// TestPreflightWaitRefusesSpecialFiles: a --wait input that exists but is
// not a regular file (a named pipe, a directory, a device) cannot become
// readable by waiting: the wait stops at once (exit 2), where it ran every
// --wait-interval until --wait-timeout. A missing file is still waited for
// (TestPreflightWaitConfigMidWrite).
func TestPreflightWaitRefusesSpecialFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	special := []string{dir, os.DevNull}
	if runtime.GOOS != "windows" {
		fifo := filepath.Join(dir, "ff")
		if err := mkfifo(fifo); err != nil {
			t.Fatal(err)
		}
		special = append(special, fifo)
	}
	for _, p := range special {
		for _, flag := range []string{"--config", "--stargate-metrics"} {
			code, out, errs := runLcctlStdin(t, "", nil, "preflight", "--stage", "1", flag, p, "--wait", "--wait-timeout", "500ms", "--wait-interval", "100ms")
			if code != cli.ExitUsage || out != "" || !strings.Contains(errs, flag+": "+p+" is a ") || !strings.Contains(errs, "not a regular file") || strings.Contains(errs, "waiting") {
				t.Errorf("%s %s: exit %d\n%s%s", flag, p, code, out, errs)
			}
		}
	}
}

// TestPreflightWaitYAMLPrefixDoesNotPass: a YAML config written in place
// in two chunks: the first chunk alone is a valid config that passes,
// the whole file fails. The run that read the first chunk passed and the
// wait ended with exit 0; now the pass waits for the file to settle
// (--wait-settle), sees it changed, and runs again.
func TestPreflightWaitYAMLPrefixDoesNotPass(t *testing.T) {
	t.Parallel()
	part1 := "default: power-of-n\nmodels:\n  model-a:\n    algorithm: pulsar-wait-and-widen\n    max_queued: 4\n    cache_affinity_wait_ms: 300\n"
	part2 := "  model-b: pulsar-wait-and-widen\n"
	cfg := filepath.Join(t.TempDir(), "lb.yaml")
	if err := os.WriteFile(cfg, []byte(part1), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		time.Sleep(200 * time.Millisecond)
		f, err := os.OpenFile(cfg, os.O_WRONLY|os.O_APPEND, 0)
		if err == nil {
			_, err = f.WriteString(part2)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		done <- err
	}()
	code, out, errs := runLcctlStdin(t, "", nil, "preflight", "--stage", "1", "--config", cfg, "--wait", "--wait-timeout", "1500ms", "--wait-interval", "50ms", "--wait-settle", "600ms")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if code != cli.ExitFindings || !strings.Contains(errs, "changed while run 1 read it or within --wait-settle after") || !strings.Contains(errs, "still failing after 1.5s") || !strings.Contains(out, "✖") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	// A file already settled passes at once.
	if err := os.WriteFile(cfg, []byte(part1), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errs := runLcctlStdin(t, "", nil, "preflight", "--stage", "1", "--config", cfg, "--wait", "--wait-timeout", "20s", "--wait-settle", "100ms"); code != cli.ExitOK || strings.Count(out, "Status check results") != 1 {
		t.Fatalf("settled: exit %d\n%s%s", code, out, errs)
	}
}

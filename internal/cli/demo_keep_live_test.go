package cli_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// TestDemoKeepLive: with --keep and the live step, the Pylon pages stay up
// during the wait and the closing lines list them and the live step's
// snapshot command, which works as printed; with -o json those lines go to
// stderr and stdout is the JSON document alone.
func TestDemoKeepLive(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb testutil.SyncBuffer
	s := &ui.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	done := make(chan int, 1)
	go func() { done <- cli.Main(ctx, []string{"demo", "--only", "live", "--keep", "-o", "json"}, s) }()
	snapLine := regexp.MustCompile(`(?m)^  lcctl (snapshot .*--pylon .*)$`)
	var m []string
	for deadline := time.Now().Add(60 * time.Second); m == nil; {
		m = snapLine.FindStringSubmatch(errb.String())
		select {
		case code := <-done:
			t.Fatalf("demo exited %d before the keep lines:\n%s\n%s", code, out.String(), errb.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot line after 60s:\n%s", errb.String())
		}
	}
	if !regexp.MustCompile(`(?m)^  cluster-a  http://127\.0\.0\.1:\d+/metrics$`).MatchString(errb.String()) ||
		!strings.Contains(errb.String(), "  lcctl explain ") || !strings.Contains(errb.String(), "--session-id session-1") {
		t.Errorf("keep lines lack the Pylon URLs or the explain command:\n%s", errb.String())
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Errorf("stdout is not one JSON document: %v\n%s", err, out.String())
	}
	// The printed snapshot command scrapes the pages that stayed up.
	if code, got, errs := runLcctlStdin(t, "", nil, strings.Fields(m[1])...); code != 0 || !strings.Contains(got, "cluster-a") {
		t.Errorf("the printed %q exited %d: %s%s", m[1], code, got, errs)
	}
	stopKeptDemo(t, cancel, done, &errb)
}

// stopKeptDemo cancels a kept demo (Ctrl-C) and waits for it to exit 0.
func stopKeptDemo(t *testing.T, cancel context.CancelFunc, done <-chan int, errb *testutil.SyncBuffer) {
	t.Helper()
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("demo --keep exited %d after Ctrl-C\n%s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo --keep did not stop after Ctrl-C")
	}
}

package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSecondInterruptEnds checks that a command which ignores its
// cancelled context cannot make lcctl unkillable with Ctrl-C: the first
// SIGINT cancels the context, the second ends the process.
func TestSecondInterruptEnds(t *testing.T) {
	if os.Getenv("LCCTL_INTERRUPT_HELPER") == "1" {
		ctx, stop := interruptContext(context.Background())
		defer stop()
		os.Stdout.WriteString("ready\n")
		<-ctx.Done()
		os.Stdout.WriteString("cancelled\n")
		select {} // a command that never looks at ctx again
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSecondInterruptEnds$")
	cmd.Env = append(os.Environ(), "LCCTL_INTERRUPT_HELPER=1")
	var out strings.Builder
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = pw
	cmd.Stderr = &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	buf := make([]byte, 64)
	read := func(want string) {
		t.Helper()
		var got string
		for !strings.Contains(got, want) {
			n, err := pr.Read(buf)
			if err != nil {
				t.Fatalf("helper output %q: waiting for %q: %v", got, want, err)
			}
			got += string(buf[:n])
		}
	}
	read("ready")
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	read("cancelled")
	// The handler is restored by a goroutine; give it a moment, then
	// interrupt again until the process ends (at most a few tries).
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for i := 0; i < 50; i++ {
		time.Sleep(20 * time.Millisecond)
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case err := <-done:
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("helper ended with %v, want death by SIGINT", err)
			}
			ws, ok := ee.Sys().(syscall.WaitStatus)
			if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
				t.Fatalf("helper ended with %v, want death by SIGINT (stderr %q)", err, out.String())
			}
			return
		default:
		}
	}
	_ = cmd.Process.Kill()
	t.Fatalf("a second SIGINT did not end the process (stderr %q)", out.String())
}

// TestNoTestingInBinary: the shipped binary does not link the testing
// package (test helpers live in *test packages such as
// internal/conformance/conformancetest; go-abnf v0.5.3, under expfmt,
// linked it through its fuzz helpers, v0.5.5 does not).
func TestNoTestingInBinary(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH to list the binary's packages: %v", err)
	}
	out, err := exec.Command(gobin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "testing" {
			t.Fatal("lcctl links the testing package (go list -deps ./cmd/lcctl | grep -x testing)")
		}
	}
}

package testutil

import (
	"os"
	"strings"
)

// SubprocessGORACE is the GORACE value for the processes a test starts
// from its own binary (testscript's `exec lcctl`). A race-enabled binary
// waits 1 s when it exits (ThreadSanitizer's atexit_sleep_ms, default
// 1000, gives other threads time to race with the exit), which made every
// `exec lcctl` of the scripts cost a second of wall time and the race run
// of internal/cli about two minutes. atexit_sleep_ms=0 drops the wait;
// races during the command are still detected and fail it. Options the
// caller set in $GORACE are kept, an explicit atexit_sleep_ms included.
func SubprocessGORACE() string {
	g := strings.TrimSpace(os.Getenv("GORACE"))
	if strings.Contains(g, "atexit_sleep_ms") {
		return g
	}
	return strings.TrimSpace(g + " atexit_sleep_ms=0")
}

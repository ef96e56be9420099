package cli

import "time"

func init() {
	// --watch refuses intervals under 1s; the tests (internal and
	// cli_test, one binary) watch faster.
	minWatchInterval = 20 * time.Millisecond
}

// Command lcctl is the operator toolkit for Stargate's session-aware
// last-cluster affinity rollout. See README.md and docs/ for usage.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/ui"
)

func main() {
	ctx, stop := interruptContext(context.Background())
	code := cli.Main(ctx, os.Args[1:], ui.SystemStreams())
	stop()
	os.Exit(code)
}

// interruptContext returns a context that ends at the first SIGINT or
// SIGTERM, so commands can stop cleanly (finish a write, report what they
// did). The first signal also restores the default signal behaviour: a
// second Ctrl-C (or SIGTERM) ends the process at once, even if a command
// does not notice the cancelled context.
func interruptContext(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx, stop
}

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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], ui.SystemStreams())
	stop()
	os.Exit(code)
}

package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/store"
)

// storeProbeOptions are the (connection) flags of `lcctl store probe`.
type storeProbeOptions struct {
	cmdInput
	storeConn
}

// validate checks the connection flags.
func (o *storeProbeOptions) validate(env *Env) error { return o.validateConn(env, o.flagGiven) }

func newStoreProbeCommand(env *Env, conn *connFlags) *cobra.Command {
	return wireLeaf(&cobra.Command{
		Use:   "probe",
		Short: "Check that the DMap is reachable, writable and readable",
		Long: `Connect, list the members, then write a probe entry under a random key
outside the store's key space (lcctl:probe:<32 hex>, TTL 30s), read it back,
delete it and confirm it is gone. Exit status 1 when a step fails.`,
		Example: `  lcctl store probe --olric llm-api-gateway:3320
  lcctl store probe --olric 127.0.0.1:3320 -o json`,
		Args: cobra.NoArgs,
	}, env, &storeProbeOptions{storeConn: storeConn{conn: conn}}, runStoreProbe)
}

// runStoreProbe writes, reads and deletes a probe entry and prints each
// step.
func runStoreProbe(ctx context.Context, env *Env, o *storeProbeOptions) error {
	o.conn.warnDMap(env)
	res, perr := store.Probe(ctx, o.opts)
	if env.Global.JSON() {
		if err := writeJSON(env.Out, "store-probe", res); err != nil {
			return err
		}
	} else {
		if len(res.Members) > 0 {
			fmt.Fprintf(env.Out, "members      %s\n", strings.Join(res.Members, ", "))
			fmt.Fprintf(env.Out, "partitions   %d\n", res.Partitions)
		}
		for _, s := range res.Steps {
			mark := env.Style.OK.Render("ok")
			if !s.OK {
				mark = env.Style.Error.Render("FAILED")
			}
			fmt.Fprintf(env.Out, "%-12s %s %s", s.Name, mark, s.Latency.Truncate(time.Microsecond))
			// The error that ended the probe goes to stderr once
			// (below); a step error it does not contain (a
			// delete after a failed read) is shown here.
			if s.Error != "" && (perr == nil || !strings.Contains(perr.Error(), s.Error)) {
				fmt.Fprintf(env.Out, ": %s", s.Error)
			}
			fmt.Fprintln(env.Out)
		}
	}
	if perr != nil {
		return failf("probe of dmap %q failed: %v", res.DMap, perr)
	}
	return nil
}

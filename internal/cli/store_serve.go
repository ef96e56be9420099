package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/store"
)

type storeServeOptions struct {
	cmdInput
	conn        *connFlags
	bind        string
	port        int
	seedDemo    bool
	demoEntries int
	demoTTL     string
	// ttl is the parsed --demo-ttl, set by validate.
	ttl time.Duration
}

func newStoreServeDevCommand(env *Env, conn *connFlags) *cobra.Command {
	o := &storeServeOptions{conn: conn}
	cmd := &cobra.Command{
		Use:   "serve-dev",
		Short: "Run a single-member Olric on loopback for demos and tests",
		Long: `Start a real Olric v0.7.4 member inside lcctl, listening on a loopback
address, and keep it running until interrupted (Ctrl-C). It has the
gateway's settings (271 partitions, one copy, no password) and serves the
same DMap, so every 'lcctl store' command works against it.

--seed-demo writes demo sessions (--demo-entries, default 300) spread over
cluster-a, cluster-b and cluster-c, with keys derived from demo session
triples; the output lists a few triples to try with 'lcctl store get'.

Only loopback addresses are accepted: the member has no authentication.`,
		Example: `  lcctl store serve-dev --seed-demo
  lcctl store serve-dev --port 0 --seed-demo --demo-entries 1000`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runStoreServeDev)
	f := cmd.Flags()
	f.StringVar(&o.bind, "bind", "127.0.0.1", "loopback IP to listen on")
	f.IntVar(&o.port, "port", store.DefaultPort, "RESP port (0: any free port)")
	f.BoolVar(&o.seedDemo, "seed-demo", false, "write demo sessions")
	f.IntVar(&o.demoEntries, "demo-entries", 300, "how many demo sessions --seed-demo writes (2-100000)")
	f.StringVar(&o.demoTTL, "demo-ttl", "1h", "TTL of the demo entries")
	return cmd
}

// validate checks the flags (usage errors), parses the demo TTL and
// resolves --dmap.
func (o *storeServeOptions) validate(env *Env) (err error) {
	ip := net.ParseIP(o.bind)
	if ip == nil || !ip.IsLoopback() {
		return Usagef("--bind %q: serve-dev listens on loopback addresses only (127.0.0.1, ::1); the member has no authentication", o.bind)
	}
	if o.port < 0 || o.port > 65535 {
		return Usagef("--port %d out of range 0-65535", o.port)
	}
	if o.demoEntries < 2 || o.demoEntries > 100000 {
		return Usagef("--demo-entries %d out of range 2-100000", o.demoEntries)
	}
	if o.ttl, err = store.ParseTTL(o.demoTTL); err != nil {
		return UsageErr(fmt.Errorf("--demo-ttl: %w", err))
	}
	return o.conn.resolveDMap(env, o.flagGiven)
}

// runStoreServeDev runs the member with validated options until ctx ends.
func runStoreServeDev(ctx context.Context, env *Env, o *storeServeOptions) error {
	conn, ttl := o.conn, o.ttl
	node, err := store.StartNode(ctx, store.NodeOptions{BindAddr: o.bind, Port: o.port})
	if err != nil {
		return failf("%v (is another Olric or serve-dev using port %d? try --port 0)", err, o.port)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = node.Shutdown(sctx)
	}()
	addr := node.Addr()
	var seeded int
	per := map[string]int{}
	var sessions []store.DemoSession
	if o.seedDemo {
		c, err := store.Connect(ctx, store.Options{Addrs: []string{addr}, DMap: conn.dmap})
		if err != nil {
			return fail(err)
		}
		sessions = store.DemoSessions(o.demoEntries)
		seeded, err = store.SeedDemo(ctx, c, sessions, ttl)
		_ = c.Close()
		if err != nil {
			return fail(err)
		}
		for _, s := range sessions {
			per[s.Cluster]++
		}
	}
	// What goes to stdout while serving; "stopping" goes to stderr with
	// JSON output, which is one line (docs/store.md).
	status := env.Out
	if env.Global.JSON() {
		status = env.Err
		j := serveJSON{Addr: addr, DMap: conn.dmap, Seeded: seeded}
		if o.seedDemo {
			j.PerCluster, j.TTLMs = per, ttl.Milliseconds()
		}
		if err := writeJSONLine(env.Out, "store-serve-dev", j); err != nil {
			return err
		}
	} else {
		printServeText(env, addr, conn.dmap, sessions, seeded, per, ttl)
	}
	fmt.Fprintln(status, "serving until interrupted (Ctrl-C)")
	select {
	case <-ctx.Done():
		fmt.Fprintln(status, "stopping")
		return nil
	case <-node.Done():
		return failf("the Olric member stopped unexpectedly")
	}
}

// serveJSON is the one JSON line `store serve-dev --output json` prints
// once the member listens (and, with --seed-demo, is seeded).
type serveJSON struct {
	Addr string `json:"addr"`
	DMap string `json:"dmap"`
	// Seeded is the number of demo entries written (0 without
	// --seed-demo); PerCluster counts them by cluster and TTLMs is their
	// TTL (ms), both left out without --seed-demo.
	Seeded     int            `json:"seeded"`
	PerCluster map[string]int `json:"per_cluster,omitempty"`
	TTLMs      int64          `json:"ttl_ms,omitempty"`
}

// printServeText is serve-dev's text output: the address, the export
// line and, with --seed-demo, sessions to try.
func printServeText(env *Env, addr, dmap string, sessions []store.DemoSession, seeded int, per map[string]int, ttl time.Duration) {
	fmt.Fprintf(env.Out, "Olric v0.7.4 (embedded, one member) listening on %s, dmap %s\n", addr, dmap)
	fmt.Fprintf(env.Out, "export %s=%s\n", EnvOlricAddrs, addr)
	if len(sessions) == 0 {
		return
	}
	fmt.Fprintf(env.Out, "seeded %d demo sessions (ttl %v):", seeded, ttl)
	for _, cl := range store.DemoClusters {
		fmt.Fprintf(env.Out, " %s %d", cl, per[cl])
	}
	fmt.Fprintln(env.Out)
	fmt.Fprintln(env.Out, "demo sessions to look up (routing key, model, session id, source -> cluster):")
	for _, s := range sessions[:min(4, len(sessions))] {
		fmt.Fprintf(env.Out, "  %s %s %s %s -> %s\n", s.RoutingKey, s.Model, s.SessionID, s.Source, s.Cluster)
	}
	s := sessions[0]
	fmt.Fprintln(env.Out, "try, in another shell (after the export above):")
	fmt.Fprintf(env.Out, "  lcctl store get --routing-key %s --model %s --session-id %s --source %s\n", s.RoutingKey, s.Model, s.SessionID, s.Source)
	fmt.Fprintf(env.Out, "  lcctl store scan --cluster %s --limit 5\n", store.DemoClusters[2])
	fmt.Fprintf(env.Out, "  lcctl store evict --cluster %s\n", store.DemoClusters[2])
}

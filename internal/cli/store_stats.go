package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/ui"
)

type storeStatsOptions struct {
	cmdInput
	storeConn
	noScan bool
}

// validate checks the connection flags.
func (o *storeStatsOptions) validate(env *Env) error { return o.validateConn(env, o.flagGiven) }

func newStoreStatsCommand(env *Env, conn *connFlags) *cobra.Command {
	o := &storeStatsOptions{storeConn: storeConn{conn: conn}}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Members, partitions, replicas, entry count and entries per cluster",
		Long: `Show the Olric cluster behind the store: each member (version, uptime,
partitions owned as primary and replica, entries of the DMap it owns),
the partition count, the replica count the routing table shows, and the
DMap's entry count. Entry counts come from each member's STATS and include
expired entries Olric has not evicted yet.

Unless --no-scan is given, it also scans the DMap for the distribution of
live entries over clusters (as 'lcctl store scan --summary-only').`,
		Example: `  lcctl store stats --olric llm-api-gateway:3320
  lcctl store stats --no-scan -o json`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runStoreStats)
	cmd.Flags().BoolVar(&o.noScan, "no-scan", false, "skip the scan for the distribution over clusters")
	return cmd
}

// statsJSON is the output of `store stats -o json`.
type statsJSON struct {
	store.ClusterStats
	Distribution *store.ScanReport `json:"distribution,omitempty"`
}

// runStoreStats prints the cluster's statistics.
func runStoreStats(ctx context.Context, env *Env, o *storeStatsOptions) error {
	c, err := o.dial(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()
	st, err := c.Stats(ctx)
	if err != nil {
		return fail(err)
	}
	out := statsJSON{ClusterStats: st}
	var scanErr error
	if !o.noScan {
		prog := newProgress(env)
		rep, err := c.Scan(ctx, store.ScanOptions{Progress: func(p store.ScanProgress) {
			prog.Show("scanning %s: %d keys", c.DMap(), p.Keys)
		}}, func(store.Entry) error { return nil })
		prog.Clear()
		out.Distribution = &rep
		scanErr = err
	}
	if env.Global.JSON() {
		if err := writeJSON(env.Out, "store-stats", out); err != nil {
			return err
		}
	} else {
		writeStats(env, out)
	}
	incomplete := !st.EntriesComplete
	for _, m := range st.Members {
		if m.Error != "" {
			fmt.Fprintf(env.Err, "%s STATS from %s: %s\n", env.ErrStyle.Warning.Render("problem:"), m.Name, m.Error)
		}
	}
	if out.Distribution != nil {
		for _, p := range out.Distribution.Problems {
			fmt.Fprintf(env.Err, "%s %s\n", env.ErrStyle.Warning.Render("problem:"), p)
		}
	}
	if !st.DMapSeen {
		emptyHint(env, c.DMap())
	}
	switch {
	case scanErr != nil:
		return failf("distribution scan: %v", scanErr)
	case incomplete:
		return failf("some members did not answer STATS: entry counts are incomplete")
	}
	return nil
}

func writeStats(env *Env, s statsJSON) {
	w := env.Out
	complete := ""
	if !s.EntriesComplete {
		complete = " (incomplete)"
	}
	fmt.Fprintf(w, "dmap %s: %s%s, counted at each partition's current owner (includes expired entries not yet evicted)\n", s.DMap, plural.Count(s.Entries, "entry", "entries"), complete)
	fmt.Fprintf(w, "%s, %s, replica count %d", plural.Count(len(s.Members), "member", "members"), plural.Count(s.Partitions, "partition", "partitions"), s.ReplicaCount)
	if s.MovingPartitions > 0 {
		fmt.Fprintf(w, ", %s moving", plural.Count(s.MovingPartitions, "partition", "partitions"))
	}
	fmt.Fprintln(w)
	t := ui.Table{Headers: []string{"MEMBER", "COORD", "VERSION", "UPTIME", "PRIMARY", "REPLICA", "ENTRIES", "BACKUPS"},
		Right:    map[int]bool{3: true, 4: true, 5: true, 6: true, 7: true},
		MinWidth: map[int]int{1: 5, 2: 8, 3: 8, 4: 7, 5: 7, 6: 8, 7: 8}}
	var notes []string // the VERSION footnotes
	for _, m := range s.Members {
		coord := ""
		if m.Coordinator {
			coord = "yes"
		}
		itoa := strconv.Itoa
		if m.Error != "" {
			t.Rows = append(t.Rows, []string{m.Name, coord, "?", "?", itoa(m.PrimaryPartitions), itoa(m.ReplicaPartitions), "?", "?"})
			continue
		}
		up := (time.Duration(m.UptimeSeconds) * time.Second).String()
		version := m.Version
		if m.VersionNote != "" {
			version += "*"
			if !slices.Contains(notes, m.VersionNote) {
				notes = append(notes, m.VersionNote)
			}
		}
		t.Rows = append(t.Rows, []string{m.Name, coord, version, up, itoa(m.PrimaryPartitions), itoa(m.ReplicaPartitions), fmt.Sprint(m.Entries), fmt.Sprint(m.BackupEntries)})
	}
	io.WriteString(w, t.Render(nil))
	for _, n := range notes {
		fmt.Fprintf(w, "* %s\n", n)
	}
	if d := s.Distribution; d != nil {
		fmt.Fprintln(w)
		writeScanSummary(w, *d, "")
	}
}

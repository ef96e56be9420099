package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/ui"
)

type storeScanOptions struct {
	cmdInput
	storeConn
	cluster     string
	limit       int
	count       int
	summaryOnly bool
	settle      time.Duration
}

func newStoreScanCommand(env *Env, conn *connFlags) *cobra.Command {
	o := &storeScanOptions{storeConn: storeConn{conn: conn}}
	cmd := &cobra.Command{
		Use:   "scan",
		Short: "Stream entries (key, cluster, TTL) and a summary per cluster",
		Long: `Scan every partition of the DMap and print each live entry: key, cluster and
remaining TTL, then a summary of entries per cluster. --cluster keeps only
the entries of one cluster (every entry is still read and counted in the
summary); --limit stops after N printed entries, and the summary then
counts only the keys examined up to that point ('lcctl docs store').

Keys are listed with Olric's scan (DM.SCAN with MATCH ^lc:v1:) and read
with pipelined gets, so expired entries Olric has not evicted yet are not
shown. When a member leaves or stops answering, the scan refreshes the
routing table, resumes where it stopped and says so. "complete" is decided
from partition ownership: partitions whose owners changed during the scan
are scanned again once the routing table has settled (--settle-timeout); a
partition whose every copy was on a member that left, or that could not be
scanned again, makes the scan incomplete. Whatever could not be read is
reported on stderr, the summary says "incomplete: run again", and the exit
status is 1.

Text output: one entry per line, then a blank line and the summary. JSON
output (-o json): JSON Lines, {"schema":"lcctl.store-scan/v1","type":"entry",...}
per entry and one final {"schema":...,"type":"summary",...}; --summary-only
prints the same summary line alone (same shape, no entry lines). A progress line is shown on stderr in a terminal.`,
		Example: `  lcctl store scan
  lcctl store scan --cluster cluster-b --limit 20
  lcctl store scan --summary-only -o json`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runStoreScan)
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "print only entries pointing to this cluster")
	f.IntVar(&o.limit, "limit", 0, "stop after printing this many entries (0: no limit)")
	f.IntVar(&o.count, "count", store.DefaultScanCount, "keys per DM.SCAN call (Olric's COUNT hint), 1-100000")
	f.BoolVar(&o.summaryOnly, "summary-only", false, "print only the summary")
	f.DurationVar(&o.settle, "settle-timeout", store.DefaultSettleTimeout, "after a membership change, wait at most this long for the routing table to settle")
	return cmd
}

// scanSummaryJSON is the final line of `store scan -o json`.
type scanSummaryJSON struct {
	Type string `json:"type"`
	store.ScanReport
	ElapsedMs int64 `json:"elapsed_ms"`
}

// validate checks --cluster (when given), --limit, --count and
// --settle-timeout, then the connection flags.
func (o *storeScanOptions) validate(env *Env) error {
	if o.cluster != "" || o.flagGiven("cluster") {
		if err := store.ValidateValue(o.cluster); err != nil {
			return UsageErr(fmt.Errorf("--cluster: %w", err))
		}
	}
	if o.limit < 0 {
		return Usagef("--limit %d must not be negative", o.limit)
	}
	if o.count < 1 || o.count > 100000 {
		return Usagef("--count %d out of range 1-100000", o.count)
	}
	if o.settle <= 0 || o.settle > 10*time.Minute {
		return Usagef("--settle-timeout %v out of range (0s-10m]", o.settle)
	}
	return o.validateConn(env, o.flagGiven)
}

// runStoreScan scans with the validated options.
func runStoreScan(ctx context.Context, env *Env, o *storeScanOptions) error {
	c, err := o.dial(ctx, env)
	if err != nil {
		return err
	}
	defer c.Close()
	prog := newProgress(env)
	opts := store.ScanOptions{Cluster: o.cluster, Limit: o.limit, Count: o.count, SettleTimeout: o.settle,
		Progress: func(p store.ScanProgress) {
			prog.Show("%s", scanProgressLine(c.DMap(), p, o))
		}}
	json := env.Global.JSON()
	rep, err := c.Scan(ctx, opts, func(e store.Entry) error {
		if o.summaryOnly {
			return nil
		}
		if json {
			j := newEntryJSON(e)
			j.Type, j.Found = "entry", nil
			return writeJSONLine(env.Out, "store-scan", j)
		}
		_, err := fmt.Fprintf(env.Out, "%s  %-12s  %s\n", e.Key, textValue(e.Cluster), formatTTL(e))
		return err
	})
	prog.Clear()
	var werr error
	if json {
		werr = writeJSONLine(env.Out, "store-scan", scanSummaryJSON{Type: "summary", ScanReport: rep, ElapsedMs: rep.Elapsed.Milliseconds()})
	} else {
		if !o.summaryOnly && rep.Matched > 0 {
			fmt.Fprintln(env.Out)
		}
		writeScanSummary(env.Out, rep, o.cluster)
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(env.Err, "%s %s\n", env.ErrStyle.Warning.Render("problem:"), p)
	}
	if err != nil {
		if errors.Is(err, store.ErrIncomplete) || errors.Is(err, ctx.Err()) {
			return failf("scan incomplete: %v", err)
		}
		return fail(err)
	}
	if rep.Keys == 0 {
		emptyHint(env, c.DMap())
	}
	return werr
}

// scanProgressLine is the terminal progress line of a scan: keys listed,
// live entries read, and the entries printed so far ("shown"), or with
// --summary-only, which prints none, the entries read and (with --cluster)
// how many point to the cluster.
func scanProgressLine(dmap string, p store.ScanProgress, o *storeScanOptions) string {
	line := fmt.Sprintf("scanning %s: %s, %s", dmap, plural.Count(p.Keys, "key", "keys"), plural.Count(p.Entries, "entry", "entries"))
	switch {
	case !o.summaryOnly:
		line += fmt.Sprintf(", %d shown", p.Matched)
	case o.cluster != "":
		line += fmt.Sprintf(" read, %d pointing to %s", p.Matched, textValue(o.cluster))
	default:
		line += " read"
	}
	return line + fmt.Sprintf(" (%s)", p.Elapsed.Truncate(100*time.Millisecond))
}

// absentNote reports a missing entry on stderr, with a hint when the DMap
// is not the gateway's.
func absentNote(env *Env, dmap string) {
	fmt.Fprintf(env.Err, "lcctl: no entry for this key in dmap %q (absent or expired)\n", dmap)
	if dmap != store.DMapName {
		fmt.Fprintf(env.Err, "%s the gateway's last-cluster DMap is %q; is --dmap right?\n", env.ErrStyle.Info.Render("note:"), store.DMapName)
	}
}

// emptyHint explains an empty DMap.
func emptyHint(env *Env, dmap string) {
	fmt.Fprintf(env.Err, "%s dmap %q has no entries: is the gateway's last-cluster feature on (STARGATE_LAST_CLUSTER_ENABLED) and --dmap right?\n", env.ErrStyle.Info.Render("note:"), dmap)
}

// writeScanSummary prints the per-cluster summary of a scan.
func writeScanSummary(w io.Writer, rep store.ScanReport, cluster string) {
	state := "complete"
	switch {
	case rep.Truncated:
		state = "stopped at --limit; counts cover the keys examined so far"
	case rep.Interrupted:
		state = "interrupted"
	case !rep.Complete:
		state = "incomplete: run again"
	}
	fmt.Fprintf(w, "scanned dmap %s (%s) in %s: %s, %s", rep.DMap, state, rep.Elapsed.Truncate(time.Millisecond),
		plural.Count(rep.Keys, "key", "keys"), plural.Count(rep.Entries, "live entry", "live entries"))
	if rep.Vanished > 0 {
		fmt.Fprintf(w, ", %d expired or deleted meanwhile", rep.Vanished)
	}
	if rep.Restarts > 0 {
		fmt.Fprintf(w, ", resumed %s", plural.Count(rep.Restarts, "time", "times"))
	}
	fmt.Fprintln(w)
	if rep.Settle.Needed {
		writeSettleLine(w, rep.Settle)
		if rep.RescannedPartitions > 0 {
			fmt.Fprintf(w, "%s scanned again under the settled owners", plural.Count(rep.RescannedPartitions, "partition", "partitions"))
			if n := rep.LostPartitions + rep.UnsettledPartitions; n > 0 {
				fmt.Fprintf(w, "; %d not trusted (lost %d, unsettled %d)", n, rep.LostPartitions, rep.UnsettledPartitions)
			}
			fmt.Fprintln(w)
		}
	}
	if cluster != "" {
		fmt.Fprintf(w, "shown: %s pointing to %s\n", plural.Count(rep.Matched, "entry", "entries"), cluster)
	}
	writeDistribution(w, rep.PerCluster, rep.Entries)
	if rep.Invalid > 0 {
		fmt.Fprintf(w, "%s a value the gateway treats as a miss\n", plural.Count(rep.Invalid, "entry holds", "entries hold"))
	}
	if rep.NoExpiry > 0 {
		fmt.Fprintf(w, "%s no TTL (the gateway always sets one)\n", plural.Count(rep.NoExpiry, "entry has", "entries have"))
	}
	if rep.Ignored > 0 {
		fmt.Fprintf(w, "%s with lc:v1: but %s; ignored\n", plural.Count(rep.Ignored, "key starts", "keys start"), plural.Noun(rep.Ignored, "is not a store key", "are not store keys"))
	}
	if rep.Unreadable > 0 {
		fmt.Fprintf(w, "%s not be read\n", plural.Count(rep.Unreadable, "key could", "keys could"))
	}
}

// writeDistribution prints entries per cluster, most first.
func writeDistribution(w io.Writer, per map[string]int, total int) {
	type row struct {
		cluster string
		n       int
	}
	rows := make([]row, 0, len(per))
	for c, n := range per {
		rows = append(rows, row{c, n})
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].n != rows[j].n {
			return rows[i].n > rows[j].n
		}
		return rows[i].cluster < rows[j].cluster
	})
	if len(rows) == 0 {
		return
	}
	t := ui.Table{Headers: []string{"CLUSTER", "ENTRIES", "SHARE"}, Right: map[int]bool{1: true, 2: true}, MinWidth: map[int]int{1: 8, 2: 6}}
	for _, r := range rows {
		share := 0.0
		if total > 0 {
			share = 100 * float64(r.n) / float64(total)
		}
		t.Rows = append(t.Rows, []string{textValue(r.cluster), strconv.Itoa(r.n), fmt.Sprintf("%5.1f%%", share)})
	}
	io.WriteString(w, t.Render(nil))
}

package cli

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/suggest"
)

// DefaultEvictRate is the default --max-rate of `store evict`: deletions
// per second, gentle on the gateway pods that host Olric.
const DefaultEvictRate = 1000

type storeEvictOptions struct {
	cluster string
	yes     bool
	maxRate float64
	sample  int
	verbose bool
}

func newStoreEvictCommand(env *Env, conn *connFlags) *cobra.Command {
	o := &storeEvictOptions{}
	cmd := &cobra.Command{
		Use:   "evict",
		Short: "Delete every entry pointing to a cluster (dry run unless --yes)",
		Long: `Delete every last-cluster entry whose value is --cluster, e.g. after draining
or removing that cluster, so its returning sessions are classified stale and
re-placed cleanly instead of being steered to it.

Without --yes this is a dry run: it scans, counts the entries and lists a
sample. With --yes it scans, then for each entry found re-reads it, skips
it when it is gone or now points elsewhere, deletes it, and reads it again
to confirm (Olric's delete reply says nothing about what was removed). It
prints exactly how many entries were deleted, skipped and failed.

--max-rate bounds deletions per second (0: no limit). Interrupting (Ctrl-C)
lets the deletes in flight finish and reports what was done; running the
command again picks up what is left.`,
		Example: `  lcctl store evict --cluster cluster-b
  lcctl store evict --cluster cluster-b --yes --max-rate 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStoreEvict(cmd, env, conn, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.cluster, "cluster", "", "cluster whose entries are deleted (required)")
	f.BoolVar(&o.yes, "yes", false, "delete; without it nothing is changed")
	f.Float64Var(&o.maxRate, "max-rate", DefaultEvictRate, "at most this many deletions per second (0: no limit)")
	f.IntVar(&o.sample, "sample", store.DefaultEvictSample, "how many candidate keys to list")
	f.BoolVar(&o.verbose, "verbose", false, "with --yes, print every candidate's outcome")
	return cmd
}

// evictJSON is the output of `store evict -o json`.
type evictJSON struct {
	store.EvictReport
	ElapsedMs int64 `json:"elapsed_ms"`
}

func runStoreEvict(cmd *cobra.Command, env *Env, conn *connFlags, o *storeEvictOptions) error {
	if !cmd.Flags().Changed("cluster") {
		return Usagef("--cluster is required")
	}
	if err := store.ValidateValue(o.cluster); err != nil {
		return UsageErr(fmt.Errorf("--cluster: %w", err))
	}
	if !(o.maxRate == 0 || (o.maxRate >= store.MinEvictRate && o.maxRate <= store.MaxEvictRate)) {
		return Usagef("--max-rate %v: want 0 (no limit) or %v-%v deletions per second", o.maxRate, store.MinEvictRate, store.MaxEvictRate)
	}
	if o.sample < 0 || o.sample > 10000 {
		return Usagef("--sample %d out of range 0-10000", o.sample)
	}
	c, err := conn.connect(cmd.Context(), env)
	if err != nil {
		return err
	}
	defer c.Close()
	prog := newProgress(env)
	sample := o.sample
	if sample == 0 {
		sample = -1
	}
	opts := store.EvictOptions{Cluster: o.cluster, Apply: o.yes, MaxRate: o.maxRate, Sample: sample,
		Scan: store.ScanOptions{Progress: func(p store.ScanProgress) {
			prog.Show("scanning %s: %d keys, %d entries of %s", c.DMap(), p.Keys, p.Matched, o.cluster)
		}},
		Progress: func(p store.EvictProgress) {
			prog.Show("evicting %s: %d of %d (%s)", o.cluster, p.Done, p.Candidates, p.Elapsed.Truncate(100*time.Millisecond))
		},
	}
	if o.verbose && !env.Global.JSON() {
		opts.OnResult = func(r store.EvictResult) {
			prog.Clear()
			switch r.Outcome {
			case store.EvictSkippedChanged:
				fmt.Fprintf(env.Out, "%s %s (now %s)\n", r.Outcome, r.Key, textValue(r.Now))
			case store.EvictFailed:
				fmt.Fprintf(env.Out, "%s %s: %s\n", r.Outcome, r.Key, r.Error)
			default:
				fmt.Fprintf(env.Out, "%s %s\n", r.Outcome, r.Key)
			}
		}
	}
	rep, err := c.Evict(cmd.Context(), opts)
	prog.Clear()
	if env.Global.JSON() {
		if werr := writeJSON(env.Out, "store-evict", evictJSON{EvictReport: rep, ElapsedMs: rep.Elapsed.Milliseconds()}); werr != nil {
			return werr
		}
	} else {
		writeEvictReport(env, rep, o)
	}
	for _, p := range rep.Scan.Problems {
		fmt.Fprintf(env.Err, "%s %s\n", env.ErrStyle.Warning.Render("problem:"), p)
	}
	for _, e := range rep.Errors {
		fmt.Fprintf(env.Err, "%s %s\n", env.ErrStyle.Error.Render("failed:"), e)
	}
	if err != nil {
		if errors.Is(err, store.ErrIncomplete) || rep.Interrupted {
			return failf("%v", err)
		}
		return fail(err)
	}
	if rep.Scan.Keys == 0 {
		emptyHint(env, c.DMap())
	} else if rep.Candidates == 0 {
		// Nothing to do is not a failure (exit 0), but a mistyped or
		// wrong cluster ID should not pass for one without entries.
		if h := evictNoMatchHint(o.cluster, rep.Scan.PerCluster); h != "" {
			fmt.Fprintf(env.Err, "%s %s\n", env.ErrStyle.Info.Render("note:"), h)
		}
	}
	return nil
}

// evictNoMatchHint explains an evict that found no entry of cluster: the
// clusters the scan did see, the most entries first (at most
// evictHintClusters of them), and a "did you mean" for a close one; ""
// when the scan saw no entry at all (emptyHint covers that).
func evictNoMatchHint(cluster string, perCluster map[string]int) string {
	const evictHintClusters = 5
	names := make([]string, 0, len(perCluster))
	for n := range perCluster {
		names = append(names, n)
	}
	if len(names) == 0 {
		return ""
	}
	sort.Slice(names, func(i, j int) bool {
		if a, b := perCluster[names[i]], perCluster[names[j]]; a != b {
			return a > b
		}
		return names[i] < names[j]
	})
	shown := names[:min(len(names), evictHintClusters)]
	parts := make([]string, len(shown))
	for i, n := range shown {
		parts[i] = fmt.Sprintf("%s (%d)", textValue(n), perCluster[n])
	}
	list := strings.Join(parts, ", ")
	if len(names) > len(shown) {
		list += fmt.Sprintf(", … (%d clusters in all)", len(names))
	}
	return fmt.Sprintf("no entry points to %s; the scan saw %s%s", textValue(cluster), list, suggest.DidYouMean(cluster, names))
}

func writeEvictReport(env *Env, rep store.EvictReport, o *storeEvictOptions) {
	w := env.Out
	state := ""
	if !rep.Scan.Complete {
		state = " (scan incomplete)"
	}
	if !rep.Applied {
		fmt.Fprintf(w, "dry run: %s to %s (of %s scanned in %s%s)\n", plural.Count(rep.Candidates, "entry points", "entries point"), o.cluster, plural.Count(rep.Scan.Entries, "entry", "entries"), rep.Scan.Elapsed.Truncate(time.Millisecond), state)
		if len(rep.Sample) > 0 {
			fmt.Fprintf(w, "sample (%d of %d):\n", len(rep.Sample), rep.Candidates)
			for _, k := range rep.Sample {
				fmt.Fprintf(w, "  %s\n", k)
			}
		}
		writeDistribution(w, rep.Scan.PerCluster, rep.Scan.Entries)
		if rep.Candidates > 0 {
			rate := "no rate limit"
			if o.maxRate > 0 {
				rate = fmt.Sprintf("at most %g per second", o.maxRate)
			}
			fmt.Fprintf(w, "run again with --yes to delete them (%s)\n", rate)
		}
		return
	}
	fmt.Fprintf(w, "evicted %s%s: %s %d, skipped %d (%d changed since the scan, %d already gone), failed %d",
		o.cluster, state, env.Style.OK.Render("deleted"), rep.Deleted, rep.SkippedChanged+rep.SkippedGone, rep.SkippedChanged, rep.SkippedGone, rep.Failed)
	if rep.NotAttempted > 0 {
		fmt.Fprintf(w, ", not attempted %d", rep.NotAttempted)
	}
	fmt.Fprintf(w, " (of %s, %s)\n", plural.Count(rep.Candidates, "candidate", "candidates"), rep.Elapsed.Truncate(time.Millisecond))
	if rep.Rewritten > 0 {
		fmt.Fprintf(w, "%d of the deleted entries %s written again by a gateway before the delete was confirmed\n", rep.Rewritten, plural.Noun(rep.Rewritten, "was", "were"))
	}
	if rep.Interrupted {
		fmt.Fprintln(w, "interrupted: run the same command again to continue")
	}
}

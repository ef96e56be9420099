package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/olric-data/olric"
	"golang.org/x/time/rate"

	"github.com/lcctl/lcctl/internal/plural"
)

// Evict defaults.
const (
	// DefaultEvictSample is how many candidate keys a report keeps.
	DefaultEvictSample = 10
	// DefaultEvictBatch is how many candidates are re-read, deleted and
	// confirmed in one round of pipelined calls.
	DefaultEvictBatch = 256
)

// EvictOptions configure Evict.
type EvictOptions struct {
	// Cluster is the value whose entries are deleted; it must pass
	// ValidateValue.
	Cluster string
	// Apply deletes; without it Evict only scans and counts (a dry run).
	Apply bool
	// MaxRate bounds deletions per second (candidates processed per
	// second); 0 means unlimited.
	MaxRate float64
	// Sample is how many candidate keys the report lists; 0 means
	// DefaultEvictSample, -1 none.
	Sample int
	// Batch is the most candidates handled per round; 0 means
	// DefaultEvictBatch.
	Batch int
	// Workers is how many contiguous parts of the candidate list (ranges
	// of partitions) are worked on at once, one round at a time each (with
	// MaxRate, all of them draw from one token bucket); 0 means
	// DefaultReadWorkers.
	Workers int
	// Scan tunes the scan phase; its Cluster and Limit are ignored.
	Scan ScanOptions
	// Progress, when not nil, is called during the apply phase about every
	// 200 ms from the goroutine that called Evict.
	Progress func(EvictProgress)
	// OnResult, when not nil, receives every candidate's outcome during
	// the apply phase, from the goroutine that called Evict. The check
	// after a membership change may call it again for a candidate whose
	// outcome it changed; the last call is the candidate's outcome.
	OnResult func(EvictResult)
	// SettleTimeout bounds the wait for the routing table to settle when
	// partitions changed owners during the run (see Evict); 0 means
	// DefaultSettleTimeout.
	SettleTimeout time.Duration
	// Confirm, when not nil, is called with Apply between the scan and the
	// apply phase with the candidate count and the sample; returning false
	// ends Evict without deleting anything (every candidate NotAttempted,
	// Applied false).
	Confirm func(candidates int, sample []string) bool
}

// EvictProgress is a running count of the apply phase.
type EvictProgress struct {
	// Candidates is the number of entries to handle, Done how many were.
	Candidates, Done int
	// Elapsed is the time since Evict started.
	Elapsed time.Duration
}

// EvictOutcome is what happened to one candidate.
type EvictOutcome string

// Evict outcomes.
const (
	// EvictDeleted: re-read as Cluster, deleted, and confirmed gone (or
	// confirmed replaced by a newer write, see EvictReport.Rewritten).
	EvictDeleted EvictOutcome = "deleted"
	// EvictSkippedChanged: the re-read found another value; not deleted.
	EvictSkippedChanged EvictOutcome = "skipped_changed"
	// EvictSkippedGone: the re-read found no entry (expired or deleted
	// since the scan); nothing to delete.
	EvictSkippedGone EvictOutcome = "skipped_gone"
	// EvictFailed: a call failed after retries, or the entry was still
	// there, unchanged, after the delete and after the rewrite-and-delete
	// fallback (see Client.Delete).
	EvictFailed EvictOutcome = "failed"
	// EvictUnverified: read as absent (at the re-read or after the
	// delete) while its partition changed owners, or deleted again after
	// the routing table settled, and it could not be confirmed gone: a member that held a copy when the run started has
	// left (the entry comes back if it returns), or the routing table did
	// not settle within SettleTimeout. Not done: run again.
	EvictUnverified EvictOutcome = "unverified"
	// EvictNotAttempted: left alone (dry run, declined, interrupted).
	EvictNotAttempted EvictOutcome = "not_attempted"
)

// EvictReason says why a candidate has its outcome; each outcome has its
// own reasons (docs/store.md lists them).
type EvictReason string

// Evict reasons.
const (
	// ReasonConfirmedAbsent (deleted): the read after the delete found
	// nothing, and the partition's owners did not change during the run.
	ReasonConfirmedAbsent EvictReason = "confirmed_absent"
	// ReasonRewritten (deleted): a gateway wrote the key again before the
	// confirming read; the entry read as Cluster is gone.
	ReasonRewritten EvictReason = "rewritten"
	// ReasonAbsentAfterSettle (deleted, skipped_gone): read as absent
	// while owners changed, and read as absent again after the routing
	// table settled, with every member that held a copy at the start
	// still in the cluster.
	ReasonAbsentAfterSettle EvictReason = "absent_after_settle"
	// ReasonRetried (deleted, skipped_changed, ...): found again after
	// the routing table settled and handled again.
	ReasonRetried EvictReason = "retried_after_settle"
	// ReasonValueChanged (skipped_changed): the re-read found another
	// value.
	ReasonValueChanged EvictReason = "value_changed"
	// ReasonAbsentAtReread (skipped_gone): the re-read found nothing, and
	// the partition's owners did not change during the run.
	ReasonAbsentAtReread EvictReason = "absent_at_reread"
	// ReasonCallFailed (failed): a call failed after retries.
	ReasonCallFailed EvictReason = "call_failed"
	// ReasonOwnerLeft (unverified): a member that held a copy of the
	// partition when the run started has left; if it returns, so does its
	// copy.
	ReasonOwnerLeft EvictReason = "owner_left"
	// ReasonNotSettled (unverified): the routing table did not settle
	// within SettleTimeout.
	ReasonNotSettled EvictReason = "not_settled"
	// ReasonUnreachable (unverified, not_attempted): no member answered
	// for SettleTimeout (see EvictReport.ClusterDown): a candidate read
	// as deleted or gone while partitions could not be watched cannot be
	// read again, and the candidates not yet handled are left alone.
	ReasonUnreachable EvictReason = "unreachable"
	// ReasonDryRun, ReasonDeclined, ReasonInterrupted (not_attempted).
	ReasonDryRun      EvictReason = "dry_run"
	ReasonDeclined    EvictReason = "declined"
	ReasonInterrupted EvictReason = "interrupted"
)

// EvictOutcomeCount is how many candidates ended with one outcome for one
// reason.
type EvictOutcomeCount struct {
	Outcome EvictOutcome `json:"outcome"`
	Reason  EvictReason  `json:"reason"`
	Count   int          `json:"count"`
}

// EvictResult is one candidate's outcome.
type EvictResult struct {
	// Key is the candidate's store key.
	Key string `json:"key"`
	// Outcome is what happened to it.
	Outcome EvictOutcome `json:"outcome"`
	// Reason says why (see EvictReason).
	Reason EvictReason `json:"reason"`
	// Now is the value found by the re-read, for skipped_changed.
	Now string `json:"now,omitempty"`
	// Rewritten is set for a deleted entry that a newer write had already
	// replaced when the delete was confirmed.
	Rewritten bool `json:"rewritten,omitempty"`
	// Error says why, for failed.
	Error string `json:"error,omitempty"`
}

// EvictReport summarises Evict.
type EvictReport struct {
	// Cluster is the value whose entries were evicted.
	Cluster string `json:"cluster"`
	// Applied is false for a dry run.
	Applied bool `json:"applied"`
	// Scan is the report of the scan phase.
	Scan ScanReport `json:"scan"`
	// Candidates is how many entries the scan read as Cluster.
	Candidates int `json:"candidates"`
	// Sample lists up to Sample candidate keys, sorted.
	Sample []string `json:"sample"`
	// The apply phase, one count per candidate: Deleted +
	// SkippedChanged + SkippedGone + Failed + Unverified + NotAttempted =
	// Candidates.
	Deleted        int `json:"deleted"`
	SkippedChanged int `json:"skipped_changed"`
	SkippedGone    int `json:"skipped_gone"`
	Failed         int `json:"failed"`
	// Unverified counts candidates read as absent that could not be
	// confirmed gone (see EvictUnverified).
	Unverified int `json:"unverified"`
	// NotAttempted counts candidates left alone because the run was
	// interrupted (or for a dry run, all of them).
	NotAttempted int `json:"not_attempted"`
	// Rewritten counts deleted entries that were written again (by a
	// gateway) before the confirming read; they are included in Deleted.
	Rewritten int `json:"rewritten"`
	// Retried counts candidates found again after the routing table
	// settled and handled a second time; their final outcome is counted
	// above.
	Retried int `json:"retried"`
	// Late counts candidates the scan did not list: found when the
	// partitions whose owners changed during the run were scanned again
	// after the routing table settled (a member that joined or returned
	// brought them); they are included in Candidates and their outcome
	// is counted above.
	Late int `json:"late_candidates"`
	// Outcomes breaks the counts above down by reason, one item per
	// outcome and reason that occurred, in a fixed order; empty (never
	// null) for no candidates.
	Outcomes []EvictOutcomeCount `json:"outcomes"`
	// Settle says whether partitions changed owners during the run and
	// how long Evict waited for the routing table to settle.
	Settle SettleReport `json:"settle"`
	// Done is true when every candidate is known to be handled: the scan
	// was complete and no candidate failed, is unverified or was not
	// attempted (with Apply). RunAgain is its negation for an applied
	// run: running the same command again finishes the job.
	Done     bool `json:"done"`
	RunAgain bool `json:"run_again"`
	// ClusterDown is true when the run gave up because no member
	// answered a ping for SettleTimeout after a call failed (see
	// down.go); what was not done is reported with reason unreachable.
	ClusterDown bool `json:"cluster_down"`
	// Interrupted is true when the context was cancelled.
	Interrupted bool `json:"interrupted"`
	// Errors are the first few failure reasons; empty (never null in
	// JSON) when nothing failed.
	Errors []string `json:"errors"`
	// Elapsed is the wall time of both phases.
	Elapsed time.Duration `json:"-"`
}

// MinEvictRate and MaxEvictRate bound EvictOptions.MaxRate (deletions per
// second) when it is not 0: below one deletion per 100 s a run of a few
// thousand candidates would take days (an earlier pacing overflowed
// there and silently dropped the limit), and above 10^9 the rate is no
// limit at all.
const (
	MinEvictRate = 0.01
	MaxEvictRate = 1e9
)

func (o *EvictOptions) withDefaults() (EvictOptions, error) {
	out := *o
	if err := ValidateValue(out.Cluster); err != nil {
		return out, fmt.Errorf("evict: %w", err)
	}
	if !(out.MaxRate == 0 || (out.MaxRate >= MinEvictRate && out.MaxRate <= MaxEvictRate)) {
		return out, fmt.Errorf("max rate %v: want 0 (no limit) or %v-%v deletions per second", out.MaxRate, MinEvictRate, MaxEvictRate)
	}
	switch {
	case out.Sample == 0:
		out.Sample = DefaultEvictSample
	case out.Sample < 0:
		out.Sample = 0
	}
	if out.Batch == 0 {
		out.Batch = DefaultEvictBatch
	}
	if out.Batch < 1 || out.Batch > 10000 {
		return out, fmt.Errorf("evict batch %d out of range 1-10000", out.Batch)
	}
	if out.Workers == 0 {
		out.Workers = DefaultReadWorkers
	}
	if out.Workers < 1 || out.Workers > 256 {
		return out, fmt.Errorf("evict workers %d out of range 1-256", out.Workers)
	}
	if out.MaxRate > 0 {
		// Small rounds (a tenth of a second's worth at most), so the
		// token bucket paces smoothly; the workers share it.
		out.Batch = max(1, min(out.Batch, int(out.MaxRate/10)))
	}
	if out.SettleTimeout == 0 {
		out.SettleTimeout = DefaultSettleTimeout
	}
	if out.SettleTimeout < 0 || out.SettleTimeout > 10*time.Minute {
		return out, fmt.Errorf("settle timeout %v out of range 0-10m", out.SettleTimeout)
	}
	out.Scan.Cluster, out.Scan.Limit = "", 0
	return out, nil
}

// Evict deletes every entry whose value is o.Cluster, e.g. after draining
// that cluster, so returning sessions are classified stale and re-placed.
//
// It works in two phases. The scan phase (Scan) lists the candidates: the
// entries read as o.Cluster. Without o.Apply Evict stops there (a dry
// run). The apply phase then handles candidates in rounds of up to o.Batch
// keys of a range of partitions (o.Workers ranges at once, paced together
// by one token bucket when o.MaxRate is set), each step one pipelined
// round trip per partition owner: it re-reads each candidate and skips it
// when it is gone or now holds another value, deletes the rest one key per
// DM.DEL, and reads each again to confirm, because Olric's delete reply
// does not say whether anything was removed (olric.md §5.4); a delete
// Olric acknowledged without removing the entry gets the
// rewrite-and-delete fallback described at Client.Delete. Olric v0.7.4
// has no conditional delete: a gateway write landing between the re-read
// and the delete of the same key (well under a millisecond) is lost, which
// costs that session one affinity miss.
//
// "Not found" is evidence only while the partition keeps its owners: when
// a member is frozen, killed or leaves, Olric answers for its partitions
// from new owners that may not hold the entries yet. Evict therefore
// watches the routing table for the whole run (see routeTracker). When
// owners changed, or a candidate failed, it waits up to o.SettleTimeout
// for the table to settle and reads again every candidate of a changed
// partition that was counted deleted or gone, and every failed one: an
// entry found again is handled again (Retried), an absent one is gone only
// when every member that held a copy at the start is still in the cluster
// (Olric keeps no record of deletes, so a member that left with a copy
// brings the entry back if it returns); otherwise, or when the table did
// not settle, it is Unverified.
//
// A cancelled ctx stops new rounds; rounds in flight finish. Evict is safe
// to run again: it only ever deletes entries it has just read as
// o.Cluster. The report is always returned; the error wraps ErrIncomplete
// when the scan was incomplete or a candidate failed or is unverified (run
// again), or is ctx's error when interrupted.
func (c *Client) Evict(ctx context.Context, o EvictOptions) (EvictReport, error) {
	rep := EvictReport{Cluster: o.Cluster, Applied: o.Apply, Errors: []string{}, Outcomes: []EvictOutcomeCount{}}
	rep.Settle.MembersLeft, rep.Settle.MembersAway = []string{}, []string{}
	o, err := o.withDefaults()
	if err != nil {
		return rep, err
	}
	start := time.Now()
	ctx, down, release := c.withDownWatch(ctx, o.SettleTimeout)
	defer release()
	tr := c.trackRoutes(ctx)
	defer tr.close()
	var candidates []string
	scanOpts := o.Scan
	scanOpts.Cluster = o.Cluster
	if scanOpts.SettleTimeout == 0 {
		scanOpts.SettleTimeout = o.SettleTimeout
	}
	rep.Scan, err = c.Scan(ctx, scanOpts, func(e Entry) error {
		candidates = append(candidates, e.Key)
		return nil
	})
	rep.Candidates = len(candidates)
	rep.Sample = sample(candidates, o.Sample)
	scanErr := err
	results := make([]EvictResult, len(candidates))
	for i, k := range candidates {
		results[i] = EvictResult{Key: k, Outcome: EvictNotAttempted, Reason: ReasonDryRun}
	}
	declined := false
	if o.Apply && o.Confirm != nil && ctx.Err() == nil && len(candidates) > 0 && !o.Confirm(len(candidates), rep.Sample) {
		o.Apply, rep.Applied, declined = false, false, true
	}
	if !o.Apply || ctx.Err() != nil {
		reason := ReasonDryRun
		switch {
		case ctx.Err() != nil:
			reason = ReasonInterrupted
		case declined:
			reason = ReasonDeclined
		}
		for i := range results {
			results[i].Reason = reason
		}
		rep.tally(results)
		rep.Interrupted = ctx.Err() != nil
		rep.Elapsed = time.Since(start)
		if scanErr != nil {
			return rep, fmt.Errorf("evict: %w", scanErr)
		}
		return rep, nil
	}

	for i := range results {
		results[i].Reason = ReasonInterrupted
	}
	c.applyEvict(ctx, o, candidates, results, start)
	changed := tr.close()
	if down.downErr() != nil {
		for i := range results {
			if results[i].Outcome == EvictNotAttempted {
				results[i].Reason = ReasonUnreachable
			}
		}
	}
	if ctx.Err() == nil {
		c.verifyEvict(ctx, o, tr, changed, results, &rep)
		var sweepErr error
		results, sweepErr = c.sweepMoved(ctx, o, tr, changed, results, &rep)
		rep.Candidates = len(results)
		if sweepErr != nil && scanErr == nil {
			rep.Scan.Complete = false
			rep.Scan.Problems = append(rep.Scan.Problems, sweepErr.Error())
			scanErr = sweepErr
		}
	}
	rep.tally(results)
	rep.Elapsed = time.Since(start)
	derr := down.downErr()
	rep.ClusterDown = derr != nil
	switch {
	case ctx.Err() != nil:
		rep.Interrupted = true
		return rep, fmt.Errorf("evict interrupted after %d of %d candidates: %w", rep.Candidates-rep.NotAttempted, rep.Candidates, ctx.Err())
	case derr != nil:
		rep.Done, rep.RunAgain = false, true
		return rep, fmt.Errorf("evict gave up: %w; %s (run again): %w", derr, rep.notDone(), ErrIncomplete)
	case scanErr != nil:
		rep.Done, rep.RunAgain = false, true
		return rep, fmt.Errorf("evict: the scan was incomplete, entries of %q may remain (run again): %w", o.Cluster, scanErr)
	case rep.Failed > 0 || rep.Unverified > 0 || rep.NotAttempted > 0:
		return rep, fmt.Errorf("evict: %s (run again): %w", rep.notDone(), ErrIncomplete)
	}
	return rep, nil
}

// notDone describes the candidates not known to be handled: "3 candidates
// failed, 2 candidates could not be confirmed gone, 5 not attempted".
func (rep *EvictReport) notDone() string {
	var parts []string
	if rep.Failed > 0 {
		parts = append(parts, plural.Count(rep.Failed, "candidate failed", "candidates failed"))
	}
	if rep.Unverified > 0 {
		parts = append(parts, plural.Count(rep.Unverified, "candidate", "candidates")+" could not be confirmed gone")
	}
	if rep.NotAttempted > 0 {
		parts = append(parts, plural.Count(rep.NotAttempted, "candidate", "candidates")+" not attempted")
	}
	if len(parts) == 0 {
		return "nothing left undone is known"
	}
	return strings.Join(parts, ", ")
}

// outcomeOrder is the order of EvictReport.Outcomes.
var outcomeOrder = []EvictOutcome{EvictDeleted, EvictSkippedChanged, EvictSkippedGone, EvictFailed, EvictUnverified, EvictNotAttempted}

// tally counts results into the report's outcome counts, errors and
// Outcomes, and sets Done and RunAgain.
func (rep *EvictReport) tally(results []EvictResult) {
	type ok struct {
		o EvictOutcome
		r EvictReason
	}
	by := map[ok]int{}
	rep.Deleted, rep.SkippedChanged, rep.SkippedGone, rep.Failed, rep.Unverified, rep.NotAttempted, rep.Rewritten = 0, 0, 0, 0, 0, 0, 0
	rep.Errors = rep.Errors[:0]
	for _, r := range results {
		by[ok{r.Outcome, r.Reason}]++
		switch r.Outcome {
		case EvictDeleted:
			rep.Deleted++
			if r.Rewritten {
				rep.Rewritten++
			}
		case EvictSkippedChanged:
			rep.SkippedChanged++
		case EvictSkippedGone:
			rep.SkippedGone++
		case EvictUnverified:
			rep.Unverified++
		case EvictNotAttempted:
			rep.NotAttempted++
		default:
			rep.Failed++
			if len(rep.Errors) < 10 {
				rep.Errors = append(rep.Errors, r.Key+": "+r.Error)
			}
		}
	}
	rep.Outcomes = []EvictOutcomeCount{}
	for _, o := range outcomeOrder {
		var reasons []EvictReason
		for k := range by {
			if k.o == o {
				reasons = append(reasons, k.r)
			}
		}
		sort.Slice(reasons, func(i, j int) bool { return reasons[i] < reasons[j] })
		for _, r := range reasons {
			rep.Outcomes = append(rep.Outcomes, EvictOutcomeCount{Outcome: o, Reason: r, Count: by[ok{o, r}]})
		}
	}
	rep.Done = rep.Applied && rep.Scan.Complete && rep.Failed == 0 && rep.Unverified == 0 && rep.NotAttempted == 0
	rep.RunAgain = rep.Applied && !rep.Done
}

// sample returns up to n of keys, sorted, spread over the list.
func sample(keys []string, n int) []string {
	out := []string{}
	if n <= 0 || len(keys) == 0 {
		return out
	}
	step := max(1, len(keys)/n)
	for i := 0; i < len(keys) && len(out) < n; i += step {
		out = append(out, keys[i])
	}
	sort.Strings(out)
	return out
}

// applyEvict runs the apply phase over candidates, writing each outcome
// into results (same index).
func (c *Client) applyEvict(ctx context.Context, o EvictOptions, candidates []string, results []EvictResult, start time.Time) {
	// Rounds in flight finish after an interrupt so that no key is left
	// deleted but unconfirmed; each call is bounded by RequestTimeout.
	rctx := context.WithoutCancel(ctx)
	type round struct {
		lo  int
		out []EvictResult
	}
	rounds := make(chan round)
	var limiter *rate.Limiter
	if o.MaxRate > 0 {
		// One bucket for every worker: the rate holds however many run,
		// and a burst is one round.
		limiter = rate.NewLimiter(rate.Limit(o.MaxRate), o.Batch)
	}
	var wg sync.WaitGroup
	for _, seg := range segments(candidates, o.Workers, c.opts.DMap, c.PartitionCount()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for lo := seg.lo; lo < seg.hi; lo += o.Batch {
				hi := min(lo+o.Batch, seg.hi)
				if limiter != nil && limiter.WaitN(ctx, hi-lo) != nil {
					return
				}
				if ctx.Err() != nil || downWatchFrom(ctx).downErr() != nil {
					return
				}
				out := c.evictRound(rctx, o.Cluster, candidates[lo:hi])
				rounds <- round{lo, out}
			}
		}()
	}
	go func() { wg.Wait(); close(rounds) }()

	done := 0
	last := time.Now()
	for r := range rounds {
		for j, res := range r.out {
			results[r.lo+j] = res
			done++
			if o.OnResult != nil {
				o.OnResult(res)
			}
		}
		if o.Progress != nil && time.Since(last) >= 200*time.Millisecond {
			last = time.Now()
			o.Progress(EvictProgress{Candidates: len(candidates), Done: done, Elapsed: time.Since(start)})
		}
	}
	if o.Progress != nil {
		o.Progress(EvictProgress{Candidates: len(candidates), Done: done, Elapsed: time.Since(start)})
	}
}

// segment is a range [lo, hi) of the candidate list.
type segment struct{ lo, hi int }

// segments cuts the candidates (in partition order, as the scan returns
// them) into at most n contiguous parts, each cut at a partition boundary
// where the partition permits, so concurrent workers handle different
// partitions and do not queue on the same fragment lock in Olric (which
// holds it while it deletes on replicas).
func segments(keys []string, n int, dmap string, parts uint64) []segment {
	if n <= 1 || len(keys) <= 1 {
		return []segment{{0, len(keys)}}
	}
	var out []segment
	size := (len(keys) + n - 1) / n
	for lo := 0; lo < len(keys); {
		hi := min(lo+size, len(keys))
		for hi < len(keys) && hi > lo+1 && Partition(dmap, keys[hi], parts) == Partition(dmap, keys[hi-1], parts) {
			hi++
		}
		out = append(out, segment{lo, hi})
		lo = hi
	}
	return out
}

// evictRound re-reads, deletes and confirms one round of candidates.
func (c *Client) evictRound(ctx context.Context, cluster string, keys []string) []EvictResult {
	out := make([]EvictResult, len(keys))
	reread := c.readAll(ctx, keys)
	var del []int
	for i, k := range keys {
		out[i].Key = k
		r := reread[i]
		switch {
		case errors.Is(r.err, ErrNotFound):
			out[i].Outcome, out[i].Reason = EvictSkippedGone, ReasonAbsentAtReread
		case r.err != nil:
			out[i].Outcome, out[i].Reason, out[i].Error = EvictFailed, ReasonCallFailed, "re-read: "+r.err.Error()
		case r.entry.Cluster != cluster:
			out[i].Outcome, out[i].Reason, out[i].Now = EvictSkippedChanged, ReasonValueChanged, r.entry.Cluster
		default:
			del = append(del, i)
		}
	}
	if len(del) == 0 {
		return out
	}
	delKeys := make([]string, len(del))
	for j, i := range del {
		delKeys[j] = keys[i]
	}
	derrs := c.deleteAll(ctx, delKeys)
	var confirm []int
	for j, i := range del {
		if derrs[j] != nil {
			out[i].Outcome, out[i].Reason, out[i].Error = EvictFailed, ReasonCallFailed, "delete: "+derrs[j].Error()
			continue
		}
		confirm = append(confirm, i)
	}
	confKeys := make([]string, len(confirm))
	for j, i := range confirm {
		confKeys[j] = keys[i]
	}
	after := c.readAll(ctx, confKeys)
	for j, i := range confirm {
		a := after[j]
		switch {
		case errors.Is(a.err, ErrNotFound):
			out[i].Outcome, out[i].Reason = EvictDeleted, ReasonConfirmedAbsent
		case a.err != nil:
			out[i].Outcome, out[i].Reason, out[i].Error = EvictFailed, ReasonCallFailed, "confirm: "+a.err.Error()
		case a.entry.timestamp != reread[i].entry.timestamp:
			out[i].Outcome, out[i].Reason, out[i].Rewritten = EvictDeleted, ReasonRewritten, true
		default:
			// Olric acknowledged the delete but kept the entry (a partition
			// whose owner changed): rewrite it on the owner and delete again.
			gone, cur, err := c.rewriteAndDelete(ctx, keys[i], cluster)
			switch {
			case err != nil:
				out[i].Outcome, out[i].Reason, out[i].Error = EvictFailed, ReasonCallFailed, err.Error()
			case gone:
				out[i].Outcome, out[i].Reason = EvictDeleted, ReasonConfirmedAbsent
			default:
				out[i].Outcome, out[i].Reason, out[i].Now = EvictSkippedChanged, ReasonValueChanged, cur.Cluster
			}
		}
	}
	return out
}

// readAll reads keys with one pipeline and retries the keys whose read
// failed one by one (see retryReads).
func (c *Client) readAll(ctx context.Context, keys []string) []getResult {
	rs := c.pipelineGet(ctx, keys)
	c.retryReads(ctx, keys, rs)
	return rs
}

// deleteAll deletes keys, one key per DM.DEL, with one pipeline (each
// delete goes to the key's partition owner), and retries failed deletes
// one by one. The reply counts are ignored (olric.md §5.4).
func (c *Client) deleteAll(ctx context.Context, keys []string) []error {
	errs := make([]error, len(keys))
	pipe, err := c.dm.Pipeline(olric.PipelineConcurrency(pipelineConcurrency))
	if err != nil {
		for i := range errs {
			errs[i] = err
		}
	} else {
		futs := make([]*olric.FutureDelete, len(keys))
		for i, k := range keys {
			futs[i] = pipe.Delete(ctx, k)
		}
		ectx, cancel := c.callCtx(ctx)
		_, err := cutCall(ectx, func() (struct{}, error) { return struct{}{}, pipe.Exec(ectx) })
		cancel()
		for i, f := range futs {
			if err != nil {
				errs[i] = err
				continue
			}
			_, errs[i] = safeCall(f.Result)
		}
		if !isDown(err) { // an abandoned Exec may still use pipe
			pipe.Close()
		}
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		errs[i] = c.do(ctx, func(ctx context.Context) error {
			_, err := c.dm.Delete(ctx, keys[i])
			return err
		})
	}
	return errs
}

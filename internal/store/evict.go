package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/olric-data/olric"

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
	// of partitions) are worked on at once, one round at a time each, when
	// MaxRate is 0; 0 means DefaultReadWorkers.
	Workers int
	// Scan tunes the scan phase; its Cluster and Limit are ignored.
	Scan ScanOptions
	// Progress, when not nil, is called during the apply phase about every
	// 200 ms from the goroutine that called Evict.
	Progress func(EvictProgress)
	// OnResult, when not nil, receives every candidate's outcome during
	// the apply phase, from the goroutine that called Evict.
	OnResult func(EvictResult)
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
)

// EvictResult is one candidate's outcome.
type EvictResult struct {
	// Key is the candidate's store key.
	Key string `json:"key"`
	// Outcome is what happened to it.
	Outcome EvictOutcome `json:"outcome"`
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
	// The apply phase, one count per candidate handled: Deleted +
	// SkippedChanged + SkippedGone + Failed + NotAttempted = Candidates.
	Deleted        int `json:"deleted"`
	SkippedChanged int `json:"skipped_changed"`
	SkippedGone    int `json:"skipped_gone"`
	Failed         int `json:"failed"`
	// NotAttempted counts candidates left alone because the run was
	// interrupted (or for a dry run, all of them).
	NotAttempted int `json:"not_attempted"`
	// Rewritten counts deleted entries that were written again (by a
	// gateway) before the confirming read; they are included in Deleted.
	Rewritten int `json:"rewritten"`
	// Interrupted is true when the context was cancelled.
	Interrupted bool `json:"interrupted"`
	// Errors are the first few failure reasons; empty (never null in
	// JSON) when nothing failed.
	Errors []string `json:"errors"`
	// Elapsed is the wall time of both phases.
	Elapsed time.Duration `json:"-"`
}

// MinEvictRate and MaxEvictRate bound EvictOptions.MaxRate (deletions per
// second) when it is not 0. Below one deletion per 100 s the pacing
// arithmetic (round start + keys / rate, a time.Duration) overflowed and
// the limit silently disappeared; above 10^9 the rate is no limit at all
// and the rounds shrank to one key.
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
		// Pace in small rounds, one at a time, so the rate holds.
		out.Workers = 1
		out.Batch = max(1, min(out.Batch, int(out.MaxRate/10)))
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
// keys of a range of partitions (o.Workers ranges at once), each step one
// pipelined round trip per partition owner: it re-reads each candidate and
// skips it when it is gone or now holds another value, deletes the rest
// one key per DM.DEL, and reads each again to confirm, because Olric's
// delete reply does not say whether anything was removed (olric.md §5.4);
// a delete Olric acknowledged without removing the entry gets the
// rewrite-and-delete fallback described at Client.Delete. Olric v0.7.4 has no conditional delete: a
// gateway write landing between the re-read and the delete of the same
// key (well under a millisecond) is lost, which costs that session one
// affinity miss.
//
// A cancelled ctx stops new rounds; rounds in flight finish. Evict is safe
// to run again: it only ever deletes entries it has just read as
// o.Cluster. The report is always returned; the error wraps ErrIncomplete
// when the scan was incomplete or a candidate failed, or is ctx's error
// when interrupted.
func (c *Client) Evict(ctx context.Context, o EvictOptions) (EvictReport, error) {
	rep := EvictReport{Cluster: o.Cluster, Applied: o.Apply, Errors: []string{}}
	o, err := o.withDefaults()
	if err != nil {
		return rep, err
	}
	start := time.Now()
	var candidates []string
	scanOpts := o.Scan
	scanOpts.Cluster = o.Cluster
	rep.Scan, err = c.Scan(ctx, scanOpts, func(e Entry) error {
		candidates = append(candidates, e.Key)
		return nil
	})
	rep.Candidates = len(candidates)
	rep.Sample = sample(candidates, o.Sample)
	scanErr := err
	if o.Apply && o.Confirm != nil && ctx.Err() == nil && len(candidates) > 0 && !o.Confirm(len(candidates), rep.Sample) {
		o.Apply, rep.Applied = false, false
	}
	if !o.Apply || ctx.Err() != nil {
		rep.NotAttempted = len(candidates)
		rep.Interrupted = ctx.Err() != nil
		rep.Elapsed = time.Since(start)
		if scanErr != nil {
			return rep, fmt.Errorf("evict: %w", scanErr)
		}
		return rep, nil
	}

	c.applyEvict(ctx, o, candidates, &rep, start)
	rep.Elapsed = time.Since(start)
	switch {
	case ctx.Err() != nil:
		rep.Interrupted = true
		return rep, fmt.Errorf("evict interrupted after %d of %d candidates: %w", rep.Candidates-rep.NotAttempted, rep.Candidates, ctx.Err())
	case scanErr != nil:
		return rep, fmt.Errorf("evict: the scan was incomplete, entries of %q may remain (run again): %w", o.Cluster, scanErr)
	case rep.Failed > 0:
		return rep, fmt.Errorf("evict: %s: %w", plural.Count(rep.Failed, "candidate failed", "candidates failed"), ErrIncomplete)
	}
	return rep, nil
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

// applyEvict runs the apply phase over candidates, filling rep.
func (c *Client) applyEvict(ctx context.Context, o EvictOptions, candidates []string, rep *EvictReport, start time.Time) {
	// Rounds in flight finish after an interrupt so that no key is left
	// deleted but unconfirmed; each call is bounded by RequestTimeout.
	rctx := context.WithoutCancel(ctx)
	results := make(chan []EvictResult)
	var wg sync.WaitGroup
	for _, seg := range segments(candidates, o.Workers, c.opts.DMap, c.PartitionCount()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paceStart := time.Now()
			for lo := 0; lo < len(seg); lo += o.Batch {
				if o.MaxRate > 0 {
					at := paceStart.Add(time.Duration(float64(lo) / o.MaxRate * float64(time.Second)))
					if !sleepCtx(ctx, time.Until(at)) {
						return
					}
				}
				if ctx.Err() != nil {
					return
				}
				results <- c.evictRound(rctx, o.Cluster, seg[lo:min(lo+o.Batch, len(seg))])
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	done := 0
	last := time.Now()
	for rs := range results {
		for _, r := range rs {
			done++
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
			default:
				rep.Failed++
				if len(rep.Errors) < 10 {
					rep.Errors = append(rep.Errors, r.Key+": "+r.Error)
				}
			}
			if o.OnResult != nil {
				o.OnResult(r)
			}
		}
		if o.Progress != nil && time.Since(last) >= 200*time.Millisecond {
			last = time.Now()
			o.Progress(EvictProgress{Candidates: len(candidates), Done: done, Elapsed: time.Since(start)})
		}
	}
	rep.NotAttempted = len(candidates) - done
	if o.Progress != nil {
		o.Progress(EvictProgress{Candidates: len(candidates), Done: done, Elapsed: time.Since(start)})
	}
}

// segments cuts the candidates (in partition order, as the scan returns
// them) into at most n contiguous parts, each cut at a partition boundary
// where the partition permits, so concurrent workers handle different
// partitions and do not queue on the same fragment lock in Olric (which
// holds it while it deletes on replicas).
func segments(keys []string, n int, dmap string, parts uint64) [][]string {
	if n <= 1 || len(keys) <= 1 {
		return [][]string{keys}
	}
	var out [][]string
	size := (len(keys) + n - 1) / n
	for lo := 0; lo < len(keys); {
		hi := min(lo+size, len(keys))
		for hi < len(keys) && hi > lo+1 && Partition(dmap, keys[hi], parts) == Partition(dmap, keys[hi-1], parts) {
			hi++
		}
		out = append(out, keys[lo:hi])
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
			out[i].Outcome = EvictSkippedGone
		case r.err != nil:
			out[i].Outcome, out[i].Error = EvictFailed, "re-read: "+r.err.Error()
		case r.entry.Cluster != cluster:
			out[i].Outcome, out[i].Now = EvictSkippedChanged, r.entry.Cluster
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
			out[i].Outcome, out[i].Error = EvictFailed, "delete: "+derrs[j].Error()
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
			out[i].Outcome = EvictDeleted
		case a.err != nil:
			out[i].Outcome, out[i].Error = EvictFailed, "confirm: "+a.err.Error()
		case a.entry.timestamp != reread[i].entry.timestamp:
			out[i].Outcome, out[i].Rewritten = EvictDeleted, true
		default:
			// Olric acknowledged the delete but kept the entry (a partition
			// whose owner changed): rewrite it on the owner and delete again.
			gone, cur, err := c.rewriteAndDelete(ctx, keys[i], cluster)
			switch {
			case err != nil:
				out[i].Outcome, out[i].Error = EvictFailed, err.Error()
			case gone:
				out[i].Outcome = EvictDeleted
			default:
				out[i].Outcome, out[i].Now = EvictSkippedChanged, cur.Cluster
			}
		}
	}
	return out
}

// readAll reads keys with one pipeline and retries the keys whose read
// failed (other than not-found) one by one.
func (c *Client) readAll(ctx context.Context, keys []string) []getResult {
	rs := c.pipelineGet(ctx, keys)
	for i, r := range rs {
		if r.err != nil && !errors.Is(r.err, ErrNotFound) {
			rs[i].entry, rs[i].err = c.get(ctx, keys[i])
		}
	}
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
		ectx, cancel := context.WithTimeout(ctx, c.opts.RequestTimeout)
		_, err := safeCall(func() (struct{}, error) { return struct{}{}, pipe.Exec(ectx) })
		cancel()
		for i, f := range futs {
			if err != nil {
				errs[i] = err
				continue
			}
			_, errs[i] = safeCall(f.Result)
		}
		pipe.Close()
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

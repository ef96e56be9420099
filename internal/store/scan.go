package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/olric-data/olric"
	"github.com/zeebo/xxh3"

	"github.com/lcctl/lcctl/internal/plural"
)

// Scan defaults.
const (
	// DefaultScanCount is the COUNT hint sent with each DM.SCAN: how many
	// matching keys a member returns per call.
	DefaultScanCount = 1000
	// DefaultReadBatch is the most keys read in one pipelined round of
	// DM.GETs; a batch never spans two partitions, so it is one round trip
	// to the partition's owner.
	DefaultReadBatch = 1024
	// DefaultReadWorkers is how many read batches are in flight at once.
	DefaultReadWorkers = 4
	// DefaultMaxRestarts bounds how often a scan that failed (a member left
	// or stopped answering) is restarted and resumed.
	DefaultMaxRestarts = 10
)

// keyPattern is the MATCH expression sent with every DM.SCAN. Olric
// matches it as a Go regular expression (not a glob) anywhere in the key,
// so it is anchored and built from the escaped literal prefix.
var keyPattern = "^" + regexp.QuoteMeta(KeyPrefix)

// ScanOptions configure Scan. The zero value scans everything.
type ScanOptions struct {
	// Cluster, when not empty, passes only entries whose value is exactly
	// Cluster to the callback (every entry is still read and counted in
	// the report's PerCluster).
	Cluster string
	// Limit stops the scan after Limit entries were passed to the
	// callback; 0 means no limit.
	Limit int
	// Count is the DM.SCAN COUNT hint, 1-100000; 0 means DefaultScanCount.
	Count int
	// ReadBatch and ReadWorkers size the pipelined reads; 0 means the
	// defaults.
	ReadBatch, ReadWorkers int
	// MaxRestarts bounds restarts after a failed scan; 0 means
	// DefaultMaxRestarts, -1 none.
	MaxRestarts int
	// Progress, when not nil, is called about every ProgressEvery (default
	// 200 ms) from the goroutine that called Scan, and once at the end.
	Progress func(ScanProgress)
	// ProgressEvery is the interval between Progress calls.
	ProgressEvery time.Duration
	// SettleTimeout bounds the wait for the routing table to settle when
	// partitions changed owners during the scan; 0 means
	// DefaultSettleTimeout.
	SettleTimeout time.Duration

	// partitions, when not nil, restricts the scan to the partitions
	// set (Evict's scan again of the partitions that moved).
	partitions []bool
	// rescanStarting, when set (tests: export_test.go), is called as each
	// round of recheckOwnership's rescans starts (round 0 first), after
	// the round's route watch began, with the partitions it scans.
	rescanStarting func(round int, partitions []uint64)
}

// ScanProgress is a running count for progress displays.
type ScanProgress struct {
	// Keys is how many keys Olric's scan returned so far.
	Keys int
	// Entries is how many live entries were read; Matched how many were
	// passed to the callback.
	Entries, Matched int
	// Elapsed is the time since the scan started.
	Elapsed time.Duration
}

// ScanReport summarises a scan. Counts cover the keys the scan examined:
// every store key of the DMap when Complete; when the scan stopped early
// (at Limit, interrupted, or after a failure) exactly the keys examined
// before it stopped, in scan order. They always satisfy
//
//	Keys == Entries + Vanished + Unreadable
//	Entries == sum of PerCluster
//	Matched == Entries (no Cluster filter), PerCluster[Cluster] (filter)
//	Matched <= Limit (when Limit > 0)
//
// Stopped at Limit (Truncated), the scan stops at the first matching
// entry beyond the limit, which proves more exist; that entry and every
// key after it are counted nowhere.
type ScanReport struct {
	// DMap is the DMap scanned.
	DMap string `json:"dmap"`
	// Keys is the number of distinct store keys examined (listed by
	// Olric's scan and read).
	Keys int `json:"keys"`
	// Entries is the number of those keys read as live entries.
	Entries int `json:"entries"`
	// Matched is the number of entries passed to the callback: the entries
	// of Cluster, or every entry without a filter; at most Limit.
	Matched int `json:"matched"`
	// Vanished counts keys that were gone when read: expired but not yet
	// evicted by Olric, or deleted meanwhile.
	Vanished int `json:"vanished"`
	// Unreadable counts keys whose read failed after every retry.
	Unreadable int `json:"unreadable"`
	// Ignored counts keys that start with "lc:v1:" but are not store keys
	// (not written by the gateway); they are never read or touched, and not
	// part of Keys. Counted as Olric lists them, so a scan stopped early
	// may count a few listed beyond the stopping point.
	Ignored int `json:"ignored"`
	// Invalid counts entries whose value the gateway would treat as a miss.
	Invalid int `json:"invalid"`
	// NoExpiry counts entries without a TTL (the gateway always sets one).
	NoExpiry int `json:"no_expiry"`
	// PerCluster counts the live entries (all of Entries, not only the
	// matched ones) by value (cluster ID).
	PerCluster map[string]int `json:"per_cluster"`
	// Restarts is how often the scan was restarted after an error and
	// resumed where it stopped.
	Restarts int `json:"restarts"`
	// Complete is true when every partition was scanned and every key read.
	Complete bool `json:"complete"`
	// Truncated is true when the scan stopped at Limit because a further
	// matching entry exists (exactly Limit matching entries in the whole
	// DMap give a Complete, untruncated scan).
	Truncated bool `json:"truncated"`
	// Interrupted is true when the context was cancelled.
	Interrupted bool `json:"interrupted"`
	// Settle says whether partitions changed owners during the scan and
	// how long the scan waited for the routing table to settle.
	Settle SettleReport `json:"settle"`
	// RescannedPartitions counts partitions scanned again under the
	// settled owners because their owners changed during the scan.
	RescannedPartitions int `json:"rescanned_partitions"`
	// LostPartitions counts partitions whose every copy was on members
	// that left during the scan: their entries are lost, or come back
	// if those members return. They make the scan incomplete.
	LostPartitions int `json:"lost_partitions"`
	// UnsettledPartitions counts partitions that could not be scanned
	// again because the routing table did not settle within
	// SettleTimeout (or changed again meanwhile). They make the scan
	// incomplete.
	UnsettledPartitions int `json:"unsettled_partitions"`
	// ClusterDown is true when the scan gave up because no member
	// answered a ping for SettleTimeout after a call failed (see
	// down.go); the scan is then incomplete.
	ClusterDown bool `json:"cluster_down"`
	// Problems describe what could not be done, in order; empty (never
	// null in JSON) when there were none.
	Problems []string `json:"problems"`
	// Elapsed is the wall time of the scan.
	Elapsed time.Duration `json:"-"`
}

func (o *ScanOptions) withDefaults() (ScanOptions, error) {
	out := *o
	if out.Cluster != "" {
		if err := ValidateValue(out.Cluster); err != nil {
			return out, err
		}
	}
	if out.Limit < 0 {
		return out, fmt.Errorf("limit %d must not be negative", out.Limit)
	}
	if out.Count == 0 {
		out.Count = DefaultScanCount
	}
	if out.Count < 1 || out.Count > 100000 {
		return out, fmt.Errorf("scan count %d out of range 1-100000", out.Count)
	}
	if out.ReadBatch == 0 {
		out.ReadBatch = DefaultReadBatch
	}
	if out.ReadWorkers == 0 {
		out.ReadWorkers = DefaultReadWorkers
	}
	if out.ReadBatch < 1 || out.ReadBatch > 100000 || out.ReadWorkers < 1 || out.ReadWorkers > 256 {
		return out, fmt.Errorf("read batch %d (1-100000) or workers %d (1-256) out of range", out.ReadBatch, out.ReadWorkers)
	}
	switch {
	case out.MaxRestarts == 0:
		out.MaxRestarts = DefaultMaxRestarts
	case out.MaxRestarts < 0:
		out.MaxRestarts = 0
	}
	if out.ProgressEvery <= 0 {
		out.ProgressEvery = 200 * time.Millisecond
	}
	if out.SettleTimeout == 0 {
		out.SettleTimeout = DefaultSettleTimeout
	}
	if out.SettleTimeout < 0 || out.SettleTimeout > 10*time.Minute {
		return out, fmt.Errorf("settle timeout %v out of range 0-10m", out.SettleTimeout)
	}
	return out, nil
}

type keyBatch struct {
	seq  int
	part uint64 // the partition of every key
	keys []string
}

// readOutcome is what reading one batch found, one item per key in the
// batch's order (so a scan stopped at Limit counts exactly the keys before
// the stopping point).
type readOutcome struct {
	seq   int
	part  uint64
	items []readItem
}

// readState is the outcome of reading one key.
type readState uint8

const (
	readLive    readState = iota // a live entry
	readMissing                  // absent: expired or deleted
	readFailed                   // every retry failed
)

type readItem struct {
	key   string
	state readState
	entry Entry  // when readLive
	fail  string // "key (partition p): error" when readFailed
}

// maxRecheck bounds how many keys read as absent are read once more at
// the end of a scan.
const maxRecheck = 100000

type producerResult struct {
	ignored, restarts int
	problems          []string
	err               error
	// scanned marks the partitions walked to their end; under holds the
	// owners of each scanned partition the iteration used.
	scanned []bool
	under   []olric.Route
}

// Scan walks every partition of the DMap with Olric's cluster iterator
// (DM.SCAN to each partition's primary and replica owners, MATCH "^lc:v1:",
// COUNT o.Count), reads each key with pipelined DM.GETs to drop expired
// keys and learn value and TTL, and calls fn for each live entry that
// passes o.Cluster, in partition order, from the calling goroutine.
//
// Olric's iterator reports a failure only by ending early (it logs the
// error); Scan watches the client's log for it, and then refreshes the
// routing table, restarts the iteration and skips the keys it already
// passed (partitions are walked in order), up to o.MaxRestarts times. It
// restarts the same way when partitions it has still to scan change owners
// (see routeWatch).
//
// Completeness is decided from partition ownership (see routeTracker): a
// partition counts as scanned when its scan succeeded under the owners it
// had when the run started and those did not change during the run. When
// owners changed (a member frozen, killed, leaving, joining or returning),
// Scan waits up to o.SettleTimeout for the routing table to settle and
// scans the other partitions again under the settled owners; a partition none of whose
// starting holders is still a member (its only copy was on a member that
// left) is reported as lost, and one the table did not settle for as not
// rescanned: either makes the scan incomplete. Keys read as absent are
// read again at the end (an entry can be missed for a moment while
// partitions move). Keys whose read fails after retries are counted as
// Unreadable.
//
// The report is always returned. The error is nil when the scan is
// complete or stopped at Limit; it wraps ErrIncomplete when partitions or
// keys could not be read, the context's error when interrupted, and fn's
// error when fn returned one (the scan then stops).
func (c *Client) Scan(ctx context.Context, o ScanOptions, fn func(Entry) error) (ScanReport, error) {
	rep := ScanReport{DMap: c.opts.DMap, PerCluster: map[string]int{}, Problems: []string{}}
	rep.Settle.MembersLeft, rep.Settle.MembersAway = []string{}, []string{}
	o, err := o.withDefaults()
	if err != nil {
		return rep, err
	}
	c.scanMu.Lock()
	defer c.scanMu.Unlock()
	start := time.Now()
	ctx, down, release := c.withDownWatch(ctx, o.SettleTimeout)
	defer release()
	st := &scanState{c: c, o: o, fn: fn, rep: &rep, start: start, hashes: make([][]uint64, c.PartitionCount())}

	tr := c.trackRoutes(ctx)
	// Which members hold entries of each partition, read beside the pass
	// (a frozen member's statistics take up to RequestTimeout): the
	// ownership check afterwards counts only them as copies.
	recorded := make(chan struct{})
	go func() { defer close(recorded); tr.recordData(ctx) }()
	prod := st.pass(ctx, o.partitions, nil)
	<-recorded
	changed := tr.close()
	var trouble []string // problems found by the ownership check
	if !st.stopped && ctx.Err() == nil && prod.err == nil && (changed != nil || prod.restarts > 0) {
		trouble = st.recheckOwnership(ctx, tr, changed, prod)
	}
	// Keys read as absent are usually expired entries Olric has not evicted
	// yet. While partitions move after a membership change a read can also
	// miss an entry for a moment: read them again, once, or up to three
	// times with pauses when the scan had to restart.
	rounds := 1
	if prod.restarts > 0 {
		rounds = 3
	}
	rctx := context.WithoutCancel(ctx)
	for round := 0; round < rounds && !st.stopped && ctx.Err() == nil && down.downErr() == nil && len(st.absent) > 0; round++ {
		if prod.restarts > 0 {
			sleepCtx(ctx, time.Duration(round+1)*500*time.Millisecond)
		}
		recheck := st.absent
		st.absent = nil // account collects the keys still absent
		for lo := 0; lo < len(recheck) && !st.stopped; lo += o.ReadBatch {
			b := c.readBatch(rctx, keyBatch{keys: recheck[lo:min(lo+o.ReadBatch, len(recheck))]})
			st.stopped = !st.account(b, true)
		}
	}
	rep.Ignored += prod.ignored
	rep.Restarts += prod.restarts
	rep.Problems = append(append(append([]string{}, prod.problems...), rep.Problems...), trouble...)
	rep.Elapsed = time.Since(start)
	if o.Progress != nil {
		o.Progress(ScanProgress{Keys: rep.Keys, Entries: rep.Entries, Matched: rep.Matched, Elapsed: rep.Elapsed})
	}
	switch {
	case st.fnErr != nil:
		return rep, st.fnErr
	case rep.Truncated:
		return rep, nil
	case ctx.Err() != nil:
		rep.Interrupted = true
		return rep, fmt.Errorf("scan interrupted after %s: %w", plural.Count(rep.Keys, "key", "keys"), ctx.Err())
	case down.downErr() != nil:
		rep.ClusterDown = true
		return rep, fmt.Errorf("scan gave up after %s: %w (run again): %w", plural.Count(rep.Keys, "key", "keys"), down.downErr(), ErrIncomplete)
	case prod.err != nil:
		return rep, prod.err
	case rep.LostPartitions > 0 || rep.UnsettledPartitions > 0:
		return rep, fmt.Errorf("scan: %s not be scanned under settled owners (run again): %w",
			plural.Count(rep.LostPartitions+rep.UnsettledPartitions, "partition could", "partitions could"), ErrIncomplete)
	case rep.Unreadable > 0:
		return rep, fmt.Errorf("scan: %s not be read: %w", plural.Count(rep.Unreadable, "key could", "keys could"), ErrIncomplete)
	}
	rep.Complete = true
	return rep, nil
}

// scanState is what one Scan accumulates over its passes.
type scanState struct {
	c     *Client
	o     ScanOptions
	fn    func(Entry) error
	rep   *ScanReport
	start time.Time

	absent  []string   // keys read as absent, to read again
	hashes  [][]uint64 // per partition, xxh3 of every key counted
	fnErr   error
	stopped bool
}

// pass runs Olric's iterator once over the DMap (only the partitions set
// in only, when not nil; keys in skip are passed over) with pipelined
// reads, and accounts the keys in scan order.
func (st *scanState) pass(ctx context.Context, only []bool, skip map[uint64]struct{}) producerResult {
	c, o := st.c, st.o
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if w := downWatchFrom(ctx); w != nil {
		// The iterator's calls stop when the run finds the cluster down.
		defer context.AfterFunc(w.gone, cancel)()
	}
	// Reads in flight finish even when ctx is cancelled (an interrupt), so
	// no read is cut off half-way; they are bounded by RequestTimeout.
	rctx := context.WithoutCancel(ctx)

	batches := make(chan keyBatch, o.ReadWorkers)
	outcomes := make(chan readOutcome, o.ReadWorkers)
	var prod producerResult
	var keysSeen atomic.Int64
	keysSeen.Store(int64(st.rep.Keys))
	prodDone := make(chan struct{})
	go func() {
		defer close(prodDone)
		defer close(batches)
		prod = c.produceKeys(sctx, o, batches, &keysSeen, only, skip)
	}()
	var wg sync.WaitGroup
	for range o.ReadWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				outcomes <- c.readBatch(rctx, b)
			}
		}()
	}
	go func() { wg.Wait(); close(outcomes) }()

	pending := map[int]readOutcome{}
	next := 0
	lastProgress := time.Now()
	for out := range outcomes {
		if st.stopped {
			continue // drain
		}
		pending[out.seq] = out
		for {
			cur, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			if !st.account(cur, false) {
				st.stopped = true
				cancel()
				break
			}
		}
		if o.Progress != nil && time.Since(lastProgress) >= o.ProgressEvery {
			lastProgress = time.Now()
			o.Progress(ScanProgress{Keys: int(keysSeen.Load()), Entries: st.rep.Entries, Matched: st.rep.Matched, Elapsed: time.Since(st.start)})
		}
	}
	<-prodDone
	return prod
}

// account counts the outcome of a batch, key by key in scan order, and
// hands the matching entries to fn; it reports false once the scan must
// stop (fn failed, or a matching entry beyond Limit: the scan stops before
// that entry, which is counted nowhere, so the counts cover exactly the
// keys up to the last entry passed to fn). A recheck re-reads keys
// already counted as vanished: it moves them to entries or unreadable,
// never counting a key twice.
func (st *scanState) account(cur readOutcome, recheck bool) bool {
	o, rep := st.o, st.rep
	failed := 0
	for _, it := range cur.items {
		match := it.state == readLive && (o.Cluster == "" || it.entry.Cluster == o.Cluster)
		if match && o.Limit > 0 && rep.Matched >= o.Limit {
			rep.Truncated = true
			return false
		}
		if recheck {
			rep.Vanished--
		} else {
			rep.Keys++
			if cur.part < uint64(len(st.hashes)) {
				st.hashes[cur.part] = append(st.hashes[cur.part], xxh3.HashString(it.key))
			}
		}
		switch it.state {
		case readFailed:
			rep.Unreadable++
			if failed++; failed <= 3 && len(rep.Problems) < 20 {
				rep.Problems = append(rep.Problems, "read "+it.fail)
			}
		case readMissing:
			rep.Vanished++
			if len(st.absent) < maxRecheck {
				st.absent = append(st.absent, it.key)
			}
		case readLive:
			e := it.entry
			rep.Entries++
			rep.PerCluster[e.Cluster]++
			if !e.Valid {
				rep.Invalid++
			}
			if e.ExpiresAt.IsZero() {
				rep.NoExpiry++
			}
			if !match {
				continue
			}
			rep.Matched++
			if err := st.fn(e); err != nil {
				st.fnErr = err
				return false
			}
		}
	}
	return true
}

// produceKeys runs Olric's cluster iterator and sends the keys in batches,
// restarting after failures and skipping keys already sent.
func (c *Client) produceKeys(ctx context.Context, o ScanOptions, out chan<- keyBatch, seen *atomic.Int64, only []bool, skip map[uint64]struct{}) producerResult {
	parts := c.PartitionCount()
	res := producerResult{scanned: make([]bool, parts), under: make([]olric.Route, parts)}
	var (
		seq      int
		started  bool
		ordered  = true
		lastPart uint64
		seenLast = map[string]struct{}{}
		batch    = make([]string, 0, o.ReadBatch)
	)
	send := func() bool {
		if len(batch) == 0 {
			return true
		}
		select {
		case out <- keyBatch{seq: seq, part: lastPart, keys: batch}:
			seq++
			batch = make([]string, 0, o.ReadBatch)
			return true
		case <-ctx.Done():
			return false
		}
	}
	for attempt := 0; ; attempt++ {
		resuming := attempt > 0
		from := uint64(0)
		if resuming {
			from = lastPart
		}
		failSeq, _ := c.logs.scanFailures()
		watch := c.watchRoutes(ctx, lastPart)
		it, err := safeCall(func() (olric.Iterator, error) {
			return c.dm.Scan(ctx, olric.Match(keyPattern), olric.Count(o.Count))
		})
		var iterErr error
		if err != nil {
			iterErr = fmt.Errorf("start scan: %w", classify(err))
		} else {
		loop:
			for {
				ok, perr := nextOrCut(ctx, it)
				if perr != nil {
					iterErr = perr
					break
				}
				if !ok {
					break
				}
				if watch.changed.Load() {
					iterErr = errRoutesChanged
					break
				}
				key := it.Key()
				p := Partition(c.opts.DMap, key, parts)
				if only != nil && (p >= uint64(len(only)) || !only[p]) {
					continue
				}
				if resuming {
					if p < lastPart {
						continue
					}
					if p == lastPart {
						if _, dup := seenLast[key]; dup {
							continue
						}
					}
				}
				switch {
				case !started || p > lastPart:
					// One read batch never spans partitions: the olric
					// pipeline then makes one round trip per batch.
					if !send() {
						break loop
					}
					started, lastPart = true, p
					watch.from.Store(p)
					clear(seenLast)
				case p < lastPart:
					// Olric walks partitions in order; a smaller partition
					// means the cluster hashes keys differently than we do,
					// so a restart could not skip the right keys.
					ordered = false
				}
				seenLast[key] = struct{}{}
				if skip != nil {
					if _, dup := skip[xxh3.HashString(key)]; dup {
						continue
					}
				}
				if ValidateKey(key) != nil {
					res.ignored++
					continue
				}
				seen.Add(1)
				batch = append(batch, key)
				if len(batch) == cap(batch) && !send() {
					break loop
				}
			}
			if !isDown(iterErr) { // an abandoned Next closes it when it returns
				it.Close()
			}
		}
		watch.close()
		if !send() || ctx.Err() != nil {
			return res
		}
		if iterErr == nil {
			if n, msg := c.logs.scanFailures(); n != failSeq {
				iterErr = errors.New(msg)
			}
		}
		// The partitions this iteration walked to the end were scanned
		// under the owners of the table it started with.
		to := parts
		if iterErr != nil {
			to = lastPart
			if !started {
				to = from
			}
		}
		if watch.table != nil && ordered {
			for p := from; p < to; p++ {
				res.scanned[p], res.under[p] = true, watch.table[p]
			}
		}
		if iterErr == nil {
			return res
		}
		where := "at the start"
		if started {
			where = fmt.Sprintf("in partition %d of %d", lastPart, parts)
		}
		res.problems = append(res.problems, fmt.Sprintf("scan failed %s: %v", where, iterErr))
		switch {
		case !ordered:
			res.err = fmt.Errorf("scan failed %s and cannot resume (keys arrived out of partition order: does the cluster use a custom hasher?): %w", where, ErrIncomplete)
			return res
		case res.restarts >= o.MaxRestarts:
			res.err = fmt.Errorf("scan failed %s after %s; partitions from %d on were not fully scanned: %v: %w", where, plural.Count(res.restarts, "restart", "restarts"), lastPart, iterErr, ErrIncomplete)
			return res
		}
		// A failed iteration is a failed call: make sure some member
		// still answers before restarting.
		if derr := downWatchFrom(ctx).check(ctx, classify(iterErr)); derr != nil {
			res.err = fmt.Errorf("scan failed %s and stopped: %w", where, derr)
			return res
		}
		res.restarts++
		if !sleepCtx(ctx, backoff(min(res.restarts, 5))) {
			return res
		}
		if err := c.refreshRoutes(ctx, true); err != nil {
			res.problems = append(res.problems, err.Error())
		}
	}
}

// readBatch reads keys with one olric pipeline (one round trip per
// partition owner) and retries keys whose pipelined read failed one by one
// with the client's retry policy (see retryReads).
func (c *Client) readBatch(ctx context.Context, b keyBatch) readOutcome {
	out := readOutcome{seq: b.seq, part: b.part, items: make([]readItem, len(b.keys))}
	rs := c.pipelineGet(ctx, b.keys)
	c.retryReads(ctx, b.keys, rs)
	for i, key := range b.keys {
		r := rs[i]
		it := &out.items[i]
		it.key = key
		switch {
		case r.err == nil:
			it.state, it.entry = readLive, r.entry
		case errors.Is(r.err, ErrNotFound):
			it.state = readMissing
		default:
			it.state = readFailed
			why := r.err
			if isDown(why) {
				why = errors.New("no member answers") // said once by Scan's error
			}
			it.fail = fmt.Sprintf("%s (partition %d): %v", key, c.Locate(key).Partition, why)
		}
	}
	return out
}

type getResult struct {
	entry Entry
	err   error
}

// pipelineGet reads keys with one olric pipeline. Every result carries
// either an entry or an error (classified); an error of the whole pipeline
// is given to every key. Its not-founds are not all facts: see
// retryReads.
func (c *Client) pipelineGet(ctx context.Context, keys []string) []getResult {
	res := make([]getResult, len(keys))
	fail := func(err error) []getResult {
		for i := range res {
			res[i].err = classify(err)
		}
		return res
	}
	pipe, err := c.dm.Pipeline(olric.PipelineConcurrency(pipelineConcurrency))
	if err != nil {
		return fail(err)
	}
	futs := make([]*olric.FutureGet, len(keys))
	for i, k := range keys {
		futs[i] = pipe.Get(ctx, k)
	}
	ectx, cancel := c.callCtx(ctx)
	defer cancel()
	_, err = cutCall(ectx, func() (struct{}, error) { return struct{}{}, pipe.Exec(ectx) })
	if isDown(err) {
		return fail(err) // Exec was abandoned and may still use pipe: leave it to the collector
	}
	defer pipe.Close()
	if err != nil {
		// Results of partitions that did not run are missing: do not read them.
		return fail(err)
	}
	now := time.Now()
	for i, f := range futs {
		r, err := safeCall(f.Result)
		if err == nil {
			res[i].entry, err = entryFrom(keys[i], r, now)
		}
		res[i].err = classify(err)
	}
	return res
}

// pipelineConcurrency is how many partitions one pipeline executes at once.
const pipelineConcurrency = 8

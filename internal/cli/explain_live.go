package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/explain"
	"github.com/lcctl/lcctl/internal/live"
	"github.com/lcctl/lcctl/internal/store"
)

// explainLive is what explain's session and live flags gathered before
// the request is decided (docs/explain.md "Live inputs").
type explainLive struct {
	snap     *live.Snapshot // the live snapshot, nil with --snapshot FILE
	snapYAML []byte         // its YAML, decoded like a --snapshot file
	span     *live.Span     // --span of --request-id, nil without --span
	prov     *explain.Provenance
}

// registerExplainLive adds the session, Olric and live-source flags to
// explain (the live flags are snapshot's, docs/snapshot.md).
func registerExplainLive(o *explainOptions, fs interface {
	StringVar(p *string, name, value, usage string)
}) {
	fs.StringVar(&o.SessionID, "session-id", "", "raw session id; the cache affinity key is derived as the gateway does (needs --source)")
	fs.StringVar(&o.Source, "source", "", "where the client sent --session-id: prompt_cache_key, conversation_id or header")
	fs.StringVar(&o.PreviousRequestID, "previous-request-id", "", "with --span: the x-request-id of the session's previous request, whose selected cluster is the last cluster (for --at)")
}

// usesLive reports whether any session, Olric or live flag was given.
func (o *explainOptions) usesLive() bool {
	return o.SessionID != "" || o.Source != "" || o.live.given() || o.live.span != "" || o.flagGiven("olric") || o.PreviousRequestID != ""
}

// prepareExplainLive derives the affinity key from --session-id, looks
// the last cluster up in Olric (--olric), reads --span, and builds the
// live snapshot; it sets the affinity-key and last-cluster flag values
// it found, as if given. nil when no such flag was given.
func prepareExplainLive(ctx context.Context, o *explainOptions, env *Env) (*explainLive, error) {
	if !o.usesLive() {
		return nil, nil
	}
	lv := &explainLive{prov: &explain.Provenance{Config: o.Config, LastCluster: explain.LastClusterSource{From: "none"}}}
	if o.AlgorithmConfig != "" {
		lv.prov.Config = o.AlgorithmConfig
	}
	set := map[string]bool{}
	o.derived = set
	given := o.flagGiven

	// The session's cache affinity key (live-snapshot.md §6).
	switch {
	case o.SessionID != "" && given("affinity-key"):
		return nil, Usagef("give either --session-id with --source or --affinity-key, not both")
	case o.SessionID != "" && o.Source == "":
		return nil, Usagef("--session-id needs --source: prompt_cache_key, conversation_id or header (where the client sent it)")
	case o.SessionID == "" && o.Source != "":
		return nil, Usagef("--source needs --session-id")
	case o.SessionID != "":
		src, err := store.ParseSource(o.Source)
		if err != nil {
			return nil, UsageErr(fmt.Errorf("--source: %w", err))
		}
		ak, err := store.AffinityKey(src, o.SessionID)
		if err != nil {
			return nil, UsageErr(fmt.Errorf("--session-id: %w", err))
		}
		o.AffinityKey, set["affinity-key"] = ak, true
		lv.prov.Session = &explain.SessionSource{Source: string(src), AffinityKey: ak}
	}
	model := o.Model
	if model == "" {
		for _, h := range o.Headers {
			if hl, err := ParseHeaderLine(h); err == nil && strings.EqualFold(hl.Name, hdrModel) {
				model = strings.TrimSpace(hl.Value)
				break
			}
		}
	}

	// --span: the request's span, and the previous request's.
	if o.live.span != "" {
		if !given("request-id") {
			return nil, Usagef("--span needs --request-id ID: the x-request-id of the request whose span to compare with")
		}
		sp, err := o.live.loadSpan(env, o.RequestID)
		if err != nil {
			return nil, err
		}
		lv.span = sp
	} else if o.PreviousRequestID != "" {
		return nil, Usagef("--previous-request-id needs --span FILE (the spans of the session's requests)")
	}

	// The last cluster: --last-cluster, the previous request's span, or
	// Olric.
	past := o.live.at != ""
	olric := o.flagGiven("olric")
	switch {
	case given("last-cluster"):
		lv.prov.LastCluster = explain.LastClusterSource{From: "flag", Cluster: o.LastCluster}
		if olric {
			lv.prov.LastCluster.Note = "--olric not read: --last-cluster was given"
		}
	case o.PreviousRequestID != "":
		prev, err := o.live.loadSpan(env, o.PreviousRequestID)
		if err != nil {
			return nil, err
		}
		if prev.Cluster() == "" {
			return nil, Usagef("--previous-request-id %s: its span has no selected_cluster.id (the request was not dispatched, so the gateway wrote no last cluster)", o.PreviousRequestID)
		}
		o.LastCluster, set["last-cluster"] = prev.Cluster(), true
		lv.prov.LastCluster = explain.LastClusterSource{From: "span", Cluster: prev.Cluster(), Span: prev.File, RequestID: o.PreviousRequestID,
			Note: "the hint at the decision, if the gateway's write after that request succeeded (it logs no hint value)"}
	case olric:
		if o.AffinityKey == "" && !set["affinity-key"] {
			return nil, Usagef("--olric needs the session: --session-id with --source, or --affinity-key")
		}
		if model == "" {
			return nil, Usagef("the model is required: --model NAME")
		}
		key := store.Key(o.RoutingKey, model, o.AffinityKey)
		// The connection flags are checked here, not in validate: they
		// matter only on this path (--last-cluster or a span wins).
		opts, err := o.conn.options(env, o.flagGiven)
		if err != nil {
			return nil, err
		}
		c, err := o.conn.dial(ctx, env, opts)
		if err != nil {
			return nil, err
		}
		e, err := c.Get(ctx, key)
		_ = c.Close()
		found := err == nil
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, fail(err)
		}
		lc := explain.LastClusterSource{From: "olric", Key: key, Found: &found}
		if found {
			lc.Value = e.Cluster
			if !e.WrittenAt.IsZero() {
				lc.WrittenAt = formatStoreTime(e.WrittenAt)
			}
			ttl := int64(e.TTL() / time.Millisecond)
			if e.TTL() < 0 {
				ttl = -1
			}
			lc.TTLMs = &ttl
			if e.Valid {
				lc.Cluster = strings.TrimSpace(e.Cluster)
				o.LastCluster, set["last-cluster"] = lc.Cluster, true
			} else {
				lc.Note = fmt.Sprintf("the gateway treats this value as a miss (%v): no hint is sent", store.ValidateValue(e.Cluster))
			}
		}
		if past {
			lc.Note = strings.TrimPrefix(lc.Note+"; --at: the store holds only today's value (later turns overwrite it, the TTL expires it); it was the hint at --at only if the session had no later success. Give --last-cluster, or --span with --previous-request-id", "; ")
		}
		lv.prov.LastCluster = lc
	case past:
		lv.prov.LastCluster.Note = "--at: the store holds only today's value; give --last-cluster, or --span with --previous-request-id, for the hint at that instant"
	}

	// The snapshot: --snapshot FILE, or the live sources.
	switch {
	case o.Snapshot != "" && o.live.given():
		return nil, Usagef("give --snapshot FILE or the live sources (--pylon, --prometheus), not both")
	case o.Snapshot != "":
		lv.prov.Snapshot = explain.SnapshotSource{File: o.Snapshot}
		if o.live.at != "" || o.live.overlay != "" {
			return nil, Usagef("--at and --overlay need a live source (--prometheus, --pylon) instead of --snapshot")
		}
	case o.live.given():
		if model == "" {
			return nil, Usagef("the model is required: --model NAME")
		}
		s, err := o.live.build(ctx, env, model, lv.span)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := live.WriteYAML(&buf, s); err != nil {
			return nil, err
		}
		lv.snap, lv.snapYAML = s, buf.Bytes()
		var age time.Duration
		for _, c := range s.Clusters {
			age = max(age, c.Age)
		}
		ageMs := float64(age) / 1e6
		lv.prov.Snapshot = explain.SnapshotSource{Source: s.Source, At: s.At.UTC().Format(storeTimeLayout), Past: s.Past, AgeMs: &ageMs,
			Span: s.Span, RequestID: s.SpanRequestID, Warnings: s.Warnings}
	}
	return lv, nil
}

// liveSnapshotName is the file name live snapshots are decoded under.
const liveSnapshotName = "live snapshot"

// finishReport adds the provenance block and the span comparison.
func (lv *explainLive) finishReport(rep *explain.Report) {
	if lv == nil {
		return
	}
	rep.Provenance = lv.prov
	if lv.span == nil {
		return
	}
	rec := explain.SpanDecision{Cluster: lv.span.Cluster()}
	if r, ok := lv.span.Int("routing.rank_depth"); ok {
		rec.RankDepth = &r
	}
	if lv.span.SessionState != "" {
		s := lv.span.SessionState
		rec.SessionState = &s
	}
	ex, ok, diffs := explain.CompareSpan(&rep.Run.Decision, rec)
	c := &explain.SpanComparison{Span: lv.span.File, RequestID: lv.span.RequestID, MatchedBy: lv.span.MatchedBy,
		Recorded: rec, Explained: ex, Reproduced: ok, Differences: append([]string{}, diffs...), Approximate: lv.approximate(rec.Cluster)}
	if rec.SessionState == nil {
		c.Approximate = append(c.Approximate, "the span records no session state (the older release, or the event was not exported): it was not compared")
	}
	if lv.snap == nil && rep.Snapshot != nil {
		c.Approximate = append(c.Approximate, fileVsSpan(rep.Snapshot, lv.span)...)
	}
	rep.Span = c
}

// fileVsSpan sets the span's selected_inst.* values beside a --snapshot
// file's values of the chosen cluster (live-snapshot.md §4), listing the
// ones that differ.
func fileVsSpan(snap *explain.Snapshot, sp *live.Span) []string {
	var c *explain.Cluster
	for i := range snap.Clusters {
		if snap.Clusters[i].ClusterID == sp.Cluster() {
			c = &snap.Clusters[i]
		}
	}
	if c == nil {
		return []string{fmt.Sprintf("the span's chosen cluster %s is not in the snapshot file", sp.Cluster())}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil
	}
	var flat map[string]any
	_ = json.Unmarshal(b, &flat)
	stats, _ := flat["stats"].(map[string]any)
	var out []string
	for _, v := range sp.Values() {
		got, ok := stats[v.Field]
		if v.Field == "rtt_ms" {
			got, ok = flat["rtt_ms"]
		}
		if !ok {
			continue
		}
		sv, err1 := strconv.ParseFloat(v.Span, 64)
		fv, ok2 := got.(float64)
		if err1 == nil && ok2 && sv != fv {
			out = append(out, fmt.Sprintf("cluster %s %s: the snapshot file has %s, Stargate read %s (%s)", c.ClusterID, v.Field, strconv.FormatFloat(fv, 'f', -1, 64), v.Span, v.Attr))
		}
	}
	return out
}

// approximate lists the inputs that may differ from what Stargate read.
func (lv *explainLive) approximate(chosen string) []string {
	if lv.snap == nil {
		return []string{"the snapshot is a file: lcctl cannot tell how close its values are to Stargate's view at the decision"}
	}
	var out []string
	for _, c := range lv.snap.Clusters {
		var unknown, metric []string
		for _, f := range c.Fields {
			switch f.Origin {
			case live.OriginUnknown:
				unknown = append(unknown, f.Name)
			case live.OriginMetric, live.OriginDerived:
				if f.Name != "cluster_id" {
					metric = append(metric, f.Name)
				}
			}
		}
		if len(metric) > 0 {
			what := "Pylon's metrics"
			if c.ID == chosen {
				what = "Pylon's metrics (the span did not carry them)"
			}
			out = append(out, fmt.Sprintf("cluster %s: %d fields from %s, %s old", c.ID, len(metric), what, c.Age.Round(time.Millisecond)))
		}
		if len(unknown) > 0 {
			out = append(out, fmt.Sprintf("cluster %s: unknown, left at the format default: %s", c.ID, strings.Join(unknown, ", ")))
		}
	}
	return append(out, "Stargate's pending reservations are in no live source", "the candidate order is Stargate's per-process hash order; lcctl sorts by cluster_id")
}

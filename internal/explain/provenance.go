package explain

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/lb"
)

// Provenance says where each input of a live explanation came from
// (docs/explain.md "Provenance"): the config file, the snapshot's source
// and age, the session's cache affinity key, and the last cluster. It is
// nil when explain ran on files only, without session or live flags.
type Provenance struct {
	// Config is the lb-config file ("" without one).
	Config string `json:"config"`
	// Snapshot is where the snapshot came from.
	Snapshot SnapshotSource `json:"snapshot"`
	// Session is the derived cache affinity key (nil without
	// --session-id).
	Session *SessionSource `json:"session,omitempty"`
	// LastCluster is where x-stargate-last-cluster-id came from.
	LastCluster LastClusterSource `json:"last_cluster"`
}

// SnapshotSource describes the snapshot: a file, or lcctl snapshot's live
// sources.
type SnapshotSource struct {
	// File is the --snapshot file ("" for live sources).
	File string `json:"file,omitempty"`
	// Source is the live source ("prometheus URL", "pylon scrape (N
	// endpoints)"); At the snapshot instant (RFC 3339 UTC, ms); Past is
	// true with --at; AgeMs the oldest cluster's age (ms).
	Source string   `json:"source,omitempty"`
	At     string   `json:"at,omitempty"`
	Past   bool     `json:"past,omitempty"`
	AgeMs  *float64 `json:"age_ms,omitempty"`
	// Span and RequestID name the span whose values the chosen cluster
	// got.
	Span      string `json:"span,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	// Warnings are lcctl snapshot's warnings (unknown fields, stale fast
	// fields, ambiguous backends).
	Warnings []string `json:"warnings,omitempty"`
}

// SessionSource is the cache affinity key derived from a session id as
// the gateway derives it (live-snapshot.md §6).
type SessionSource struct {
	// Source is prompt_cache_key, conversation_id or header; AffinityKey
	// the derived key (mt:v1:session:<sha-256> or a kept header value).
	Source      string `json:"source"`
	AffinityKey string `json:"affinity_key"`
}

// LastClusterSource is where the session's last cluster came from.
type LastClusterSource struct {
	// From is "olric" (the gateway's store), "flag" (--last-cluster or
	// -H), "span" (the span of the session's previous request) or "none".
	From string `json:"from"`
	// Cluster is the hint the request carries ("" for none).
	Cluster string `json:"cluster,omitempty"`
	// Key, Found, Value, WrittenAt, TTLMs describe the Olric entry (From
	// olric): the store key, whether it exists, its raw value, its write
	// time (RFC 3339 UTC, ms) and the TTL left (ms; -1 without expiry).
	Key       string `json:"key,omitempty"`
	Found     *bool  `json:"found,omitempty"`
	Value     string `json:"value,omitempty"`
	WrittenAt string `json:"written_at,omitempty"`
	TTLMs     *int64 `json:"ttl_ms,omitempty"`
	// Span and RequestID name the previous request's span (From span).
	Span      string `json:"span,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	// Note qualifies the value (a past --at with today's store value, a
	// value the gateway treats as a miss).
	Note string `json:"note,omitempty"`
}

// SpanComparison sets lcctl's decision beside the one Stargate recorded in
// the request's proxy_openai_request span (live-snapshot.md §5).
type SpanComparison struct {
	// Span is the file; RequestID the request; MatchedBy how the span was
	// found.
	Span      string `json:"span"`
	RequestID string `json:"request_id"`
	MatchedBy string `json:"matched_by"`
	// Recorded is Stargate's decision, Explained lcctl's.
	Recorded  SpanDecision `json:"recorded"`
	Explained SpanDecision `json:"explained"`
	// Reproduced is true when every value the span records equals
	// lcctl's; Differences lists the ones that do not.
	Reproduced  bool     `json:"reproduced"`
	Differences []string `json:"differences"`
	// Approximate lists the inputs that may differ from Stargate's view.
	Approximate []string `json:"approximate"`
}

// SpanDecision is the part of a decision a span records: the cluster,
// the 1-based rank depth and the session state (nil when not recorded or
// not classified).
type SpanDecision struct {
	Cluster      string  `json:"cluster"`
	RankDepth    *int64  `json:"rank_depth"`
	SessionState *string `json:"session_state"`
}

// CompareSpan compares the explained decision d with the recorded one,
// rec. It returns d in a span's terms (cluster, 1-based rank depth, nil
// when d has none; session state), whether every recorded value equals
// lcctl's, and one "<what>: Stargate X, lcctl Y" line per value that does
// not. A value the span does not record (no session state in S) is not
// compared. It returns no error.
func CompareSpan(d *Decision, rec SpanDecision) (SpanDecision, bool, []string) {
	ex := SpanDecision{Cluster: d.Cluster, SessionState: d.SessionState}
	if d.RankDepth > 0 {
		r := int64(d.RankDepth)
		ex.RankDepth = &r
	}
	var diffs []string
	if rec.Cluster != ex.Cluster {
		diffs = append(diffs, fmt.Sprintf("selected cluster: Stargate %s, lcctl %s", orNone(rec.Cluster), orNone(ex.Cluster)))
	}
	if rec.RankDepth != nil && (ex.RankDepth == nil || *ex.RankDepth != *rec.RankDepth) {
		diffs = append(diffs, fmt.Sprintf("rank depth: Stargate %d, lcctl %s", *rec.RankDepth, intOrNone(ex.RankDepth)))
	}
	if rec.SessionState != nil && (ex.SessionState == nil || *ex.SessionState != *rec.SessionState) {
		diffs = append(diffs, fmt.Sprintf("session state: Stargate %s, lcctl %s", *rec.SessionState, strOrNone(ex.SessionState)))
	}
	return ex, len(diffs) == 0, diffs
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func intOrNone(p *int64) string {
	if p == nil {
		return "(none)"
	}
	return strconv.FormatInt(*p, 10)
}

func strOrNone(p *string) string {
	if p == nil {
		return "(not classified)"
	}
	return *p
}

func (d SpanDecision) text() string {
	parts := []string{orNone(d.Cluster)}
	if d.RankDepth != nil {
		parts = append(parts, "rank depth "+strconv.FormatInt(*d.RankDepth, 10))
	}
	if d.SessionState != nil {
		parts = append(parts, "session "+*d.SessionState)
	}
	return strings.Join(parts, ", ")
}

func (p *printer) provenance(pv *Provenance) {
	p.title("Provenance")
	cfg := pv.Config
	if cfg == "" {
		cfg = "none (Stargate's built-in default)"
	}
	p.kv("config", cfg)
	s := pv.Snapshot
	var snap []string
	if s.File != "" {
		snap = append(snap, s.File+" (a file: lcctl does not know its age)")
	} else {
		when := "now"
		if s.Past {
			when = "--at, a past instant"
		}
		snap = append(snap, fmt.Sprintf("%s at %s (%s)", s.Source, s.At, when))
		if s.AgeMs != nil {
			// A line of its own: wrapped inside the source line, the
			// phrase split ("oldest cluster 1.33 ms" / "old").
			snap = append(snap, fmt.Sprintf("oldest cluster %s old", fmtMs(lb.Millis(*s.AgeMs))))
		}
		if s.Span != "" {
			snap = append(snap, fmt.Sprintf("the chosen cluster's values from the span of request %s in %s", s.RequestID, s.Span))
		}
		for _, w := range s.Warnings {
			snap = append(snap, "warning: "+w)
		}
	}
	p.kv("snapshot", snap...)
	if pv.Session != nil {
		p.kv("session", fmt.Sprintf("affinity key %s (derived from --session-id, source %s, as the gateway does)", pv.Session.AffinityKey, pv.Session.Source))
	}
	lc := pv.LastCluster
	var lines []string
	switch lc.From {
	case "olric":
		if lc.Found != nil && *lc.Found {
			l := fmt.Sprintf("last cluster %s from Olric: key %s, value %q", orNone(lc.Cluster), lc.Key, lc.Value)
			if lc.WrittenAt != "" {
				l += ", written " + lc.WrittenAt
			}
			if lc.TTLMs != nil {
				if *lc.TTLMs < 0 {
					l += ", no expiry"
				} else {
					l += ", TTL " + (time.Duration(*lc.TTLMs) * time.Millisecond).Truncate(time.Second).String() + " left"
				}
			}
			lines = append(lines, l)
		} else {
			lines = append(lines, fmt.Sprintf("no last cluster: Olric has no entry for key %s (a new session: the gateway sends no hint)", lc.Key))
		}
	case "flag":
		lines = append(lines, "last cluster "+lc.Cluster+" (given with --last-cluster)")
	case "span":
		lines = append(lines, fmt.Sprintf("last cluster %s: the selected cluster of the session's previous request %s (span in %s)", lc.Cluster, lc.RequestID, lc.Span))
	default:
		lines = append(lines, "no last cluster (no --last-cluster, no --olric lookup)")
	}
	if lc.Note != "" {
		lines = append(lines, lc.Note)
	}
	p.kv("hint", lines...)
}

func (p *printer) spanComparison(c *SpanComparison) {
	p.title(fmt.Sprintf("Stargate's recorded decision (request %s, %s)", c.RequestID, c.Span))
	p.kv("recorded", c.Recorded.text())
	p.kv("lcctl", c.Explained.text())
	if c.Reproduced {
		p.kv("verdict", p.st.OK.Render("lcctl reproduces Stargate's decision"))
	} else {
		p.kv("verdict", append([]string{p.st.Warning.Render("lcctl does NOT reproduce it: the snapshot differs from Stargate's view")}, c.Differences...)...)
	}
	if len(c.Approximate) > 0 {
		p.kv("approximate", c.Approximate...)
	}
}

// Package live builds an lcctl routing snapshot (formats.md "Snapshot") of
// one model from a running deployment, following
// shared/spec/live-snapshot.md: Pylon's Prometheus gauges, read through a
// Prometheus server's HTTP API (any past instant) or scraped directly from
// each Pylon's /metrics page ("now" only); an operator overlay for what no
// metric carries; and Stargate's proxy_openai_request span, which records
// exactly what the load balancer read for the cluster it chose.
//
// Every value written carries its provenance: where it came from (Origin),
// how old it is, and which series or file gave it. Nothing is guessed: a
// value no source has is left out (the snapshot format's default applies)
// and listed as unknown, with a warning when the engine reads it.
//
// Errors are *Error values that name the source, the cluster and the field;
// Error.Usage separates unusable input (exit 2) from a source that could not
// be reached (exit 1).
package live

import (
	"fmt"
	"strings"
	"time"
)

// Origin says where one snapshot value came from (docs/snapshot.md
// "Provenance"; live-snapshot.md §4).
type Origin string

// The origins of a snapshot value.
const (
	// OriginMetric is a Pylon gauge, copied or aggregated over the
	// cluster's backends by the rule of live-snapshot.md §1.4.
	OriginMetric Origin = "metric"
	// OriginDerived is computed from several gauges (status and
	// active_backend_count from the registration gauges,
	// total_query_input_size from the per-state token gauges).
	OriginDerived Origin = "derived"
	// OriginOverlay is the operator's --overlay file.
	OriginOverlay Origin = "overlay"
	// OriginSpan is a proxy_openai_request span's selected_inst.* value:
	// exactly what the load balancer read for the chosen cluster.
	OriginSpan Origin = "span"
	// OriginDefault is a value no source has whose format default is the
	// documented meaning (e.g. an empty queue-time map, 0 KV tokens).
	OriginDefault Origin = "default"
	// OriginUnknown is a value no source has whose default is an
	// assumption the operator should know about; it is left out of the
	// snapshot and warned about when the engine reads it.
	OriginUnknown Origin = "unknown"
)

// Error is a live source that could not be used. Source names the
// Prometheus URL, Pylon endpoint, overlay or span file; Cluster and Field
// are set when the problem is about one cluster or one snapshot field
// (stats fields by their formats.md names).
type Error struct {
	// Source is the URL or file; Cluster the cluster id ("" when not about
	// one cluster); Field the snapshot field or metric ("" when none).
	Source, Cluster, Field string
	// Msg says what is wrong.
	Msg string
	// Usage is true for unusable input (exit 2: bad content, a missing
	// series, a bad flag); false for a source that could not be reached or
	// answered with an HTTP error (exit 1).
	Usage bool
}

// Error renders "source: cluster X: field F: msg".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Source)
	if e.Cluster != "" {
		fmt.Fprintf(&b, ": cluster %s", e.Cluster)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Msg)
	return b.String()
}

func usageErr(source, cluster, field, format string, args ...any) *Error {
	return &Error{Source: source, Cluster: cluster, Field: field, Msg: fmt.Sprintf(format, args...), Usage: true}
}

// Aggregation selects the per-cluster aggregation rule of
// live-snapshot.md §1.4.
type Aggregation string

// The aggregation rules.
const (
	// AggregationN1 is the rule of cluster_snapshots.rs N1 (198e867c),
	// the one lcctl's engine follows: sums of finite values, the maximum
	// of max_output_tps, running queries and total input summed.
	AggregationN1 Aggregation = "n1"
	// AggregationS is the rule of the 2026-08-22 main (S): sums of rates
	// and queues, max_output_tps, num_running_queries and
	// total_query_input_size copied from the source backend.
	AggregationS Aggregation = "s"
)

// ParseAggregation accepts "n1" and "s" (case-insensitive). N2
// (b2ec477c) applies N1 only when every backend reports the capability
// request.load.proxy_local, which no metric shows, so it is not offered:
// choose n1 or s for what the deployment runs (§7 open point 2). Any other
// value is an error naming the accepted ones.
func ParseAggregation(s string) (Aggregation, error) {
	switch strings.ToLower(s) {
	case "n1", "":
		return AggregationN1, nil
	case "s":
		return AggregationS, nil
	}
	return "", fmt.Errorf("--aggregation %q: want n1 (lcctl's engine, the default) or s (the older rule: 'latest' for max_output_tps, num_running_queries, total_query_input_size)", s)
}

// DefaultPrefix is Pylon's metric prefix (live-snapshot.md §2).
const DefaultPrefix = "pylon_"

// DefaultLookback is how old a sample may be before it is refused; it is
// Prometheus's default lookback delta (5 minutes), beyond which a
// Prometheus instant query returns no sample at all.
const DefaultLookback = 5 * time.Minute

// FastFieldHorizon is Stargate's own staleness horizon (one 1 s Pylon
// heartbeat, live-snapshot.md §4): a fast-changing field older than this
// is warned about.
const FastFieldHorizon = time.Second

// MaxClockSkew is how far in the future an --at instant or a span's start
// may lie before it is refused: the clocks of lcctl's machine, Prometheus
// and Stargate may differ by this much (docs/snapshot.md "--at").
const MaxClockSkew = 30 * time.Second

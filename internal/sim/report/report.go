// Package report renders simulation results: the comparison table (text),
// the JSON document and the charts. Renderers take values and an
// io.Writer (or a directory for charts); they never simulate anything.
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/lcctl/lcctl/internal/jsonobj"
	"github.com/lcctl/lcctl/internal/sim"
	"github.com/lcctl/lcctl/internal/ui"
)

// Document is the JSON output of `lcctl simulate --output json`
// (docs/simulate.md "JSON output"): the scenario summary and one result
// per policy, in run order. Its bytes depend only on the scenario, the
// seed and the policies.
type Document struct {
	// Scenario summarises the inputs.
	Scenario ScenarioInfo `json:"scenario"`
	// Policies holds one result per policy (with --seeds, of the first
	// seed).
	Policies []*sim.Result `json:"policies"`
	// Seeds is the several-seed summary (--seeds N; absent otherwise).
	Seeds *Seeds `json:"seeds,omitempty"`
	// Sweep is the sweep summary (--sweep; absent otherwise).
	Sweep *Sweep `json:"sweep,omitempty"`
}

// ScenarioInfo summarises a scenario for reports.
type ScenarioInfo struct {
	// Name and Description come from the scenario file.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Seed is the master seed used, written under sim.SeedKey before
	// slo_ttft_ms by MarshalJSON.
	Seed uint64 `json:"-"`
	// SLOTTFTMs is the TTFT objective of goodput (ms).
	SLOTTFTMs float64 `json:"slo_ttft_ms"`
	// WarmupS is the warm-up excluded from request metrics (s).
	WarmupS float64 `json:"warmup_s"`
	// DurationS is the session arrival window (s; 0 for a trace).
	DurationS float64 `json:"duration_s"`
	// Clusters are the cluster ids in candidate order.
	Clusters []string `json:"clusters"`
	// BlockTokens is the KV cache block size (tokens).
	BlockTokens int64 `json:"block_tokens"`
	// Events are the scenario's cluster events (drain, fail, restore),
	// marked on the time-series charts.
	Events []EventInfo `json:"events,omitempty"`
	// Trace describes the trace (format, block size, requests and the
	// sessions, follow-ups and branches found); absent for a synthetic
	// workload.
	Trace *sim.TraceStats `json:"trace,omitempty"`
}

// MarshalJSON writes i as its tags say, with Seed under sim.SeedKey
// after name and description (docs/simulate.md "JSON output"; a struct
// tag cannot name the constant). Errors: those of encoding/json.
func (i ScenarioInfo) MarshalJSON() ([]byte, error) {
	type plain ScenarioInfo // without this method
	return jsonobj.MarshalBefore(plain(i), "slo_ttft_ms", jsonobj.Member{Key: sim.SeedKey, Value: i.Seed})
}

// UnmarshalJSON reads what MarshalJSON writes (demo decodes the
// document). Errors: those of encoding/json.
func (i *ScenarioInfo) UnmarshalJSON(data []byte) error {
	type plain ScenarioInfo
	return jsonobj.Unmarshal(data, (*plain)(i), jsonobj.Member{Key: sim.SeedKey, Value: &i.Seed})
}

// EventInfo is one cluster event of the scenario (sim.EventSpec), as
// the `scenario.events` items of simulate's JSON (docs/simulate.md "JSON output"; absent without events).
type EventInfo struct {
	// AtS is the event time (s since the run started).
	AtS float64 `json:"at_s"`
	// Cluster is the cluster id.
	Cluster string `json:"cluster"`
	// Action is "drain", "fail" or "restore" (sim.EventSpec.Action).
	Action string `json:"action"`
}

// NewDocument assembles the report of one run.
func NewDocument(sc *sim.Scenario, results []*sim.Result) *Document {
	d := &Document{
		Scenario: ScenarioInfo{
			Name: sc.Name, Description: sc.Description, Seed: sc.Seed,
			SLOTTFTMs: sc.SLOTTFTMs, WarmupS: sc.WarmupS,
		},
		Policies: results,
	}
	if sc.Workload.Trace == "" {
		d.Scenario.DurationS = sc.Workload.DurationS
	}
	for _, c := range sc.Clusters {
		d.Scenario.Clusters = append(d.Scenario.Clusters, c.ID)
	}
	for _, e := range sc.Events {
		d.Scenario.Events = append(d.Scenario.Events, EventInfo{AtS: e.AtS, Cluster: e.Cluster, Action: e.Action})
	}
	if len(results) > 0 {
		d.Scenario.BlockTokens = results[0].BlockTokens
		d.Scenario.Trace = results[0].Trace
	}
	return d
}

// WriteJSON writes the document as indented JSON with a final newline.
func WriteJSON(w io.Writer, d *Document) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	b = append(ui.JSONSafe(b), '\n')
	_, err = w.Write(b)
	return err
}

// WriteText writes the comparison table, the per-cluster utilisation
// table and, when the document has policies that differ only in
// last_cluster_affinity, the off → on summary (WriteFlagEffects). st may
// be nil (plain text).
func WriteText(w io.Writer, d *Document, st *ui.Styles) error {
	if st == nil {
		st = ui.NewStyles(w, false)
	}
	var b strings.Builder
	s := &d.Scenario
	writeHeader(&b, d, st)
	b.WriteString("\n")

	head := []string{"policy", "requests", "goodput r/s", "TTFT p50 ms", "p90 ms", "p99 ms", "queue p99 ms", "route p99 ms", "KV reuse", "left last", "failed"}
	rows := [][]string{}
	for _, r := range d.Policies {
		rows = append(rows, []string{
			Label(r),
			fmt.Sprintf("%d", r.Requests),
			fmt.Sprintf("%.2f", r.GoodputRPS),
			fmtMs(r.TTFTMs.P50), fmtMs(r.TTFTMs.P90), fmtMs(r.TTFTMs.P99),
			fmtMs(r.QueueWaitMs.P99), fmtMs(r.RouteWaitMs.P99),
			pct(r.KVReuse),
			leftShare(r),
			failed(r),
		})
	}
	table(&b, st, head, rows, 1)
	b.WriteString(st.Faint.Render(fmt.Sprintf("goodput: completed requests with TTFT ≤ %g ms per second after the warm-up; KV reuse: cached / input tokens;", s.SLOTTFTMs)) + "\n")
	b.WriteString(st.Faint.Render("left last: share of requests with a last-cluster hint served by another cluster (hinted requests in brackets);") + "\n")
	b.WriteString(st.Faint.Render("failed: requests that did not complete, by cause in brackets: 503 (the router found no capacity within its") + "\n")
	b.WriteString(st.Faint.Render("wait budget), 400 (the router answered bad request), refused (every attempt turned away by a full, drained or failed") + "\n")
	b.WriteString(st.Faint.Render("cluster), stream (the cluster failed after the first token).") + "\n\n")

	head = append([]string{"utilisation"}, s.Clusters...)
	rows = rows[:0]
	for _, r := range d.Policies {
		row := []string{Label(r)}
		for _, c := range r.Clusters {
			row = append(row, pct(c.Utilization))
		}
		rows = append(rows, row)
	}
	table(&b, st, head, rows, 1)
	b.WriteString(st.Faint.Render("utilisation: time-average share of busy slots per cluster over the measurement window (above).") + "\n")
	if err := WriteFlagEffects(&b, d, st); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// windowNote describes the measurement window (sim.Result): from the end
// of the warm-up to the end of the run, the drain after session arrivals
// included.
func windowNote(d *Document) string {
	lo, hi := math.Inf(1), 0.0
	for _, r := range d.Policies {
		lo, hi = math.Min(lo, r.SimulatedS), math.Max(hi, r.SimulatedS)
	}
	if len(d.Policies) == 0 {
		lo = 0
	}
	end := fmt.Sprintf("%.0f s", hi)
	if math.Round(lo) != math.Round(hi) {
		end = fmt.Sprintf("%.0f–%.0f s", lo, hi)
	}
	s := fmt.Sprintf("measured from the end of the warm-up (%g s) to the end of each run (%s)", d.Scenario.WarmupS, end)
	if a := d.Scenario.DurationS; a > 0 && a < hi {
		s += fmt.Sprintf(", the drain after sessions stop arriving (%g s) included", a)
	}
	return s
}

func fmtMs(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}

func pct(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

func leftShare(r *sim.Result) string {
	if r.ReturningRequests == 0 {
		return "–"
	}
	return fmt.Sprintf("%s (%d)", pct(r.LeftLastClusterShare), r.ReturningRequests)
}

// failed is the failed cell: the count, then the causes in brackets,
// "236 (all 503)" for one cause and "12 (503: 10, refused: 2)" for
// several (cause first, so that no two numbers stand side by side).
func failed(r *sim.Result) string {
	if r.Failed == 0 {
		return "0"
	}
	type cause struct {
		name string
		n    int64
	}
	var causes []cause
	f := r.Failures
	for _, x := range []cause{{"503", f.Rejected}, {"400", f.BadRequest}, {"refused", f.Refused}, {"stream", f.Stream}} {
		if x.n > 0 {
			causes = append(causes, x)
		}
	}
	if len(causes) == 1 && causes[0].n == r.Failed {
		return fmt.Sprintf("%d (all %s)", r.Failed, causes[0].name)
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = fmt.Sprintf("%s: %d", c.name, c.n)
	}
	return fmt.Sprintf("%d (%s)", r.Failed, strings.Join(parts, ", "))
}

// Label is the policy's name in text tables. A policy read from an
// lb-config also shows the algorithm the config resolves to for the
// workload's models and whether it came from `default` (the models have
// no `models` entry): "pulsar-wait-and-widen.json (power-of-n via
// default)", "prod.json (pulsar-wait-and-widen)", "prod.json (mixed, 1 of
// 2 models via default)". Control characters are escaped (ui.Printable).
func Label(r *sim.Result) string {
	name := ui.Printable(r.Policy)
	if len(r.Models) == 0 {
		return name
	}
	viaDefault := 0
	for _, m := range r.Models {
		if m.Entry == sim.EntryDefault {
			viaDefault++
		}
	}
	alg := ui.Printable(r.Algorithm)
	switch viaDefault {
	case 0:
		return fmt.Sprintf("%s (%s)", name, alg)
	case len(r.Models):
		return fmt.Sprintf("%s (%s via default)", name, alg)
	}
	return fmt.Sprintf("%s (%s, %d of %d models via default)", name, alg, viaDefault, len(r.Models))
}

// table writes an aligned table (ui.Table): the first `left` columns
// left-aligned, the others right-aligned, the header styled.
func table(b *strings.Builder, st *ui.Styles, head []string, rows [][]string, left int) {
	right := map[int]bool{}
	for i := left; i < len(head); i++ {
		right[i] = true
	}
	b.WriteString(ui.Table{Headers: head, Rows: rows, Right: right}.Render(st))
}

// writeHeader writes the scenario lines that open every text report.
func writeHeader(b *strings.Builder, d *Document, st *ui.Styles) {
	s := &d.Scenario
	// Names and the description come from files: no control characters
	// to the terminal (a multi-line description keeps its lines).
	fmt.Fprintf(b, "%s %s\n", st.Bold.Render("scenario"), ui.Printable(s.Name))
	if s.Description != "" {
		for _, l := range strings.Split(strings.TrimRight(s.Description, "\n"), "\n") {
			fmt.Fprintf(b, "  %s\n", ui.Printable(l))
		}
	}
	fmt.Fprintf(b, "  seed %d, TTFT SLO %g ms, warm-up %g s, %d clusters\n", s.Seed, s.SLOTTFTMs, s.WarmupS, len(s.Clusters))
	if t := s.Trace; t != nil {
		fmt.Fprintf(b, "  trace: %s, %d-token blocks, %d requests", t.Format, t.BlockTokens, t.Records)
		if t.Format != sim.TraceCSV {
			fmt.Fprintf(b, " in %d sessions (%d follow-ups, %d branches)", t.Sessions, t.FollowUps, t.Branches)
		}
		b.WriteString("\n")
	} else {
		fmt.Fprintf(b, "  KV cache blocks of %d tokens\n", s.BlockTokens)
	}
	fmt.Fprintf(b, "  %s\n", windowNote(d))
}

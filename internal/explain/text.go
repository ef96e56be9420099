package explain

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/ui"
)

// DefaultWidth is the layout width (columns) when the terminal width is
// unknown (output piped to a file or another program).
const DefaultWidth = 100

// MinWidth is the narrowest layout Text produces; narrower requests are
// laid out at MinWidth.
const MinWidth = 60

// MaxWidth is the widest layout Text produces; wider requests are laid out
// at MaxWidth. lipgloss pads every wrapped line to the width before lcctl
// trims it, so an unbounded width (--width 2147483647, a bogus $COLUMNS)
// would allocate gigabytes.
const MaxWidth = 1000

// Options control the text layout.
type Options struct {
	// Width is the number of terminal columns (DefaultWidth when ≤ 0;
	// clamped to MinWidth–MaxWidth).
	Width int
	// Timeline renders the decisions over time (part 5).
	Timeline bool
	// Chart adds the open-set bar chart to the timeline (meant for
	// terminals).
	Chart bool
}

// Text writes the human explanation of rep: the header (model, algorithm
// and why, effective settings, session), the affinity order before and
// after promotion with the group and the open set, the per-cluster table,
// the decision, the timeline (Options.Timeline) and the comparison
// (rep.Compare). Styles come from st (plain text when colour is off); the
// layout fits Options.Width columns.
func Text(w io.Writer, rep *Report, st *ui.Styles, o Options) error {
	if o.Width <= 0 {
		o.Width = DefaultWidth
	}
	o.Width = min(max(o.Width, MinWidth), MaxWidth)
	p := &printer{st: st, o: o, rep: rep}
	if rep.Provenance != nil {
		p.provenance(rep.Provenance)
	}
	p.run(&rep.Run, true)
	if rep.Span != nil {
		p.spanComparison(rep.Span)
	}
	if rep.Compare != nil {
		p.compare(rep.Compare)
	}
	out := p.b.String()
	if !st.Color {
		out = trimTrailingSpaces(out)
	}
	_, err := io.WriteString(w, out)
	return err
}

func trimTrailingSpaces(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n")
}

type printer struct {
	b   strings.Builder
	st  *ui.Styles
	o   Options
	rep *Report
}

func (p *printer) title(s string) {
	if p.b.Len() > 0 {
		p.b.WriteByte('\n')
	}
	for _, l := range strings.Split(lipgloss.NewStyle().Width(p.o.Width).Render(s), "\n") {
		p.b.WriteString(p.st.Header.Render(strings.TrimRight(l, " ")))
		p.b.WriteByte('\n')
	}
}

// kv writes "label  value" lines with the value wrapped at the width and
// continuation lines indented under it.
func (p *printer) kv(label string, lines ...string) {
	const lw = 12
	vw := p.o.Width - lw - 2
	for i, l := range lines {
		lab := ""
		if i == 0 {
			lab = label
		}
		wrapped := strings.Split(lipgloss.NewStyle().Width(vw).Render(l), "\n")
		for j, wl := range wrapped {
			if j > 0 || i > 0 {
				lab = ""
			}
			p.b.WriteString("  ")
			p.b.WriteString(p.st.Bold.Render(fmt.Sprintf("%-*s", lw, lab)))
			p.b.WriteString(strings.TrimRight(wl, " "))
			p.b.WriteByte('\n')
		}
	}
}

func (p *printer) para(s string) { p.hanging(s, "") }

// hanging writes s wrapped at the width, indented by two spaces, with
// continuation lines indented by len(indent) more.
func (p *printer) hanging(s, indent string) {
	for i, l := range strings.Split(lipgloss.NewStyle().Width(p.o.Width-2-len(indent)).Render(s), "\n") {
		p.b.WriteString("  ")
		if i > 0 {
			p.b.WriteString(indent)
		}
		p.b.WriteString(strings.TrimRight(l, " "))
		p.b.WriteByte('\n')
	}
}

func (p *printer) run(r *Run, main bool) {
	rep := p.rep
	head := "lcctl explain: model " + rep.Model + " at " + fmtMs(lb.Millis(rep.Request.ElapsedMs))
	if rep.Model == "" {
		head = "lcctl explain at " + fmtMs(lb.Millis(rep.Request.ElapsedMs))
	}
	p.title(head)
	p.header(r)
	switch {
	case r.Config != nil && r.Decision.Balanced:
		p.orders(r)
		p.clusters(r)
	case r.Config != nil && rep.Snapshot.hasNonCandidates():
		// Rejected before balancing because no cluster is routable: the
		// table says why each cluster is not a candidate.
		p.clusters(r)
	}
	p.decision(r)
	if p.o.Timeline && len(r.Timeline) > 0 {
		p.timeline(r)
	}
	if main && len(rep.Notes) > 0 {
		p.title("Notes")
		for _, n := range rep.Notes {
			p.hanging("- "+n, "  ")
		}
	}
}

// ---- part 1: header -------------------------------------------------

func (p *printer) header(r *Run) {
	rep := p.rep
	res := &r.Resolution
	cfgLine := ui.Printable(res.ConfigFile)
	switch {
	case cfgLine == "":
		cfgLine = "none: Stargate's permissive default (E6)"
	case res.AlgorithmConfigFile:
		cfgLine += " (one algorithm object, --algorithm-config)"
	}
	p.kv("Config", cfgLine)
	if r.Config == nil {
		lines := []string{"none: the request is rejected before an algorithm is chosen"}
		if res.Expression != nil {
			// A parameter was refused only for these classes; unavailable
			// comes before the overlay.
			switch r.Decision.Code {
			case "unknown_parameter", "not_applicable", "invalid_value", "inert_value":
				lines = append(lines, expressionLines(res.Expression, true)...)
			default:
				lines = append(lines, expressionLines(res.Expression, false)...)
			}
		}
		p.kv("Algorithm", lines...)
	} else {
		p.kv("Algorithm", algorithmLines(r)...)
		p.kv("Settings", settingsLines(r)...)
		p.kv("Session", sessionLines(rep, r)...)
	}
	p.kv("Request", requestLines(&rep.Request)...)
}

func algorithmLines(r *Run) []string {
	res := &r.Resolution
	name := r.Config.Algorithm.String()
	if res.Spelling != "" && res.Spelling != name {
		name += " (written " + res.Spelling + ")"
	}
	where, why := res.Path, ""
	switch {
	case strings.HasPrefix(res.Rule, "E2 model"):
		why = "the model's own entry"
		if res.AlgorithmConfigFile {
			where, why = "the given algorithm object", "--algorithm-config"
		}
	case strings.HasPrefix(res.Rule, "E2 default"):
		why = "no models entry for the model; default settings"
	case strings.HasPrefix(res.Rule, "E3.1"):
		why = "x-routing-method names the model's own algorithm"
		if res.AlgorithmConfigFile {
			where = "the given algorithm object"
		}
	case strings.HasPrefix(res.Rule, "E3"):
		why = "x-routing-method override"
	}
	if rule, _, _ := strings.Cut(res.Rule, " "); rule != "" {
		why += ", " + rule
	}
	lines := []string{name + " ← " + where + " (" + why + ")"}
	if res.RoutingMethod != nil {
		lines = append(lines, "x-routing-method "+strconv.Quote(*res.RoutingMethod))
	}
	if res.Expression != nil {
		lines = append(lines, expressionLines(res.Expression, false)...)
	}
	return lines
}

// expressionLines shows a routing expression's token and, per parameter,
// the value written and the field's value before → after the overlay;
// with rejected, the first parameter without a change is the one the
// overlay refused.
func expressionLines(x *Expression, rejected bool) []string {
	lines := []string{fmt.Sprintf("routing expression: token %s (%s), %s", ui.Printable(x.Token), x.Algorithm,
		plural.Count(len(x.Parameters), "parameter", "parameters"))}
	reached := true
	for _, p := range x.Parameters {
		l := fmt.Sprintf("  %s=%s (%s)", ui.Printable(p.Key), ui.Printable(p.Value), p.Type)
		switch {
		case p.Before != nil && p.After != nil:
			l += fmt.Sprintf(": %s → %s", ui.Printable(*p.Before), ui.Printable(*p.After))
		case reached && rejected:
			l += ": rejected"
			reached = false
		default:
			l += ": not applied"
		}
		lines = append(lines, l)
	}
	return lines
}

func settingsLines(r *Run) []string {
	c := r.Config
	d := &r.Decision
	var out []string
	eff := func(eff *lb.Millis, configured uint64) string {
		s := strconv.FormatUint(configured, 10) + " ms"
		if eff != nil && float64(*eff) != float64(configured) {
			s = fmtMs(*eff) + " (configured " + s + ")"
		}
		return s
	}
	scale := func() string {
		s := fmtScale(c.CacheAffinityInputTokensScale)
		if d.PrefillScale != nil && *d.PrefillScale != c.CacheAffinityInputTokensScale {
			s = fmtScale(*d.PrefillScale) + " (configured " + s + ")"
		}
		return s
	}
	slo := func() string {
		if c.HasQueueSLO() {
			return fmt.Sprintf("queue SLO %d–%d ms", *c.MaxQueueTimeFloorMs, *c.MaxQueueTimeCeilMs)
		}
		return "no queue SLO"
	}
	ignores := func() string {
		f := summaryFields(c, false)
		if len(f) == 0 {
			return ""
		}
		return " · " + strings.Join(f, ", ")
	}
	switch c.Algorithm {
	case lb.WaitAndWiden:
		if c.CacheAffinityBackendSelectionCount <= 0 {
			out = append(out, "no affinity group (cache_affinity_backend_selection_count unset): no affinity wait, no discount, no session rules")
		} else {
			out = append(out, fmt.Sprintf("k %d (ring group, %d virtual nodes) · X %s · s %s",
				c.CacheAffinityBackendSelectionCount, c.CacheAffinityVirtualNodes, eff(d.AffinityWaitMs, c.CacheAffinityWaitMs), scale()))
		}
		out = append(out, fmt.Sprintf("comparator %s · n %d · bucket %d ms, unlock factor %s · max_queued %d",
			c.Comparator, c.N, c.TTFTBucketSizeMs, fmtScale(c.NextBucketUnlockFactor), c.MaxQueued))
		out = append(out, slo()+ignores())
	case lb.PulsarWaitAndWiden:
		k := max(c.CacheAffinityBackendSelectionCount, 1)
		band := "S = effective X"
		if c.BandWidenIntervalMs != nil {
			band = "S " + strconv.FormatUint(*c.BandWidenIntervalMs, 10) + " ms"
		}
		if d.BandIntervalMs != nil && (c.BandWidenIntervalMs == nil || float64(*c.BandWidenIntervalMs) != float64(*d.BandIntervalMs)) {
			band += " → " + fmtMs(*d.BandIntervalMs)
		}
		out = append(out, fmt.Sprintf("k %d · X %s · s %s · %s", k, eff(d.AffinityWaitMs, c.CacheAffinityWaitMs), scale(), band))
		group := "rank 1 waits"
		if k > 1 {
			group = fmt.Sprintf("ranks 1–%d wait", k)
		}
		bandLine := fmt.Sprintf("bands: %s for X; then ranks 1–%d open, and 4, 8, 16, … more ranks every S", group, k+2)
		if d.BandIntervalMs != nil && float64(*d.BandIntervalMs) == 0 {
			bandLine = fmt.Sprintf("bands: %s for X; S is 0, so every rank opens at X", group)
		}
		out = append(out, bandLine)
		out = append(out, fmt.Sprintf("n %d · bucket %d ms, unlock factor %s · max_queued %d · fallback_max_queued %d",
			c.N, c.TTFTBucketSizeMs, fmtScale(c.NextBucketUnlockFactor), c.MaxQueued, c.FallbackMaxQueued))
		out = append(out, slo()+" · KV check "+onOff(c.ConsiderKVFreeTokens)+" · weight "+c.RendezvousWeight.String()+ignores())
	case lb.Pulsar:
		out = append(out, "weight "+c.RendezvousWeight.String()+" · KV check "+onOff(c.ConsiderKVFreeTokens)+" · first feasible cluster in ranking order, never waits")
	case lb.PowerOfN:
		out = append(out, fmt.Sprintf("sample_count %d · comparator %s", c.SampleCount, c.Comparator))
	case lb.RoundRobin:
		out = append(out, "every candidate in turn (this run starts a fresh counter)")
	case lb.Random:
		out = append(out, "uniform over the candidates")
	}
	if common := summaryFields(c, true); len(common) > 0 {
		out = append(out, strings.Join(common, " · "))
	}
	return out
}

// summaryFields lists the registry fields marked Summary that c's
// algorithm parses and that are set, common fields (§6.1) or the
// algorithm's own: a bool by name when true, any other field as "name
// value" when set (docs/explain.md, Part 1).
func summaryFields(c *lb.AlgorithmConfig, common bool) []string {
	var out []string
	for _, f := range lb.Fields() {
		if !f.Summary || f.Common() != common || !f.Parsed.Has(c.Algorithm) {
			continue
		}
		switch f.Type {
		case lb.TypeBool:
			if f.Bool(c) {
				out = append(out, f.Name)
			}
		case lb.TypeF64:
			if x, ok := f.Float(c); ok {
				out = append(out, f.Name+" "+fmtNum(x))
			}
		default:
			if s, ok := f.Text(c); ok {
				out = append(out, f.Name+" "+s)
			}
		}
	}
	return out
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func sessionLines(rep *Report, r *Run) []string {
	c := r.Config
	d := &r.Decision
	hint := rep.Request.LastClusterID
	if c.Algorithm != lb.WaitAndWiden && c.Algorithm != lb.PulsarWaitAndWiden {
		if hint != "" {
			return []string{c.Algorithm.String() + " has no session rules: x-stargate-last-cluster-id " + hint + " is ignored"}
		}
		return []string{c.Algorithm.String() + " has no session rules"}
	}
	if !c.LastClusterAffinity {
		s := "last_cluster_affinity off: not classified"
		if hint != "" {
			s += "; x-stargate-last-cluster-id " + hint + " is ignored"
		}
		return []string{s}
	}
	if d.SessionState == nil {
		switch {
		case !d.Balanced:
			return []string{"not classified: the request did not reach the load balancer"}
		case rep.Request.CacheAffinityKey == "":
			return []string{"not classified: no x-cache-affinity-key (session rules need one); configured X and s apply"}
		case c.Algorithm == lb.WaitAndWiden && c.CacheAffinityBackendSelectionCount <= 0:
			return []string{"not classified: no affinity group (cache_affinity_backend_selection_count unset)"}
		case len(d.OriginalOrder) == 0:
			return []string{"not classified: there is no affinity order (nothing ranked or no candidates)"}
		}
		return []string{"not classified"}
	}
	pinned := ""
	if rep.Request.FirstClassification != nil {
		pinned = " (pinned by the request's first decision)"
	}
	switch *d.SessionState {
	case "new":
		return []string{"new" + pinned + ": no x-stargate-last-cluster-id → affinity wait 0, prefill scale 1, order unchanged (overflows at once)"}
	case "stale":
		s := "stale" + pinned + ": "
		if hint != "" && pinned == "" {
			s += "last cluster " + hint + " is not a candidate"
			if i := rep.Snapshot.Index(hint); i >= 0 {
				s += " (" + rep.Snapshot.Clusters[i].Status.String() + ")"
			}
			s += " → "
		}
		return []string{s + "routed as new (affinity wait 0, prefill scale 1, order unchanged)"}
	}
	s := "returning" + pinned + ": "
	inSnap := false // the hint names a candidate (present and routable)
	if i := rep.Snapshot.Index(hint); i >= 0 {
		inSnap = rep.Snapshot.Clusters[i].Status.Routable()
	}
	switch {
	case d.Promoted:
		s += "last cluster " + hint + " promoted to the front of the affinity order"
	case hint == "" || !inSnap:
		s += "the last cluster is no longer a candidate; order kept"
	case len(d.OriginalOrder) > 0 && d.OriginalOrder[0] == hint:
		s += "last cluster " + hint + " is already first (not promoted)"
	default:
		s += "last cluster " + hint + " is not in the ranking (no valid weight); order kept"
	}
	return []string{s, "configured affinity wait X and prefill scale s apply"}
}

func requestLines(q *Request) []string {
	var a []string
	if q.CacheAffinityKey != "" {
		a = append(a, "affinity key "+q.CacheAffinityKey)
	} else {
		a = append(a, "no affinity key")
	}
	if q.RoutingKey != "" {
		a = append(a, "routing key "+q.RoutingKey)
	}
	if q.LastClusterID != "" {
		a = append(a, "last cluster "+q.LastClusterID)
	} else {
		a = append(a, "no last cluster")
	}
	tokens := plural.Count(q.InputTokens, "input token", "input tokens")
	b := []string{tokens, "priority " + strconv.FormatUint(uint64(q.Priority), 10)}
	if q.RequestSLOMs != nil {
		b = append(b, "request SLO "+strconv.FormatUint(*q.RequestSLOMs, 10)+" ms")
	}
	if q.MaxWaitMs != nil {
		b = append(b, "x-max-wait-ms "+strconv.FormatUint(*q.MaxWaitMs, 10))
	} else {
		b = append(b, "no x-max-wait-ms (timed waits end at 60000 ms)")
	}
	if len(q.ExcludedClusterIDs) > 0 {
		b = append(b, "excluded (earlier attempts) "+list(q.ExcludedClusterIDs))
	}
	if q.FirstClassification != nil {
		b = append(b, "first classification "+*q.FirstClassification)
	}
	lines := []string{strings.Join(a, " · "), strings.Join(b, " · ")}
	if q.Error != nil {
		lines = append(lines, fmt.Sprintf("HTTP %d %s: %s", q.Error.Status, q.Error.Code, q.Error.Message))
	}
	return lines
}

// ---- part 2: affinity order ------------------------------------------

func (p *printer) orders(r *Run) {
	d := &r.Decision
	c := r.Config
	p.title("Affinity order")
	at := fmtMs(lb.Millis(d.ElapsedMs))
	switch c.Algorithm {
	case lb.WaitAndWiden, lb.PulsarWaitAndWiden, lb.Pulsar:
	default:
		p.kv("order", c.Algorithm.String()+" has no affinity order: every candidate competes")
		p.kv("open set", list(d.OpenSet)+"  (at "+at+")")
		return
	}
	if d.AffinityOrder == nil {
		why := "no affinity order for this request"
		switch {
		case c.Algorithm == lb.WaitAndWiden && p.rep.Request.CacheAffinityKey == "":
			why = "no affinity group: the request has no x-cache-affinity-key"
		case c.Algorithm == lb.WaitAndWiden:
			why = "no affinity group: cache_affinity_backend_selection_count is unset"
		case p.rep.Snapshot != nil && len(p.rep.Snapshot.Clusters) > 0:
			why = "nothing is ranked: no candidate has a valid " + c.RendezvousWeight.String() + " weight"
		}
		p.kv("order", why)
		p.kv("open set", list(d.OpenSet)+"  (at "+at+")")
		return
	}
	kind := "Pulsar ranking"
	if c.Algorithm == lb.WaitAndWiden {
		kind = "ring group"
	}
	p.kv("before", list(d.OriginalOrder)+"  ("+kind+")")
	if c.Algorithm == lb.WaitAndWiden && d.Trace != nil && d.Trace.Ring != nil {
		p.kv("ring walk", list(d.Trace.Ring.Walk))
	}
	after := list(d.AffinityOrder)
	switch {
	case d.Promoted:
		after += "  (last cluster promoted)"
	case equalIDs(d.AffinityOrder, d.OriginalOrder):
		after += "  (unchanged)"
	}
	p.kv("after", after)
	if c.Algorithm != lb.Pulsar {
		p.kv("group", list(d.AffinityGroup)+"  (k = "+strconv.Itoa(len(d.AffinityGroup))+")")
	}
	open := list(d.OpenSet) + "  (at " + at + ")"
	if c.Algorithm == lb.Pulsar {
		open = list(d.OpenSet) + "  (walked in ranking order)"
	}
	p.kv("open set", open)
}

// ---- part 4: decision -------------------------------------------------

func (p *printer) decision(r *Run) {
	d := &r.Decision
	p.title("Decision")
	p.para(decisionSentence(d, true))
	if x := d.Rejection; x != nil {
		// Stargate's answer, one item a line: status and error-code header,
		// the rule, the JSON body, the value it records as requested.
		lines := []string{fmt.Sprintf("HTTP %d, x-stargate-error-code: %s", x.Status, x.ErrorCode)}
		if x.Rule != "" {
			lines = append(lines, "rule "+x.Rule)
		}
		lines = append(lines, "body "+ui.Printable(string(x.Body)), "requested "+strconv.Quote(x.Requested))
		p.kv("Stargate", lines...)
	}
	if r.Then == nil || d.Outcome != lb.OutcomeWait {
		return
	}
	// Follow the waits to where they end (the timeline's last step: a
	// dispatch, a reject or the wait budget), so the block says where the
	// request goes, not only what it does next; a long chain keeps its
	// first steps and its end.
	then := []*Decision{r.Then}
	if len(r.Timeline) > 2 {
		then = then[:0]
		for i := range r.Timeline[1:] {
			then = append(then, &r.Timeline[1+i])
		}
	}
	for i, t := range then {
		if len(then) > maxThenSteps && i == maxThenSteps-1 {
			p.para(fmt.Sprintf("… %d more waits (--timeline lists every step).", len(then)-maxThenSteps))
			t = then[len(then)-1]
		}
		p.para("Then at " + fmtMs(lb.Millis(t.ElapsedMs)) + ": " + decisionSentence(t, false))
		if len(then) > maxThenSteps && i == maxThenSteps-1 {
			break
		}
	}
}

// maxThenSteps is how many "Then at" sentences the decision block prints
// at most (the last of them is the timeline's end).
const maxThenSteps = 4

// decisionSentence says what the proxy does with the request; proxyNote
// adds how a timed wait is carried out.
func decisionSentence(d *Decision, proxyNote bool) string {
	switch d.Outcome {
	case lb.OutcomeDispatch:
		s := "Dispatch to " + choiceText(d)
		if len(d.Choices) <= 1 {
			s += fmt.Sprintf(" (rank depth %d", d.RankDepth)
		} else {
			s += fmt.Sprintf(" (sampled; this run drew %s at rank depth %d", d.Cluster, d.RankDepth)
		}
		if d.Phase != lb.PhaseNone {
			s += ", " + d.Phase.String() + " phase"
		}
		if d.SelectedAfterKVFreeTokensSkip {
			s += ", after a higher-ranked cluster failed the KV check"
		}
		return s + ")."
	case lb.OutcomeWait:
		if d.GenericRetry {
			return fmt.Sprintf("Nothing can take the request now (%s); with x-max-wait-ms the proxy retries every 1–9 ms until %s, then answers 503.",
				reasonText(d.Reason), fmtMs(*d.RetryDeadlineMs))
		}
		s := "Wait until " + fmtMs(*d.RetryAtMs) + ": " + reasonText(d.Reason)
		if d.WaitMs != nil && float64(*d.RetryAtMs) < d.ElapsedMs+float64(*d.WaitMs) {
			s += " at " + fmtMs(lb.Millis(d.ElapsedMs+float64(*d.WaitMs))) + ", but the wait budget ends first"
		}
		if !proxyNote {
			return s + "."
		}
		return s + ". (The proxy re-checks every " + fmtMs(*d.SleepMs) + " on a fresh snapshot; with this snapshot nothing changes before then.)"
	case lb.OutcomeReject:
		s := fmt.Sprintf("Reject: HTTP %d %s — ", d.HTTPStatus, d.Code)
		switch {
		case d.Kind != nil && *d.Kind == lb.KindWait:
			s += "the wait budget ends before the load balancer's wait does (" + reasonText(d.Reason) + "); "
		case d.Balanced && d.Reason != lb.ReasonNone:
			s += reasonText(d.Reason) + "; "
		}
		return s + d.Message + "."
	case lb.OutcomeError:
		return fmt.Sprintf("Error: HTTP %d %s — %s.", d.HTTPStatus, d.Code, d.Message)
	}
	return d.Message
}

// ---- part 5: timeline -------------------------------------------------

func (p *printer) timeline(r *Run) {
	p.title("Timeline")
	n := 0
	if p.rep.Snapshot != nil {
		n = len(p.rep.Snapshot.Clusters)
	}
	rows := make([][]string, len(r.Timeline))
	for i := range r.Timeline {
		d := &r.Timeline[i]
		open := "–"
		if d.Balanced {
			open = short(d.OpenSet, 8)
		}
		rows[i] = []string{fmtNum(d.ElapsedMs), open, outcomeShort(d), whyShort(d)}
	}
	p.table([]string{"elapsed ms", "open set", "decision", "why"}, rows, func(row int) lipgloss.Style {
		if r.Timeline[row].Outcome == lb.OutcomeDispatch {
			return p.st.OK
		}
		return lipgloss.Style{}
	})
	if r.TimelineTruncated {
		p.para("(truncated: the timeline stops after " + strconv.Itoa(len(r.Timeline)) + " decisions)")
	}
	if p.o.Chart && n > 0 {
		p.chart(r, n)
	}
}

// chart draws the size of the open set at each timeline point as a bar.
func (p *printer) chart(r *Run, n int) {
	p.b.WriteByte('\n')
	p.b.WriteString("  " + p.st.Bold.Render("Open set over time") + "\n")
	bw := min(max(n, 10), 40)
	lw := 0
	for i := range r.Timeline {
		lw = max(lw, len(fmtNum(r.Timeline[i].ElapsedMs)))
	}
	filled := p.st.Renderer().NewStyle().Foreground(lipgloss.Color("10"))
	empty := p.st.Renderer().NewStyle().Faint(true)
	if !p.st.Color {
		filled, empty = lipgloss.Style{}, lipgloss.Style{}
	}
	for i := range r.Timeline {
		d := &r.Timeline[i]
		k := len(d.OpenSet)
		f := 0
		if n > 0 {
			f = (k*bw + n - 1) / n
		}
		bar := filled.Render(strings.Repeat("█", f)) + empty.Render(strings.Repeat("░", bw-f))
		tail := fmt.Sprintf("%d/%d", k, n)
		if d.Outcome == lb.OutcomeDispatch {
			tail += " → " + choiceText(d)
		}
		prefix := fmt.Sprintf("  %*s ms │", lw, fmtNum(d.ElapsedMs))
		room := p.o.Width - lipgloss.Width(prefix) - bw - 2
		p.b.WriteString(prefix + bar + "│ " + truncate(tail, room) + "\n")
	}
}

// truncate shortens s to at most w columns, ending in "…" when cut.
func truncate(s string, w int) string { return ui.Truncate(s, w) }

// table renders a borderless table with a header rule, fitted to the
// width; rowStyle styles whole rows (zero Style = default).
func (p *printer) table(headers []string, rows [][]string, rowStyle func(int) lipgloss.Style) {
	p.b.WriteString(ui.Table{Headers: headers, Rows: rows, Rule: true, Width: p.o.Width - 1, Indent: " ", RowStyle: rowStyle}.Render(p.st))
}

// naturalWidth is the width of a table rendered without a width limit.
func naturalWidth(headers []string, rows [][]string) int {
	w := make([]int, len(headers))
	for i, h := range headers {
		w[i] = lipgloss.Width(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if i < len(w) {
				w[i] = max(w[i], lipgloss.Width(c))
			}
		}
	}
	total := 1
	for _, x := range w {
		total += x + 2
	}
	return total
}

// ---- part 6: comparison -------------------------------------------------

func (p *printer) compare(c *Comparison) {
	title := "Compare"
	if c.What == "flag" {
		title += ": the same request with last_cluster_affinity off and on"
	} else {
		title += ": the same request with two configs"
	}
	p.title(title)
	rows := CompareRows(p.rep, c)
	cells := make([][]string, len(rows))
	for i, r := range rows {
		mark := ""
		if r.Differs() {
			mark = "≠"
		}
		cells[i] = []string{r.Aspect, r.Left, r.Right, mark}
	}
	rowStyle := func(row int) lipgloss.Style {
		if rows[row].Differs() {
			return p.st.Warning
		}
		return lipgloss.Style{}
	}
	table, labels := p.compareTable(c, 0, "", cells, rowStyle)
	p.b.WriteString(table)
	n := 0
	for _, r := range rows {
		if r.Differs() {
			n++
		}
	}
	fields := differingFields(c)
	if len(fields) > 0 {
		p.b.WriteByte('\n')
		place := func(r *Run) string {
			if r.Resolution.Path == "" {
				return "the algorithm object"
			}
			return r.Resolution.Path
		}
		lp, rp := place(&c.Left), place(&c.Right)
		switch {
		case c.Left.Resolution.Path == "" && c.Right.Resolution.Path == "":
			p.para("Config fields that differ between the two algorithm objects (--algorithm-config):")
		case lp == rp:
			p.para("Config fields that differ, in the entry " + lp + " of both configs:")
		default:
			p.para("Config fields that differ, in the entries " + lp + " and " + rp + ":")
		}
		cells := make([][]string, len(fields))
		for i, d := range fields {
			cells[i] = []string{d.f.Name, d.leftText, d.rightText}
		}
		table, _ = p.compareTable(c, labels, "field", cells, func(int) lipgloss.Style { return p.st.Warning })
		p.b.WriteString(table)
	}
	nf := plural.Count(len(fields), "config field", "config fields")
	switch {
	case n == 0 && len(fields) == 0:
		p.para("No difference: both runs decide the same at every step.")
	case n == 0:
		p.para("Both runs decide the same at every step; the entries differ in " + nf + ".")
	case len(fields) == 0:
		p.para(plural.Count(n, "aspect", "aspects") + " differ (marked ≠).")
	default:
		p.para(plural.Count(n, "aspect", "aspects") + " (marked ≠) and " + nf + " differ.")
	}
}

// compareTable renders a table of the comparison whose first column is
// headed first and whose next two are the two runs, with a mark column
// after them when the rows have four cells. The runs' headers are the
// first of labelChoices(c) from index from on that the table shows whole
// and distinct (the table cuts headers to fit the width, and two labels
// that differ only at their end, ON.json and ON.json.bak, would read the
// same); it returns the index used, so that a later table starts from
// the same labels.
func (p *printer) compareTable(c *Comparison, from int, first string, cells [][]string, rowStyle func(int) lipgloss.Style) (string, int) {
	render := func(l, r string) (string, bool) {
		headers := []string{first, l, r}
		if len(cells) > 0 && len(cells[0]) > 3 {
			headers = append(headers, "")
		}
		out := ui.Table{Headers: headers, Rows: cells, Rule: true, Width: p.o.Width - 1, Indent: " ", RowStyle: rowStyle}.Render(p.st)
		head, _, _ := strings.Cut(ui.StripANSI(out), "\n")
		i := strings.Index(head, l)
		return out, l != r && i >= 0 && strings.Contains(head[i+len(l):], r)
	}
	choices := labelChoices(c)
	try := func(i int) (string, bool) { return render(choices[i][0], choices[i][1]) }
	if out, ok := try(from); ok || from == len(choices)-1 {
		return out, from
	}
	// The cuts narrow step by step, and a table that shows one pair whole
	// shows the narrower ones whole too: search for the widest that fits
	// among from+1 … len-2 (the last is the flag names, the fallback).
	lo, hi := from+1, len(choices)-1 // choices[hi] fits or is the fallback
	for lo < hi {
		mid := (lo + hi) / 2
		if _, ok := try(mid); ok {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	out, _ := try(hi)
	return out, hi
}

// labelChoices are the header pairs a comparison table tries, widest
// first: the runs' labels; both cut in the middle to one width
// (cutMiddle: their beginning and their end, where names that share a
// stem differ), from one column narrower than the wider label down to
// minCutLabel, skipping widths at which the cuts read the same; last
// "--config" and "--compare" (config) or "off" and "on" (flag).
func labelChoices(c *Comparison) [][2]string {
	left, right := c.Left.Label, c.Right.Label
	out := [][2]string{{left, right}}
	for w := max(ui.Width(left), ui.Width(right)) - 1; w >= minCutLabel; w-- {
		if l, r := cutMiddle(left, w), cutMiddle(right, w); l != r && [2]string{l, r} != out[len(out)-1] {
			out = append(out, [2]string{l, r})
		}
	}
	if c.What == "flag" {
		return append(out, [2]string{"off", "on"})
	}
	return append(out, [2]string{"--config", "--compare"})
}

// minCutLabel is the narrowest a comparison label is cut to (columns,
// the "…" included) before the flag names replace the labels.
const minCutLabel = 8

// cutMiddle shortens s to at most w terminal columns by replacing its
// middle with "…", keeping a third of the room for its beginning and the
// rest for its end (where file names that share a stem differ: -on.json,
// .json.bak); s as it is when it fits.
func cutMiddle(s string, w int) string {
	if ui.Width(s) <= w {
		return s
	}
	rs := []rune(s)
	room := w - 1 // the columns left beside "…"
	head, used := 0, 0
	for head < len(rs) && used+ui.Width(string(rs[head])) <= room/3 {
		used += ui.Width(string(rs[head]))
		head++
	}
	tail := len(rs)
	for tail > head && used+ui.Width(string(rs[tail-1])) <= room {
		tail--
		used += ui.Width(string(rs[tail]))
	}
	return string(rs[:head]) + "…" + string(rs[tail:])
}

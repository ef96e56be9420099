package explain

import (
	"math"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/lcctl/lcctl/internal/lb"
)

// ClusterRow is one row of the per-cluster table: one cluster in one
// selection phase (a cluster evaluated by the affinity phase and again by
// the global fallback has two rows), or a cluster no phase evaluated.
type ClusterRow struct {
	// Cluster is the id; Last marks the request's last cluster.
	Cluster string
	Last    bool
	// Rank is the 1-based position in the (promoted) affinity order, 0
	// when the cluster is not in it.
	Rank int
	// Phase is the phase the row describes (PhaseNone: not evaluated).
	Phase lb.Phase
	// Scale is the phase's prefill multiplier.
	Scale float64
	// Candidate is the engine's trace of the cluster in Phase (nil when
	// not evaluated); Estimated reports whether it carries TTFT estimates
	// (not for plain pulsar's walk, excluded or gated candidates).
	Candidate *lb.CandidateTrace
	Estimated bool
	// MaxQueued is the phase's admission slack (requests).
	MaxQueued uint64
	// Stats are the cluster's snapshot statistics; RTTMs its RTT.
	Stats Stats
	RTTMs float64
	// Feasibility is the Pulsar gate result; HasFeasibility whether the
	// algorithm has the gate (pulsar, pulsar-wait-and-widen) and KVGate
	// whether its KV check is on (consider_kv_free_tokens).
	Feasibility    lb.Feasibility
	HasFeasibility bool
	KVGate         bool
	// Excluded: the request already tried the cluster.
	Excluded bool
	// Verdict is a short reason for the cluster's fate in this row;
	// Chosen marks a row whose cluster can be (or was) chosen.
	Verdict string
	Chosen  bool
}

// ClusterRows lays out the per-cluster table of run r for rep: clusters
// in the affinity order first, then the rest (wait-and-widen: in ring-walk
// order; otherwise in snapshot order), each with one row per phase that
// evaluated it. A cluster whose status is not routable gets one row with
// the verdict "not a candidate: inactive" (or "unknown"). Every value
// comes from the decision's trace and the snapshot; nothing is recomputed.
func ClusterRows(rep *Report, r *Run) []ClusterRow {
	d := &r.Decision
	snap := rep.Snapshot
	if snap == nil || r.Config == nil {
		return nil
	}
	alg := r.Config.Algorithm
	pulsarFamily := alg == lb.Pulsar || alg == lb.PulsarWaitAndWiden
	order := d.AffinityOrder
	var ids []string
	seen := map[string]bool{}
	add := func(id string) {
		if !seen[id] && snap.Index(id) >= 0 {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, id := range order {
		add(id)
	}
	if d.Trace != nil && d.Trace.Ring != nil {
		for _, id := range d.Trace.Ring.Walk {
			add(id)
		}
	}
	for _, c := range snap.Clusters {
		add(c.ClusterID)
	}
	feas := map[string]lb.Feasibility{}
	ranked := map[string]bool{}
	if d.Trace != nil {
		for _, rt := range d.Trace.Ranking {
			feas[rt.ClusterID] = rt.Feasibility
			ranked[rt.ClusterID] = true
		}
	}
	excluded := map[string]bool{}
	for _, id := range rep.Request.ExcludedClusterIDs {
		excluded[id] = true
	}
	choice := map[string]Choice{}
	for _, c := range d.Choices {
		choice[c.ClusterID] = c
	}
	var rows []ClusterRow
	for _, id := range ids {
		c := &snap.Clusters[snap.Index(id)]
		base := ClusterRow{Cluster: id, Last: id == rep.Request.LastClusterID && id != "",
			Rank: indexOf(order, id) + 1, Stats: c.Stats, RTTMs: float64(c.RTTMs), Excluded: excluded[id]}
		if pulsarFamily {
			base.HasFeasibility, base.KVGate = true, r.Config.ConsiderKVFreeTokens
			base.Feasibility = feas[id]
			if excluded[id] {
				base.Feasibility = lb.RetryExcluded
			}
		}
		n := 0
		if d.Trace != nil {
			for pi := range d.Trace.Phases {
				pt := &d.Trace.Phases[pi]
				for ci := range pt.Candidates {
					ct := &pt.Candidates[ci]
					if ct.ClusterID != id {
						continue
					}
					row := base
					row.Phase, row.Scale, row.MaxQueued, row.Candidate = pt.Phase, pt.Scale, pt.MaxQueued, ct
					row.Estimated = pt.Phase != lb.PhaseRankWalk && !ct.Excluded && ct.Feasibility == lb.Eligible
					if ct.Feasibility != lb.Eligible {
						row.Feasibility = ct.Feasibility
					}
					row.Verdict, row.Chosen = candidateVerdict(rep, d, pt, ct, choice, r.Config)
					rows = append(rows, row)
					n++
				}
			}
		}
		if n == 0 {
			row := base
			if !c.Status.Routable() {
				// Not in Stargate's candidate slice at all (lb.Status).
				row.Verdict = "not a candidate: " + c.Status.String()
				rows = append(rows, row)
				continue
			}
			row.Verdict, row.Chosen = outsideVerdict(rep, r, id, ranked, choice)
			rows = append(rows, row)
		}
	}
	return rows
}

// candidateVerdict is the fate of a candidate inside one phase.
func candidateVerdict(rep *Report, d *Decision, pt *lb.PhaseTrace, ct *lb.CandidateTrace, choice map[string]Choice, cfg *lb.AlgorithmConfig) (string, bool) {
	decidingPhase := d.Outcome == lb.OutcomeDispatch && pt.Phase == d.Phase && pt.Result == lb.KindSelected
	switch {
	case ct.Excluded || ct.Feasibility == lb.RetryExcluded:
		return "excluded: tried by an earlier attempt", false
	case ct.Feasibility.KVSkip():
		return kvVerdict(rep, ct.Feasibility, ct.ClusterID), false
	case ct.Feasibility == lb.MissingRequiredInputTokens:
		return "KV check: the request has no input tokens", false
	case pt.Phase == lb.PhaseRankWalk:
		if ct.Chosen {
			return "chosen: first feasible in ranking order", true
		}
		return ct.Why, false
	case !ct.SLOEligible:
		return "queue " + fmtNum(float64(ct.QueueMs)) + " ms over the SLO limit " + fmtNum(float64(pt.QueueLimitMs)) + " ms", false
	case ct.Bucket < 0 && math.IsInf(float64(ct.BucketTTFTMs), 1):
		return "TTFT inf: no valid input TPS", false
	case ct.Bucket >= 0 && !ct.Unlocked:
		s := "bucket locked until " + fmtNum(float64(ct.UnlockAtMs)) + " ms"
		if !ct.HasCapacity {
			s += "; also full"
		}
		return s, false
	case !ct.HasCapacity:
		return "full: " + runningText(pt), false
	}
	if decidingPhase {
		if c, ok := choice[ct.ClusterID]; ok {
			if len(choice) == 1 {
				return "chosen", true
			}
			return "can win, p " + c.Fraction, true
		}
		if len(choice) == 0 && ct.Chosen {
			return "chosen", true
		}
		if ct.Sampled {
			return "sampled, lost", false
		}
		if cfg.Algorithm == lb.PulsarWaitAndWiden || cfg.Algorithm == lb.WaitAndWiden {
			return "unlocked, free; a better one wins", false
		}
		return "not chosen", false
	}
	if pt.Result == lb.KindSelected {
		return "free; another cluster was chosen", false
	}
	return "unlocked and free", false
}

func runningText(pt *lb.PhaseTrace) string {
	if pt.MaxQueued == 0 {
		return "no free slot (max_queued 0)"
	}
	return "queue full (max_queued " + strconv.FormatUint(pt.MaxQueued, 10) + ")"
}

// outsideVerdict is the fate of a cluster no phase evaluated.
func outsideVerdict(rep *Report, r *Run, id string, ranked map[string]bool, choice map[string]Choice) (string, bool) {
	d := &r.Decision
	cfg := r.Config
	if !d.Balanced {
		return "not evaluated: " + d.Code, false
	}
	excluded := indexOf(rep.Request.ExcludedClusterIDs, id) >= 0
	switch cfg.Algorithm {
	case lb.Pulsar, lb.PulsarWaitAndWiden:
		if d.Trace != nil && !ranked[id] {
			return "not ranked: no valid " + cfg.RendezvousWeight.String() + " weight", false
		}
	}
	if excluded {
		return "excluded: tried by an earlier attempt", false
	}
	if d.Trace != nil {
		for _, rt := range d.Trace.Ranking {
			if rt.ClusterID == id && rt.Feasibility.KVSkip() {
				return kvVerdict(rep, rt.Feasibility, id), false
			}
		}
	}
	switch cfg.Algorithm {
	case lb.Pulsar:
		if d.Outcome == lb.OutcomeDispatch {
			if d.Cluster == id {
				return "chosen: first feasible in ranking order", true
			}
			if indexOf(d.AffinityOrder, id) > indexOf(d.AffinityOrder, d.Cluster) {
				return "not reached: a higher-ranked cluster was chosen", false
			}
		}
		return "not chosen", false
	case lb.PulsarWaitAndWiden:
		if indexOf(d.OpenSet, id) < 0 {
			if d.AffinityWaitMs != nil && d.ElapsedMs < float64(*d.AffinityWaitMs) {
				return "outside the group until X (" + fmtMs(*d.AffinityWaitMs) + ")", false
			}
			return "not open yet: ranked below the open bands", false
		}
	case lb.WaitAndWiden:
		if indexOf(d.OpenSet, id) < 0 && d.AffinityWaitMs != nil {
			return "outside the group: global fallback at " + fmtMs(*d.AffinityWaitMs), false
		}
	case lb.Random, lb.RoundRobin, lb.PowerOfN:
		if c, ok := choice[id]; ok {
			if len(choice) == 1 {
				return "chosen", true
			}
			return "can win, p " + c.Fraction, true
		}
		if d.Cluster == id {
			return "chosen", true
		}
		return "not chosen", false
	}
	return "not evaluated", false
}

func kvVerdict(rep *Report, f lb.Feasibility, id string) string {
	if f == lb.MissingKVFreeTokens {
		return "KV check: no KV metrics"
	}
	free := uint64(0)
	if i := rep.Snapshot.Index(id); i >= 0 {
		free = rep.Snapshot.Clusters[i].Stats.KVCacheFreeTokens
	}
	return "KV check: " + strconv.FormatUint(free, 10) + " free < " + strconv.FormatUint(rep.Request.InputTokens, 10) + " tokens"
}

// clusterCells renders the cells of one row for the named columns.
func clusterCells(row *ClusterRow, cols []string) []string {
	out := make([]string, len(cols))
	ct := row.Candidate
	dash := "–"
	for i, c := range cols {
		v := dash
		switch c {
		case "cluster":
			v = row.Cluster
			if row.Last {
				v += "*"
			}
		case "rank":
			if row.Rank > 0 {
				v = strconv.Itoa(row.Rank)
			}
		case "phase":
			switch row.Phase {
			case lb.PhaseAffinity:
				v = "aff"
			case lb.PhaseGlobal:
				v = "global"
			case lb.PhaseOpen:
				v = "open"
			case lb.PhaseSample:
				v = "sample"
			case lb.PhaseRankWalk:
				v = "walk"
			}
		case "rtt":
			v = fmtNum(row.RTTMs)
		case "queue":
			if row.Estimated {
				v = fmtNum(float64(ct.QueueMs))
			}
		case "prefill":
			if row.Estimated {
				v = fmtNum(float64(ct.PrefillMs))
				if row.Scale != 1 {
					v += " ×" + fmtScale(row.Scale)
				}
			}
		case "ttft bkt":
			if row.Estimated {
				v = fmtNum(float64(ct.BucketTTFTMs))
			}
		case "ttft cmp":
			if row.Estimated {
				v = fmtNum(float64(ct.ComparatorTTFTMs))
			}
		case "bucket":
			if row.Estimated && ct.Bucket >= 0 {
				v = strconv.Itoa(ct.Bucket)
				if ct.Bucket > 0 || !ct.Unlocked {
					v += " @" + fmtNum(float64(ct.UnlockAtMs))
				}
			}
		case "running":
			st := &row.Stats
			lim := "?"
			if st.MaxEngineConcurrency > 0 {
				lim = strconv.FormatUint(st.MaxEngineConcurrency, 10)
			}
			v = strconv.FormatUint(st.NumRunningQueries, 10) + "/" + lim
		case "queued":
			st := &row.Stats
			if row.Estimated && st.MaxEngineConcurrency > 0 {
				q := uint64(0)
				if st.NumRunningQueries > st.MaxEngineConcurrency {
					q = st.NumRunningQueries - st.MaxEngineConcurrency
				}
				v = strconv.FormatUint(q, 10) + "/" + strconv.FormatUint(row.MaxQueued, 10)
			}
		case "kv":
			if row.HasFeasibility {
				switch row.Feasibility {
				case lb.Eligible:
					v = "ok"
					if !row.KVGate {
						v = "off"
					}
				case lb.RetryExcluded:
					v = "excl"
				case lb.MissingKVFreeTokens:
					v = "none"
				case lb.InsufficientKVFreeTokens:
					v = "low"
				case lb.MissingRequiredInputTokens:
					v = "no input"
				}
			}
		case "excl":
			v = ""
			if row.Excluded {
				v = "yes"
			}
		case "verdict":
			v = row.Verdict
		}
		out[i] = v
	}
	return out
}

// clusterLayouts are the ways to lay out the per-cluster table, widest
// first: all columns in one table, then split into estimates and
// admission/verdict, then into three tables. The first layout whose tables
// fit the width is used; the last one wraps if it must.
var clusterLayouts = [][][]string{
	{{"cluster", "rank", "phase", "rtt", "queue", "prefill", "ttft bkt", "ttft cmp", "bucket", "running", "queued", "kv", "excl", "verdict"}},
	{{"cluster", "rank", "phase", "rtt", "queue", "prefill", "ttft bkt", "ttft cmp", "bucket"},
		{"cluster", "phase", "running", "queued", "kv", "excl", "verdict"}},
	{{"cluster", "rank", "phase", "rtt", "queue", "prefill"},
		{"cluster", "phase", "ttft bkt", "ttft cmp", "bucket"},
		{"cluster", "phase", "running", "queued", "kv", "excl", "verdict"}},
}

// withoutKV drops the kv column for algorithms without the KV gate.
func withoutKV(cols []string) []string {
	out := make([]string, 0, len(cols))
	for _, c := range cols {
		if c != "kv" {
			out = append(out, c)
		}
	}
	return out
}

func (p *printer) clusters(r *Run) {
	rows := ClusterRows(p.rep, r)
	if len(rows) == 0 {
		return
	}
	p.title("Clusters at " + fmtMs(lb.Millis(r.Decision.ElapsedMs)))
	style := func(row int) lipgloss.Style {
		if rows[row].Chosen {
			return p.st.OK
		}
		return lipgloss.Style{}
	}
	cells := func(cols []string) [][]string {
		out := make([][]string, len(rows))
		for i := range rows {
			out[i] = clusterCells(&rows[i], cols)
		}
		return out
	}
	layout := clusterLayouts[len(clusterLayouts)-1]
	for _, l := range clusterLayouts {
		fits := true
		for _, cols := range l {
			if naturalWidth(cols, cells(cols)) > p.o.Width-1 {
				fits = false
				break
			}
		}
		if fits {
			layout = l
			break
		}
	}
	for i, cols := range layout {
		if !rows[0].HasFeasibility {
			cols = withoutKV(cols)
		}
		if i > 0 {
			p.b.WriteByte('\n')
		}
		p.table(cols, cells(cols), style)
	}
	var legend []string
	for _, row := range rows {
		if row.Last {
			legend = append(legend, "* last cluster")
			break
		}
	}
	legend = append(legend, "times in ms", "ttft bkt: TTFT used for buckets", "ttft cmp: TTFT used for comparison",
		"bucket N @T: unlocks at T", "running: running/max_engine_concurrency", "queued: requests above the limit/max_queued")
	p.para(p.st.Faint.Render(strings.Join(legend, " · ")))
}

package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/lcctl/lcctl/internal/sim"
	"github.com/lcctl/lcctl/internal/ui"
)

// FlagEffect is one algorithm simulated with last_cluster_affinity off
// and on.
type FlagEffect struct {
	// Algorithm is the canonical algorithm name.
	Algorithm string
	// Off and On are the two runs (policies "<algorithm>/lc-off" and
	// "<algorithm>/lc-on" of the comparison set).
	Off, On *sim.Result
}

// FlagEffects pairs the policies of a document that differ only in
// last_cluster_affinity (same source and algorithm, flag off and on), in
// document order. Policies without the flag, or without a partner, are
// left out.
func FlagEffects(d *Document) []FlagEffect {
	var out []FlagEffect
	index := map[string]int{}
	for _, r := range d.Policies {
		if r.LastClusterAffinity == nil {
			continue
		}
		k := r.Source + "\x00" + r.Algorithm
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, FlagEffect{Algorithm: r.Algorithm})
		}
		if *r.LastClusterAffinity {
			out[i].On = r
		} else {
			out[i].Off = r
		}
	}
	pairs := out[:0]
	for _, e := range out {
		if e.Off != nil && e.On != nil {
			pairs = append(pairs, e)
		}
	}
	return pairs
}

// Summary is the effect in one line: the share of hinted requests served
// away from their last cluster, KV cache reuse, TTFT p99 (ms) and goodput
// (requests/s), each as off → on.
func (e FlagEffect) Summary() string {
	pct := func(v float64) string { return strconv.FormatFloat(100*v, 'f', 1, 64) + "%" }
	return fmt.Sprintf("%s: left last cluster %s → %s, KV reuse %s → %s, TTFT p99 %s → %s ms, goodput %.2f → %.2f r/s",
		e.Algorithm,
		pct(e.Off.LeftLastClusterShare), pct(e.On.LeftLastClusterShare),
		pct(e.Off.KVReuse), pct(e.On.KVReuse),
		strconv.FormatFloat(e.Off.TTFTMs.P99, 'f', 1, 64), strconv.FormatFloat(e.On.TTFTMs.P99, 'f', 1, 64),
		e.Off.GoodputRPS, e.On.GoodputRPS)
}

// WriteFlagEffects writes the "last_cluster_affinity off → on:" block,
// one Summary line per pair of FlagEffects(d), and nothing when d has no
// pair. st may be nil (plain text). WriteText ends with it; `lcctl demo`
// shows it through WriteText.
func WriteFlagEffects(w io.Writer, d *Document, st *ui.Styles) error {
	effects := FlagEffects(d)
	if len(effects) == 0 {
		return nil
	}
	if st == nil {
		st = ui.NewStyles(w, false)
	}
	if _, err := fmt.Fprintf(w, "\n%s\n", st.Bold.Render("last_cluster_affinity off → on:")); err != nil {
		return err
	}
	for _, e := range effects {
		if _, err := fmt.Fprintf(w, "  %s\n", e.Summary()); err != nil {
			return err
		}
	}
	return nil
}

package demo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/lcctl/lcctl/internal/sim"
	"github.com/lcctl/lcctl/internal/sim/report"
)

var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;?]*[A-Za-z]")

// ClusterFromGet returns the cluster of the entry `lcctl store get`
// printed: from its JSON document (-o json; the "found" and "cluster"
// keys) or from the "cluster" line of its text output (ANSI styling
// ignored, a quoted value unquoted). The error says why there is none: the
// entry was absent, or the output is not store get's.
func ClusterFromGet(out []byte) (string, error) {
	trimmed := bytes.TrimSpace(out)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var j struct {
			Found   *bool  `json:"found"`
			Cluster string `json:"cluster"`
		}
		if err := json.Unmarshal(trimmed, &j); err != nil {
			return "", fmt.Errorf("store get printed JSON that does not decode: %w", err)
		}
		if j.Found == nil || !*j.Found || j.Cluster == "" {
			return "", errors.New("store get found no entry")
		}
		return j.Cluster, nil
	}
	for _, line := range strings.Split(ansiEscape.ReplaceAllString(string(out), ""), "\n") {
		rest, ok := strings.CutPrefix(line, "cluster ")
		if !ok {
			continue
		}
		v := strings.TrimSpace(rest)
		switch {
		case v == "(not found)":
			return "", errors.New("store get found no entry")
		case strings.HasPrefix(v, `"`):
			u, err := strconv.Unquote(v)
			if err != nil {
				return "", fmt.Errorf("store get printed the cluster %s, which does not unquote: %w", v, err)
			}
			return u, nil
		case v != "":
			return v, nil
		}
	}
	return "", errors.New("store get printed no cluster line")
}

// FlagEffect is one algorithm simulated with last_cluster_affinity off
// and on.
type FlagEffect struct {
	// Algorithm is the canonical algorithm name.
	Algorithm string
	// Off and On are the two runs (policies "<algorithm>/lc-off" and
	// "<algorithm>/lc-on" of the comparison set).
	Off, On *sim.Result
}

// FlagEffects pairs the policies of a `lcctl simulate` document that
// differ only in last_cluster_affinity (same source and algorithm, flag
// off and on), in document order. Policies without the flag, or without a
// partner, are left out.
func FlagEffects(doc *report.Document) []FlagEffect {
	var out []FlagEffect
	index := map[string]int{}
	for _, r := range doc.Policies {
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

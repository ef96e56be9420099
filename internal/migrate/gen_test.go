package migrate

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"pgregory.net/rapid"

	"github.com/lcctl/lcctl/internal/lb"
)

// The generator builds valid lb-configs (every V rule passes) rich in
// no-SLO pulsar-wait-and-widen entries, renders them as JSON (compact or
// indented with 2 spaces, 4 spaces or tabs) or YAML (block style with
// comments, blank lines, mixed quoting and some flow entries), and records
// where each entry sits in the text, so tests can check that bytes outside
// the changed entries are untouched without trusting the rewriter's own
// position logic.

type gScalar struct {
	kind string // "str", "num", "bool", "null"
	text string // number literal, "true"/"false", string value
}

type gField struct {
	key string
	val gScalar
}

type gEntry struct {
	alg    string // spelling
	str    bool
	fields []gField
	ra     []gRA // model-level (models entries only)
	flow   bool  // YAML: write the detailed entry in flow style
}

type gRA struct {
	key string
	e   gEntry
}

type gModel struct {
	id string
	e  gEntry
}

type gConfig struct {
	def       string // "" = absent
	topRA     []gRA
	hasTopRA  bool
	models    []gModel
	hasModels bool
}

var (
	spellings = map[lb.Algorithm][]string{
		lb.PowerOfN:           {"power-of-n", "power-of-two", "powerOf2"},
		lb.WaitAndWiden:       {"wait-and-widen", "groq-multiregion"},
		lb.RoundRobin:         {"round-robin"},
		lb.Random:             {"random"},
		lb.Pulsar:             {"pulsar"},
		lb.PulsarWaitAndWiden: {"pulsar-wait-and-widen", "pulsar-wait-and-widen", "pulsar-multiregion"},
	}
	modelIDs = []string{"model-a", "meta/llama-3.3-70b-instruct", "m b", "qwen:32b", "yes", "x"}
	seeds    = []string{"s1", "fleet-v1", "yes", "12a", "a b", "on", "model-a-v1"}
)

func drawAlgorithm(t *rapid.T, label string, pwawBias bool) lb.Algorithm {
	if pwawBias && rapid.IntRange(0, 9).Draw(t, label+"-pwaw") < 6 {
		return lb.PulsarWaitAndWiden
	}
	return rapid.SampledFrom(lb.Algorithms[:]).Draw(t, label)
}

func u(t *rapid.T, label string) gScalar {
	if rapid.IntRange(0, 9).Draw(t, label+"-null") == 0 {
		return gScalar{"null", "null"}
	}
	return gScalar{"num", strconv.Itoa(rapid.IntRange(0, 1000).Draw(t, label))}
}

func b(t *rapid.T, label string) gScalar {
	return gScalar{"bool", strconv.FormatBool(rapid.Bool().Draw(t, label))}
}

// drawFields draws a random valid set of fields for algorithm a.
func drawFields(t *rapid.T, a lb.Algorithm, label string) []gField {
	type cand struct {
		key string
		gen func() gScalar
	}
	var cs []cand
	common := []cand{
		{"require_cache_affinity_key", func() gScalar { return b(t, label+"rcak") }},
		{"require_input_tokens", func() gScalar { return b(t, label+"rit") }},
		{"max_input_work_seconds", func() gScalar {
			return gScalar{"num", rapid.SampledFrom([]string{"2.5", "3", "0.75"}).Draw(t, label+"miws")}
		}},
	}
	seed := cand{"seed", func() gScalar { return gScalar{"str", rapid.SampledFrom(seeds).Draw(t, label+"seed")} }}
	weight := cand{"rendezvous_weight", func() gScalar {
		return gScalar{"str", rapid.SampledFrom([]string{"max-input-tps", "last-mean-input-tps"}).Draw(t, label+"rw")}
	}}
	kv := cand{"consider_kv_free_tokens", func() gScalar { return b(t, label+"kv") }}
	wait := []cand{
		{"n", func() gScalar { return u(t, label+"n") }},
		{"max_queued", func() gScalar { return u(t, label+"mq") }},
		{"max_queue_time_floor_ms", func() gScalar { return u(t, label+"floor") }},
		{"max_queue_time_ceil_ms", func() gScalar { return u(t, label+"ceil") }},
		{"ttft_bucket_size_ms", func() gScalar { return u(t, label+"bucket") }},
		{"next_bucket_unlock_factor", func() gScalar { return gScalar{"num", "0.25"} }},
		{"ignore_queue_time", func() gScalar { return b(t, label+"iqt") }},
		{"cache_affinity_backend_selection_count", func() gScalar { return u(t, label+"k") }},
		{"cache_affinity_wait_ms", func() gScalar { return u(t, label+"wait") }},
		{"cache_affinity_input_tokens_scale", func() gScalar {
			return gScalar{"num", rapid.SampledFrom([]string{"0.5", "1", "0", "0.1"}).Draw(t, label+"scale")}
		}},
		{"last_cluster_affinity", func() gScalar { return b(t, label+"lca") }},
	}
	cs = append(cs, common...)
	switch a {
	case lb.PowerOfN:
		cs = append(cs, cand{"sample_count", func() gScalar {
			return gScalar{"num", strconv.Itoa(rapid.IntRange(1, 64).Draw(t, label+"sc"))}
		}}, cand{"comparator", func() gScalar { return gScalar{"str", "queue-time"} }})
	case lb.WaitAndWiden:
		cs = append(cs, seed, cand{"comparator", func() gScalar { return gScalar{"str", "ttft"} }})
		cs = append(cs, wait...)
	case lb.Pulsar:
		cs = append(cs, seed, weight, kv)
	case lb.PulsarWaitAndWiden:
		cs = append(cs, seed, weight, kv,
			cand{"band_widen_interval_ms", func() gScalar { return u(t, label+"bw") }},
			cand{"fallback_max_queued", func() gScalar { return u(t, label+"fmq") }})
		cs = append(cs, wait...)
	}
	var out []gField
	for i, c := range cs {
		if rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("%s-f%d", label, i)) == 0 {
			out = append(out, gField{c.key, c.gen()})
		}
	}
	// Shuffle the field order.
	for i := len(out) - 1; i > 0; i-- {
		j := rapid.IntRange(0, i).Draw(t, fmt.Sprintf("%s-sh%d", label, i))
		out[i], out[j] = out[j], out[i]
	}
	return out
}

func drawEntry(t *rapid.T, a lb.Algorithm, label string, model bool) gEntry {
	e := gEntry{alg: rapid.SampledFrom(spellings[a]).Draw(t, label+"-spell")}
	if rapid.IntRange(0, 2).Draw(t, label+"-str") == 0 {
		e.str = true
		return e
	}
	e.fields = drawFields(t, a, label)
	e.flow = rapid.IntRange(0, 4).Draw(t, label+"-flow") == 0
	if model && !e.flow && rapid.IntRange(0, 2).Draw(t, label+"-hasra") == 0 {
		e.ra = drawRA(t, label+"-ra", false)
	}
	return e
}

func drawRA(t *rapid.T, label string, pwawBias bool) []gRA {
	n := rapid.IntRange(0, 3).Draw(t, label+"-n")
	var out []gRA
	used := map[lb.Algorithm]bool{}
	for i := range n {
		a := drawAlgorithm(t, fmt.Sprintf("%s-%d", label, i), pwawBias)
		if used[a] {
			continue
		}
		used[a] = true
		key := rapid.SampledFrom(spellings[a]).Draw(t, fmt.Sprintf("%s-%d-key", label, i))
		out = append(out, gRA{key, drawEntry(t, a, fmt.Sprintf("%s-%d", label, i), false)})
	}
	return out
}

func drawConfig(t *rapid.T) gConfig {
	var c gConfig
	switch rapid.IntRange(0, 4).Draw(t, "default") {
	case 0:
	case 1:
		c.def = rapid.SampledFrom(spellings[lb.PulsarWaitAndWiden]).Draw(t, "default-pwaw")
	default:
		c.def = rapid.SampledFrom(spellings[drawAlgorithm(t, "default-alg", false)]).Draw(t, "default-spell")
	}
	c.hasTopRA = rapid.Bool().Draw(t, "has-top-ra")
	if c.hasTopRA {
		c.topRA = drawRA(t, "top-ra", true)
	}
	c.hasModels = rapid.IntRange(0, 5).Draw(t, "has-models") > 0
	if c.hasModels {
		n := rapid.IntRange(0, 4).Draw(t, "models-n")
		used := map[string]bool{}
		for i := range n {
			id := rapid.SampledFrom(modelIDs).Draw(t, fmt.Sprintf("model-%d-id", i))
			if used[id] {
				continue
			}
			used[id] = true
			a := drawAlgorithm(t, fmt.Sprintf("model-%d", i), true)
			c.models = append(c.models, gModel{id, drawEntry(t, a, fmt.Sprintf("model-%d", i), true)})
		}
	}
	return c
}

// gSpans records, per entry path, the byte range of the member (key
// through value; for YAML block members the whole lines) and, per
// container path ("" for the root), the tail where new members may be
// added.
type gSpans struct {
	member map[string][2]int
	tail   map[string][2]int
}

func newSpans() *gSpans {
	return &gSpans{member: map[string][2]int{}, tail: map[string][2]int{}}
}

func keyPathOf(prefix, key string) string { return prefix + "[" + strconv.Quote(key) + "]" }

// ---- JSON ----

type jsonGen struct {
	buf  bytes.Buffer
	unit string // "" = compact
	sp   *gSpans
}

func (g *jsonGen) nl(level int) {
	if g.unit == "" {
		return
	}
	g.buf.WriteString("\n" + strings.Repeat(g.unit, level))
}

func (g *jsonGen) colon() {
	if g.unit == "" {
		g.buf.WriteString(":")
	} else {
		g.buf.WriteString(": ")
	}
}

func (g *jsonGen) scalar(s gScalar) {
	if s.kind == "str" {
		g.buf.Write(jsonString(s.text))
	} else {
		g.buf.WriteString(s.text)
	}
}

type jm struct {
	key  string
	path string // "" = not an entry
	emit func(level int)
}

func (g *jsonGen) object(level int, container string, ms []jm) {
	g.buf.WriteString("{")
	last := -1
	for i, m := range ms {
		if i > 0 {
			g.buf.WriteString(",")
		}
		g.nl(level + 1)
		start := g.buf.Len()
		g.buf.Write(jsonString(m.key))
		g.colon()
		m.emit(level + 1)
		if m.path != "" {
			g.sp.member[m.path] = [2]int{start, g.buf.Len()}
		}
		last = g.buf.Len()
	}
	if len(ms) > 0 {
		g.nl(level)
	}
	if container != "-" {
		if last < 0 {
			last = g.buf.Len()
		}
		g.sp.tail[container] = [2]int{last, g.buf.Len()}
	}
	g.buf.WriteString("}")
}

func (g *jsonGen) entry(e gEntry, level int, path string) {
	if e.str {
		g.buf.Write(jsonString(e.alg))
		return
	}
	ms := []jm{{key: "algorithm", emit: func(int) { g.buf.Write(jsonString(e.alg)) }}}
	for _, f := range e.fields {
		ms = append(ms, jm{key: f.key, emit: func(int) { g.scalar(f.val) }})
	}
	if len(e.ra) > 0 {
		ms = append(ms, jm{key: "request_algorithms", emit: func(l int) { g.ra(e.ra, l, path+".request_algorithms") }})
	}
	g.object(level, "-", ms)
}

func (g *jsonGen) ra(ra []gRA, level int, prefix string) {
	var ms []jm
	for _, r := range ra {
		p := keyPathOf(prefix, r.key)
		ms = append(ms, jm{key: r.key, path: p, emit: func(l int) { g.entry(r.e, l, p) }})
	}
	g.object(level, prefix, ms)
}

func renderGenJSON(c gConfig, unit string) ([]byte, *gSpans) {
	g := &jsonGen{unit: unit, sp: newSpans()}
	var ms []jm
	if c.def != "" {
		ms = append(ms, jm{key: "default", path: "default", emit: func(int) { g.buf.Write(jsonString(c.def)) }})
	}
	if c.hasTopRA {
		ms = append(ms, jm{key: "request_algorithms", emit: func(l int) { g.ra(c.topRA, l, "request_algorithms") }})
	}
	if c.hasModels {
		ms = append(ms, jm{key: "models", emit: func(l int) {
			var mm []jm
			for _, m := range c.models {
				p := keyPathOf("models", m.id)
				mm = append(mm, jm{key: m.id, path: p, emit: func(l int) { g.entry(m.e, l, p) }})
			}
			g.object(l, "models", mm)
		}})
	}
	g.object(0, "", ms)
	if unit != "" {
		g.buf.WriteString("\n")
	}
	return g.buf.Bytes(), g.sp
}

// ---- YAML ----

type yamlGen struct {
	t    *rapid.T
	buf  bytes.Buffer
	unit int
	sp   *gSpans
	n    int // label counter
}

func (g *yamlGen) draw(max int) int {
	g.n++
	return rapid.IntRange(0, max).Draw(g.t, fmt.Sprintf("y%d", g.n))
}

// str renders a string scalar plain, single- or double-quoted.
func (g *yamlGen) str(s string) string {
	plain := yamlString(s, false)
	switch g.draw(3) {
	case 0:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	case 1:
		return string(jsonString(s))
	}
	return plain
}

func (g *yamlGen) scalar(s gScalar) string {
	switch s.kind {
	case "str":
		return g.str(s.text)
	case "null":
		return []string{"null", "~", "Null"}[g.draw(2)]
	}
	return s.text
}

// head writes optional blank lines and comment lines before a key.
func (g *yamlGen) head(ind int) {
	switch g.draw(5) {
	case 0:
		g.buf.WriteString("\n")
	case 1:
		fmt.Fprintf(&g.buf, "%s# comment %d\n", strings.Repeat(" ", ind), g.n)
	case 2:
		fmt.Fprintf(&g.buf, "\n%s# comment %d\n", strings.Repeat(" ", max(ind-2, 0)), g.n)
	}
}

func (g *yamlGen) lineEnd() {
	if g.draw(4) == 0 {
		fmt.Fprintf(&g.buf, "  # note %d", g.n)
	}
	g.buf.WriteString("\n")
}

type ym struct {
	key   string
	path  string
	flow  string        // one-line value
	block func(ind int) // nested block mapping (when flow == "")
	// empty writes {} for the (empty) container of that path.
	empty     bool
	container string
}

func (g *yamlGen) mapping(ind int, container string, ms []ym) {
	for _, m := range ms {
		g.head(ind)
		start := g.buf.Len()
		g.buf.WriteString(strings.Repeat(" ", ind))
		g.buf.WriteString(g.str(m.key))
		g.buf.WriteString(":")
		switch {
		case m.flow != "":
			g.buf.WriteString(" " + m.flow)
			g.lineEnd()
		case m.empty:
			g.buf.WriteString(" ")
			g.sp.tail[m.container] = [2]int{g.buf.Len(), g.buf.Len() + 2}
			g.buf.WriteString("{}")
			g.lineEnd()
		default:
			g.lineEnd()
			m.block(ind + g.unit)
		}
		if m.path != "" {
			g.sp.member[m.path] = [2]int{start, g.buf.Len()}
		}
	}
	if container != "-" {
		g.sp.tail[container] = [2]int{g.buf.Len(), g.buf.Len()}
	}
}

func (g *yamlGen) flowEntry(e gEntry) string {
	var parts []string
	parts = append(parts, "algorithm: "+g.str(e.alg))
	for _, f := range e.fields {
		parts = append(parts, g.str(f.key)+": "+g.scalar(f.val))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (g *yamlGen) entryMember(key, path string, e gEntry) ym {
	m := ym{key: key, path: path}
	switch {
	case e.str:
		m.flow = g.str(e.alg)
	case e.flow:
		m.flow = g.flowEntry(e)
	default:
		m.block = func(ind int) {
			ms := []ym{{key: "algorithm", flow: g.str(e.alg)}}
			for _, f := range e.fields {
				ms = append(ms, ym{key: f.key, flow: g.scalar(f.val)})
			}
			if len(e.ra) > 0 {
				ms = append(ms, ym{key: "request_algorithms", block: func(ind int) { g.ra(e.ra, ind, path+".request_algorithms") }})
			}
			g.mapping(ind, "-", ms)
		}
	}
	return m
}

func (g *yamlGen) ra(ra []gRA, ind int, prefix string) {
	var ms []ym
	for _, r := range ra {
		ms = append(ms, g.entryMember(r.key, keyPathOf(prefix, r.key), r.e))
	}
	g.mapping(ind, prefix, ms)
}

func renderGenYAML(t *rapid.T, c gConfig) ([]byte, *gSpans) {
	g := &yamlGen{t: t, unit: rapid.SampledFrom([]int{2, 4}).Draw(t, "yaml-unit"), sp: newSpans()}
	g.buf.WriteString("# generated lb-config\n")
	var ms []ym
	if c.def != "" {
		ms = append(ms, ym{key: "default", path: "default", flow: g.str(c.def)})
	}
	if c.hasTopRA {
		if len(c.topRA) == 0 {
			ms = append(ms, ym{key: "request_algorithms", empty: true, container: "request_algorithms"})
		} else {
			ms = append(ms, ym{key: "request_algorithms", block: func(ind int) { g.ra(c.topRA, ind, "request_algorithms") }})
		}
	}
	if c.hasModels {
		if len(c.models) == 0 {
			ms = append(ms, ym{key: "models", empty: true, container: "models"})
		} else {
			ms = append(ms, ym{key: "models", block: func(ind int) {
				var mm []ym
				for _, m := range c.models {
					mm = append(mm, g.entryMember(m.id, keyPathOf("models", m.id), m.e))
				}
				g.mapping(ind, "models", mm)
			}})
		}
	}
	if len(ms) == 0 {
		ms = append(ms, ym{key: "models", empty: true, container: "models"})
	}
	g.mapping(0, "", ms)
	if g.draw(1) == 0 {
		g.buf.WriteString("# end of file\n")
	}
	return g.buf.Bytes(), g.sp
}

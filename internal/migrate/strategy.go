package migrate

// The strategies' edits of one planned migration: bounding (M5), the
// pulsar rewrite (M6) with its header entries (M8), default and model
// pins (M9) and the --only notes. Split from migrate.go, which plans.

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/validate"
)

// bound applies M5 to a models or request_algorithms entry: add the
// missing bounds, keep everything else and the algorithm spelling; a
// string entry becomes a detailed object (M10).
func (p *planner) bound(e *validate.Entry) {
	n := p.nodeOf(e.Value)
	before := n.jsonText()
	// Every bound change adds the same fields with the same values (the
	// options' bounds), so the change records share one read-only list:
	// both fields, or the one added (a slice of it with its capacity cut,
	// so an append could not write into the shared array). On 124,000
	// entries a list per change was about 15 MB.
	both := p.boundFields()
	var added []Field
	// The entry after the change is made from before when the planner
	// writes the change list (boundAfter), except when a null bound was
	// removed.
	shape := afterStringEntry
	if e.StringForm {
		n.become(obj("algorithm", str(e.Value.Text), maxQueuedKey, num(p.opts.MaxQueued), waitKey, num(p.opts.AffinityWaitMs)))
		added = both
	} else {
		shape = afterAppended
		hasQueued, hasWait := n.present(maxQueuedKey), n.present(waitKey)
		queued, wait := p.boundNodes()
		for _, f := range []struct {
			name string
			val  *node
			has  bool
		}{{maxQueuedKey, queued, hasQueued}, {waitKey, wait, hasWait}} {
			if f.has {
				continue
			}
			// A null value counts as absent (§7.1); it is replaced.
			if n.remove(f.name) {
				shape = afterGiven
			}
			n.appendMember(f.name, f.val)
		}
		switch {
		case !hasQueued && !hasWait:
			added = both
		case !hasQueued:
			added = both[:1:1]
		case !hasWait:
			added = both[1:2:2]
		}
	}
	if slices.ContainsFunc(added, func(f Field) bool { return f.Name == waitKey }) {
		p.writesWait = true
	}
	var after json.RawMessage
	if shape == afterGiven {
		after = n.jsonText()
	}
	p.addBound(e.Path, before, after, added, shape)
}

// boundNodes returns the max_queued and cache_affinity_wait_ms values M5
// appends to detailed entries, made once per plan and shared by every
// entry: nothing edits a node once appended (the renderers, the digest
// and the change records only read it), and a node each was 15 MB on
// 124,000 entries.
func (p *planner) boundNodes() (queued, wait *node) {
	if p.boundQueued == nil {
		p.boundQueued, p.boundWait = num(p.opts.MaxQueued), num(p.opts.AffinityWaitMs)
	}
	return p.boundQueued, p.boundWait
}

// boundFields returns the fields M5 adds with their values, max_queued
// first (the order bound appends them), made once per plan.
func (p *planner) boundFields() []Field {
	if p.bounds == nil {
		p.bounds = []Field{{maxQueuedKey, num(p.opts.MaxQueued).jsonText()}, {waitKey, num(p.opts.AffinityWaitMs).jsonText()}}
	}
	return p.bounds[:2:2]
}

// toPulsar applies M6 (and M8, M10) to a models entry or a
// request_algorithms entry keyed pulsar.
func (p *planner) toPulsar(e *validate.Entry) {
	n := p.nodeOf(e.Value)
	before := n.jsonText()
	var header *node
	if e.Role == validate.RoleModel && !p.opts.NoPreserveHeaderMethod && !p.pwawReachable(e) {
		header = p.headerEntry(n)
	}
	var removed []Field
	lcaOn := false
	if e.StringForm {
		if header != nil {
			n.become(obj("algorithm", str("pulsar"), raKey, obj(pwaw, header)))
		} else {
			n.setScalar(validate.KindString, "pulsar")
		}
	} else {
		if v := n.get(lcaKey); v != nil && v.kind == validate.KindBool && v.text == "true" {
			lcaOn = true
		}
		for _, m := range n.members {
			if slices.Contains(droppedForPulsar, m.key) {
				removed = append(removed, Field{m.key, m.value().jsonText()})
			}
		}
		for _, f := range droppedForPulsar {
			n.remove(f)
		}
		n.get("algorithm").setScalar(validate.KindString, "pulsar")
		if header != nil {
			if ra := n.get(raKey); ra != nil && ra.kind == validate.KindObject {
				ra.appendMember(pwaw, header)
			} else {
				n.remove(raKey)
				n.appendMember(raKey, obj(pwaw, header))
			}
		}
	}
	lost := []string{lostIneligible, lostMetrics}
	if lcaOn {
		lost = append(lost, "last_cluster_affinity: returning sessions are no longer sent back to the cluster that served them last (pulsar has no session rules)")
		p.note(SeverityWarning, "M6", e.Path, describeEntry(e)+" had last_cluster_affinity: true; pulsar has no session rules, so returning sessions lose last-cluster routing", "use --strategy bounded to keep last_cluster_affinity")
	}
	if len(removed) > 0 {
		names := make([]string, len(removed))
		for i, f := range removed {
			names[i] = f.Name
		}
		lost = append(lost, "the removed settings ("+strings.Join(names, ", ")+") no longer apply: pulsar accepts none of them")
	}
	if e.Role == validate.RoleModel && header == nil && !p.pwawReachable(e) {
		lost = append(lost, "x-routing-method: pulsar-wait-and-widen (and pulsar_multiregion, ...) now gets HTTP 400 `unavailable` for this model (--no-preserve-header-method)")
	}
	reason := pulsarReason
	if removed == nil {
		removed = []Field{}
	}
	p.addChange(Change{Path: e.Path, Rule: "M6", Action: "switch_to_pulsar",
		AlgorithmBefore: pwaw, AlgorithmAfter: "pulsar", Before: before, After: n.jsonText(),
		AddedFields: []Field{}, RemovedFields: removed, Reason: reason, Lost: lost})
	if header != nil {
		p.headerChange(e.Path+".request_algorithms["+strconv.Quote(pwaw)+"]", header,
			fmt.Sprintf("M8: keeps x-routing-method: pulsar-wait-and-widen working for model %q (it selected the model's own entry before, E3.1); the entry is bounded (M5) and copies the ranking and admission settings", e.Model))
	}
	if e.Role == validate.RoleModel {
		for _, c := range p.modelLevel[e] {
			if c.KeyAlgorithm == lb.Pulsar {
				p.note(SeverityWarning, "W5", c.Path,
					fmt.Sprintf("models[%q] is now pulsar, so x-routing-method: pulsar selects the model's own entry and %s is never used any more", e.Model, c.Path),
					"move settings you need from it into the model entry, then remove it")
			}
		}
	}
}

// headerChange records an M8 addition.
func (p *planner) headerChange(path string, h *node, reason string) {
	var added []Field
	for _, m := range h.members {
		added = append(added, Field{m.key, m.val.jsonText()})
	}
	p.writesWait = true
	p.addChange(Change{Path: path, Rule: "M8", Action: "add_header_entry",
		AlgorithmBefore: "", AlgorithmAfter: pwaw, Before: json.RawMessage("null"), After: h.jsonText(),
		AddedFields: added, RemovedFields: []Field{}, Reason: reason, Lost: []string{}})
}

// headerEntry builds the bounded pulsar-wait-and-widen entry M8 adds for a
// switched entry n (its state before the switch): the ranking and
// admission fields copied, then max_queued and cache_affinity_wait_ms — the
// entry's own values when it states them (M5 keeps existing values), N and
// X otherwise.
func (p *planner) headerEntry(n *node) *node {
	h := obj("algorithm", str(pwaw))
	if n.kind == validate.KindObject {
		for _, m := range n.members {
			if v := m.value(); slices.Contains(copiedToHeaderEntry, m.key) && v.kind != validate.KindNull {
				h.appendMember(m.key, v.clone())
			}
		}
	}
	mq, wait := num(p.opts.MaxQueued), num(p.opts.AffinityWaitMs)
	if n.kind == validate.KindObject {
		if v := n.get(maxQueuedKey); v != nil && v.kind != validate.KindNull {
			mq = v.clone()
		}
		if v := n.get(waitKey); v != nil && v.kind != validate.KindNull {
			wait = v.clone()
		}
	}
	h.appendMember(maxQueuedKey, mq)
	h.appendMember(waitKey, wait)
	return h
}

// pwawReachable reports whether x-routing-method: pulsar-wait-and-widen
// would still find an entry for model e once e is pulsar: a model-level
// entry (E3.2) or a top-level one (E3.3).
func (p *planner) pwawReachable(e *validate.Entry) bool {
	if p.topPWAWSet {
		return true
	}
	for _, c := range p.modelLevel[e] {
		if c.KeyAlgorithm == lb.PulsarWaitAndWiden {
			return true
		}
	}
	return false
}

// topPWAW reports whether the top-level request_algorithms has an active
// pulsar-wait-and-widen entry.
func (p *planner) topPWAW() bool { return p.topPWAWSet }

// defaultEntry applies M9 to a no-SLO `default`.
func (p *planner) defaultEntry(e *validate.Entry) {
	if p.opts.Strategy == Bounded {
		if len(p.opts.DefaultModels) == 0 {
			p.refuse("M9", lb.TopLevelDefault,
				fmt.Sprintf("%s cannot be bounded: `default` is a name only and cannot hold max_queued or cache_affinity_wait_ms, so every model without a models entry would lose the eligible-primary shortcut at the upgrade", describeEntry(e)),
				"either --strategy pulsar (default becomes pulsar), or list the models routed by default with --default-models ID,... (each gets a bounded models entry; default stays as it is), or limit the run with --only")
			return
		}
		p.note(SeverityWarning, "W1", lb.TopLevelDefault,
			fmt.Sprintf("%s stays as it is (M9): the models listed in --default-models get bounded models entries; every other model without a models entry still loses the eligible-primary shortcut at the upgrade", describeEntry(e)),
			"list every model routed by default, or use --strategy pulsar for default")
		return
	}
	if countKey(p.res.Doc.Root, raKey) > 1 {
		p.refuse("M14", lb.TopLevelDefault, "the top-level key `request_algorithms` is repeated, and M8 would add an entry to it", "remove the duplicate, then migrate again")
		return
	}
	n := p.nodeOf(e.Value)
	before := n.jsonText()
	n.setScalar(validate.KindString, "pulsar")
	lost := []string{lostIneligible, lostMetrics}
	preserve := !p.opts.NoPreserveHeaderMethod && !p.topPWAW()
	if !preserve && !p.topPWAW() {
		lost = append(lost, "x-routing-method: pulsar-wait-and-widen now gets HTTP 400 `unavailable` for models without a models entry (--no-preserve-header-method)")
	}
	p.addChange(Change{Path: lb.TopLevelDefault, Rule: "M9", Action: "switch_default",
		AlgorithmBefore: pwaw, AlgorithmAfter: "pulsar", Before: before, After: n.jsonText(),
		AddedFields: []Field{}, RemovedFields: []Field{},
		Reason: "M9: `default` is a name only, so the bounded target cannot be written there; it switches to pulsar, which keeps unlimited stickiness for every model without a models entry (always with default settings: no seed, max-input-tps weight)",
		Lost:   lost})
	for _, c := range p.res.Entries {
		if c.Role == validate.RoleRequestAlgorithm && c.Active && c.KeyAlgorithm == lb.Pulsar {
			p.note(SeverityWarning, "W5", c.Path,
				"`default` is now pulsar, so for models without a models entry x-routing-method: pulsar selects `default` (pulsar with default settings) instead of "+c.Path,
				"models with their own entries still reach it")
		}
	}
	if !preserve {
		return
	}
	if v := firstMember(p.res.Doc.Root, raKey); v != nil && v.Node != nil && (v.Node.Anchor != "" || v.Node.Kind == yaml.AliasNode) {
		p.refuse("M8", raKey, "the top-level request_algorithms mapping is shared through a YAML anchor; lcctl does not add entries to shared YAML nodes, since every alias would get them too",
			"expand the alias by hand, or use --no-preserve-header-method, then migrate again")
		return
	}
	h := obj("algorithm", str(pwaw), maxQueuedKey, num(p.opts.MaxQueued), waitKey, num(p.opts.AffinityWaitMs))
	ra := p.rootNode().get(raKey)
	switch {
	case ra == nil:
		p.rootNode().appendMember(raKey, obj(pwaw, h))
	case ra.kind == validate.KindObject:
		ra.appendMember(pwaw, h)
	default:
		p.refuse("M8", raKey, "the top-level request_algorithms is not an object, so M8 cannot add its entry", "fix request_algorithms first (lcctl validate)")
		return
	}
	p.headerChange("request_algorithms["+strconv.Quote(pwaw)+"]", h,
		"M8: keeps x-routing-method: pulsar-wait-and-widen working for models without a models entry (it selected `default` before, E3.1); the entry is bounded (M5); it is also selectable by models with their own entries (E3.3)")
}

// pinList is the M9 model list: --default-models, plus (bounded only) the
// --only models without a models entry.
func (p *planner) pinList() []string {
	var out []string
	add := func(id string) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, id := range p.opts.DefaultModels {
		add(id)
	}
	for _, id := range p.opts.Only {
		if p.modelEntry(id) == nil {
			add(id)
		}
	}
	return out
}

func (p *planner) modelEntry(id string) *validate.Entry { return p.models[id] }

func (p *planner) defaultNoSLO() *validate.Entry {
	for _, e := range p.res.Entries {
		if e.Role == validate.RoleDefault && e.NoSLO {
			return e
		}
	}
	return nil
}

// pin writes the M9 bounded models entries for default-routed models.
func (p *planner) pin(ids []string) {
	d := p.defaultNoSLO()
	for _, id := range ids {
		path := "models[" + strconv.Quote(id) + "]"
		if p.modelEntry(id) != nil {
			p.note(SeverityInfo, "M9", path, fmt.Sprintf("model %q has its own models entry, so it is not routed by `default` and gets no new entry", id), "")
			continue
		}
		if d == nil {
			p.note(SeverityWarning, "M9", path, fmt.Sprintf("model %q has no models entry and `default` is not a no-SLO pulsar-wait-and-widen, so there is nothing to migrate for it", id),
				"check the model ID (x-model is exact and case-sensitive)")
			continue
		}
		if p.opts.Strategy == Pulsar {
			p.refuse("M9", path,
				fmt.Sprintf("model %q has no models entry: it is routed by `default` (%s); the pulsar target would switch `default` for every model routed by it, which --only excludes", id, pwaw),
				"use --strategy bounded to give this model a bounded models entry, or drop --only to switch `default` to pulsar")
			continue
		}
		if !p.pinSafe(path) {
			continue
		}
		h := obj("algorithm", str(pwaw), maxQueuedKey, num(p.opts.MaxQueued), waitKey, num(p.opts.AffinityWaitMs))
		models := p.rootNode().get(lb.TopLevelModels)
		if models == nil {
			models = obj()
			p.rootNode().appendMember(lb.TopLevelModels, models)
		}
		models.appendMember(id, h)
		p.writesWait = true
		p.addChange(Change{Path: path, Rule: "M9", Action: "pin_default_model",
			AlgorithmBefore: "", AlgorithmAfter: pwaw, Before: json.RawMessage("null"), After: h.jsonText(),
			AddedFields:   []Field{{maxQueuedKey, num(p.opts.MaxQueued).jsonText()}, {waitKey, num(p.opts.AffinityWaitMs).jsonText()}},
			RemovedFields: []Field{},
			Reason:        fmt.Sprintf("M9: model %q is routed by `default` (a name only, which cannot hold bounds); it gets its own bounded pulsar-wait-and-widen entry (M5) with default settings otherwise, exactly what `default` gave it, and x-routing-method availability stays the same", id),
			Lost:          []string{}})
	}
}

// pinSafe checks the top-level models map can take a new entry.
func (p *planner) pinSafe(path string) bool {
	root := p.res.Doc.Root
	if countKey(root, lb.TopLevelModels) > 1 {
		p.refuse("M14", path, "the top-level key `models` is repeated, and M9 would add an entry to it", "remove the duplicate, then migrate again")
		return false
	}
	if m := firstMember(root, lb.TopLevelModels); m != nil {
		if m.Kind != validate.KindObject {
			p.refuse("M9", path, "the top-level models is not an object, so M9 cannot add an entry to it", "fix models first (lcctl validate)")
			return false
		}
		if m.Node != nil && (m.Node.Anchor != "" || m.Node.Kind == yaml.AliasNode) {
			p.refuse("", path, "the top-level models mapping is shared through a YAML anchor; lcctl does not add entries to shared YAML nodes", "expand the alias by hand, then migrate again")
			return false
		}
	}
	return true
}

// onlyNotes reports --only models that had nothing to migrate.
func (p *planner) onlyNotes() {
	for _, id := range p.opts.Only {
		e := p.modelEntry(id)
		if e == nil {
			continue // handled by pin
		}
		mentioned := false
		prefix := "models[" + strconv.Quote(id) + "]"
		for _, c := range p.changes {
			mentioned = mentioned || strings.HasPrefix(c.path, prefix)
		}
		for _, n := range p.notes {
			mentioned = mentioned || strings.HasPrefix(n.Path, prefix)
		}
		if !mentioned {
			p.note(SeverityInfo, "M1", prefix, fmt.Sprintf("model %q has no no-SLO pulsar-wait-and-widen entry: nothing to migrate", id), "")
		}
	}
}

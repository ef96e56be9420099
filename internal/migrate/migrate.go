package migrate

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/plural"
	"github.com/lcctl/lcctl/internal/validate"
)

const pwaw = "pulsar-wait-and-widen"

// recoverPanics turns a panic inside Migrate into a refused result (the
// file is never written). The fuzz test turns it off so bugs surface.
var recoverPanics = true

// droppedForPulsar are the fields a pulsar-wait-and-widen entry may hold
// that pulsar rejects (lb-config.md M6, matrix §6.7, from the lb field
// registry): they are removed, and listed, when an entry switches to
// pulsar.
var droppedForPulsar = registryFields(func(f *lb.Field) bool {
	return f.Parsed.Has(lb.PulsarWaitAndWiden) && !f.Parsed.Has(lb.Pulsar)
})

// copiedToHeaderEntry are the fields M8 copies from a switched entry into
// the bounded pulsar-wait-and-widen entry it adds, so that requests that
// still ask for pulsar-wait-and-widen rank the same clusters and pass the
// same admission checks: every field both algorithms parse except the
// request_algorithms map.
var copiedToHeaderEntry = registryFields(func(f *lb.Field) bool {
	return f.Parsed.Has(lb.PulsarWaitAndWiden) && f.Parsed.Has(lb.Pulsar) && f.Type != lb.TypeMap
})

func registryFields(keep func(*lb.Field) bool) []string {
	var out []string
	for _, f := range lb.Fields() {
		if keep(f) {
			out = append(out, f.Name)
		}
	}
	return out
}

// The fields migrate adds, reads or moves, named by the lb field registry:
// the bounds M5 adds, the session flag M6 warns about, and the
// request_algorithms map (of an entry and, the same serde type, of the top
// level) M8 adds header entries to.
var (
	maxQueuedKey = lb.FieldMaxQueued.Name
	waitKey      = lb.FieldCacheAffinityWaitMs.Name
	lcaKey       = lb.FieldLastClusterAffinity.Name
	raKey        = lb.FieldRequestAlgorithms.Name
)

// Texts shared by changes and notes.
const (
	boundedReason  = "M5: keep pulsar-wait-and-widen and bound the stickiness the release removes: rank 1 keeps a key's requests while it has room for max_queued queued requests above its max_engine_concurrency, and a request waits up to cache_affinity_wait_ms for rank 1 before the ranking widens; the algorithm, its name in metrics and in x-routing-method, the ranking (seed, rendezvous_weight), KV checks, band widening and last_cluster_affinity stay"
	pulsarReason   = "M6: switch to pulsar, which keeps today's unlimited stickiness: the same rank-1 cluster per key (pulsar ranks exactly like pulsar-wait-and-widen for the same seed and rendezvous_weight) and an eligible rank 1 always wins; valid on every Stargate release"
	lostIneligible = "when rank 1 is ineligible (excluded by a retry, no valid weight, or failing the KV check) the request goes to the next eligible cluster in ranking order: no TTFT-bucket or queue selection, no band timing, no waiting"
	lostMetrics    = "the algorithm label in Stargate's metrics and logs becomes pulsar"
	versionSafety  = "cache_affinity_wait_ms on pulsar-wait-and-widen is rejected at startup (\"pulsar-wait-and-widen config does not support field(s): cache_affinity_wait_ms\") by Stargate releases older than the pulsar-wait-and-widen affinity wait (#2288): this file must reach only Stargate binaries that have it. Upgrade the binaries in the same rollout as this config, or migrate to --strategy pulsar first (with --no-preserve-header-method while any older Stargate runs); see 'lcctl docs rollout'"
)

// Migrate rewrites the no-SLO pulsar-wait-and-widen entries of one
// lb-config file (JSON or YAML; name decides the format as for
// validate.File) by the rules M1–M16 of lb-config.md §13, and returns the
// migrated bytes with every change, note and availability change.
//
// It is pure: bytes in, bytes out, no I/O. The rewrite keeps every byte
// outside the changed entries (YAML comments, key order, indentation,
// quoting; JSON layout); new JSON follows the file's own indentation and
// spacing. The output is checked three ways before Status becomes
// StatusPending: it decodes to exactly the intended document, it passes
// validation (M12, otherwise StatusInvalid), and a second pass with the
// same options finds nothing to change (M13). Migrate never panics; the
// error is non-nil only for invalid options (Options.Check).
func Migrate(name string, src []byte, opts Options) (res *Result, err error) {
	if err := opts.Check(); err != nil {
		return nil, err
	}
	defer func() {
		if !recoverPanics {
			return
		}
		if p := recover(); p != nil {
			// A bug must not take the process down or write anything.
			res = &Result{File: name, Status: StatusRefused, Input: src, Output: src,
				Notes: []Note{{Severity: SeverityError, Message: fmt.Sprintf("internal error while migrating (nothing written): %v", p),
					Hint: "please report this file to the lcctl maintainers"}}}
			err = nil
		}
	}()
	// Migrate reports no validation warnings (lcctl validate does) and
	// plans from the value tree and the entries' flags, never from a typed
	// config: the input and the rewritten text are checked for errors only
	// and keep no typed config (validate.CheckEntries), which keeps one
	// formatted warning and one config per entry out of memory on large
	// files.
	before := validate.CheckEntries(validate.Decode(name, src, validate.FormatUnknown))
	res = &Result{File: before.File, Format: before.Format, Input: src, Output: src, Before: before}
	if before.Unreadable() {
		res.Status = StatusUnreadable
		res.Errors = before.Errors()
		return res, nil
	}
	if errs := topLevelErrors(before); len(errs) > 0 {
		res.Status = StatusNotLBConfig
		res.Errors = errs
		return res, nil
	}
	p := plan(before, opts)
	res.Notes, res.RequiresAffinityWaitStargate = p.notes, p.writesWait
	changes := p.changes
	if len(res.Refusals()) > 0 {
		return refused(res), nil
	}
	if len(changes) == 0 {
		res.Changes = changeList(changes)
		res.Status = StatusUnchanged
		if !before.Valid() {
			res.Notes = append(res.Notes, Note{Severity: SeverityWarning, Message: fmt.Sprintf("the file does not pass validation (errors: %d); run lcctl validate", before.Counts.Errors)})
		}
		return res, nil
	}
	// What the rest needs of the input's validation is kept apart (the
	// errors, what x-routing-method can select), and the input's entries
	// and the plan's indexes are let go before the
	// rewrite: the renderers read only the input's tree and the edited
	// copy. On 124,000 entries these were about 80 MB of the peak.
	beforeErrs, beforeSel := before.Errors(), selectable(before)
	root := p.root
	p = nil
	before.Entries, before.Config = nil, nil
	out, err := render(before.Doc, root)
	if err != nil {
		msg := "lcctl could not rewrite this file safely, so it changes nothing"
		hint := ""
		if errors.Is(err, errLayout) {
			hint = "rewrite the entry in plain block or flow style (no block scalars or multi-line plain scalars), or apply the change by hand"
		} else {
			hint = "please report this file to the lcctl maintainers"
		}
		res.Notes = append(res.Notes, Note{Severity: SeverityError, Message: msg + ": " + err.Error(), Hint: hint})
		return refused(res), nil
	}
	// The intended document is kept as its digest, and the input's value
	// tree and the edited copy are let go, before the rewritten text is
	// decoded: on 124,000 entries the trees alive together were the peak
	// of memory.
	want := root.digest()
	root = nil
	trimResult(before)
	// The decode verify makes of out is the one validated (it is the same
	// decode validate.FileAs would make): the rewritten text is decoded
	// once, not twice.
	outDoc, outDiags, why := verify(name, res.Format, out, want)
	if why != "" {
		res.Notes = append(res.Notes, Note{Severity: SeverityError,
			Message: "lcctl could not rewrite this file safely, so it changes nothing: the rewritten text would not hold exactly the intended document (" + why + ")",
			Hint:    "please report this file to the lcctl maintainers; apply the change by hand meanwhile"})
		return refused(res), nil
	}
	dropYAMLNodes(outDoc)
	after := validate.CheckEntries(outDoc, outDiags)
	res.After = after
	res.Availability = availabilityChanges(beforeSel, after)
	if !after.Valid() {
		res.Status = StatusInvalid
		res.Errors = invalidErrors(beforeErrs, after)
		res.Notes = append(res.Notes, invalidNote(beforeErrs, after))
		trimResult(after)
		res.Changes = changeList(changes)
		return res, nil
	}
	if again := planCheck(after, opts); len(again.changes) > 0 || len(again.notes) > 0 && hasError(again.notes) {
		res.Notes = append(res.Notes, Note{Severity: SeverityError,
			Message: fmt.Sprintf("internal error: a second migration of the result would change %d more entries (M13), so nothing is written", len(again.changes)),
			Hint:    "please report this file to the lcctl maintainers"})
		res.After, res.Availability = nil, nil
		return refused(res), nil
	}
	trimResult(after)
	if len(out) > validate.MaxInputBytes {
		// The text was checked here without the input limit
		// (validate.DecodeRewritten); say that lcctl itself will not read
		// the written file back, so that a later validate refusing it with
		// LC1000 is no surprise.
		res.Notes = append(res.Notes, Note{Severity: SeverityWarning,
			Message: fmt.Sprintf("the migrated file is %d bytes, more than lcctl's %d-byte (16 MiB) input limit: it passed every check here, but lcctl validate and lcctl migrate will refuse to read it back (LC1000); Stargate has no such limit", len(out), validate.MaxInputBytes),
			Hint:    "keep this run's report as the record of the checks; for lcctl to check the file again later it must be 16 MiB or less"})
	}
	res.Output = out
	res.Status = StatusPending
	if opts.DiffName != "" {
		res.Diff = UnifiedDiff(opts.DiffName, opts.DiffName, src, out)
	}
	// The Changes are made from their records now that both documents'
	// trees are gone (change), and after the diff.
	res.Changes = changeList(changes)
	return res, nil
}

// trimResult drops what a validation result holds beyond its errors once
// the plan, the rendering and the checks that read it are done: the
// decoded document, the entries and the typed config (on 124,000 entries
// the input's and the rewritten text's trees and entries were most of the
// peak memory). File, Format, Diagnostics and Counts stay.
func trimResult(r *validate.Result) {
	r.Doc, r.Entries, r.Config = nil, nil, nil
}

// refused marks res as refused: no output, and no changes reported, since
// none will be made until the refusals are resolved.
func refused(res *Result) *Result {
	res.Status = StatusRefused
	res.Output = res.Input
	res.Changes = nil
	res.RequiresAffinityWaitStargate = false
	return res
}

func hasError(ns []Note) bool {
	return slices.ContainsFunc(ns, func(n Note) bool { return n.Severity == SeverityError })
}

// invalidErrors lists the errors of the rewritten file. An error the input
// already had (same code and path) is given with its position in the
// input, which is the file the operator can open; a new one keeps its
// position in the rewritten text and says so.
func invalidErrors(before []validate.Diagnostic, after *validate.Result) []validate.Diagnostic {
	old := map[string]validate.Diagnostic{}
	for _, d := range before {
		old[string(d.Code)+"\x00"+d.Path] = d
	}
	var out []validate.Diagnostic
	for _, d := range after.Errors() {
		if o, ok := old[string(d.Code)+"\x00"+d.Path]; ok {
			out = append(out, o)
			continue
		}
		d.Message = "in the migrated text (not written): " + d.Message
		out = append(out, d)
	}
	return out
}

// invalidNote explains an invalid result (M12), separating errors the
// input already had from errors the migration would add.
func invalidNote(before []validate.Diagnostic, after *validate.Result) Note {
	old := map[string]bool{}
	for _, d := range before {
		old[string(d.Code)+"\x00"+d.Path] = true
	}
	pre, added := 0, 0
	for _, d := range after.Errors() {
		if old[string(d.Code)+"\x00"+d.Path] {
			pre++
		} else {
			added++
		}
	}
	n := plural.Count(pre+added, "error", "errors")
	msg := fmt.Sprintf("the migrated file would not pass Stargate's startup validation (%s), so nothing is written (M12)", n)
	hint := "fix the errors listed, then migrate again"
	if pre > 0 && added == 0 {
		msg += "; the input already has these errors"
		hint = "run lcctl validate on the input, fix it, then migrate again"
	}
	return Note{Severity: SeverityError, Rule: "M12", Message: msg, Hint: hint}
}

func render(doc *validate.Document, root *node) ([]byte, error) {
	if doc.Format == validate.FormatYAML {
		if doc.YAML == nil {
			return nil, fmt.Errorf("internal error: YAML document without its node tree")
		}
		return renderYAML(doc.Source, doc.YAML, root)
	}
	return renderJSON(doc.Source, root)
}

// dropYAMLNodes lets go of the yaml.v3 node tree of the rewritten text
// once it is verified: validation reads only the value tree, and the
// idempotence re-run (M13), which would read the nodes for its anchor
// checks, rewrites nothing on a correct migration: lcctl writes no
// anchors, and the first run refused every entry on a path through one,
// so those checks could only repeat the first run's. On 124,000 YAML
// entries the node tree was about 100 MB of the peak.
func dropYAMLNodes(doc *validate.Document) {
	doc.YAML = nil
	var walk func(v *validate.Value)
	walk = func(v *validate.Value) {
		v.Node = nil
		for i := range v.Members {
			v.Members[i].KeyNode = nil
			walk(v.Members[i].Value)
		}
		for _, it := range v.Items() {
			walk(it)
		}
	}
	if doc.Root != nil {
		walk(doc.Root)
	}
}

// verify decodes out and compares it with the intended document, given
// by its digest (node.digest); why is "" when they hold the same
// document. The decoded document and its decoding diagnostics are
// returned for validation (validate.Check).
func verify(name string, format validate.Format, out []byte, want docDigest) (doc *validate.Document, diags []validate.Diagnostic, why string) {
	doc, diags = validate.DecodeRewritten(name, out, format)
	if doc.Root == nil {
		if len(diags) > 0 {
			return doc, diags, "it does not decode: " + diags[0].Message
		}
		return doc, diags, "it does not decode"
	}
	if valueDigest(doc.Root) != want {
		return doc, diags, "decoded content differs"
	}
	return doc, diags, ""
}

// planner applies the M rules to one decoded file.
type planner struct {
	opts       Options
	res        *validate.Result
	root       *node
	idx        map[*validate.Value]*node
	changes    []change
	notes      []Note
	writesWait bool

	// Indexes over res.Entries: the active model-level entries per models
	// entry, the models entry per model ID, and whether the top-level
	// request_algorithms has an active pulsar-wait-and-widen entry.
	modelLevel map[*validate.Entry][]*validate.Entry
	models     map[string]*validate.Entry
	topPWAWSet bool

	// repeatedModels holds the models keys given more than once (nil
	// when none): the keys of the shadowed models entries, since the
	// checker makes an entry of every member of models and shadows every
	// occurrence but the last (D2). Counting a key by scanning the whole
	// models object for every entry made the plan quadratic (124,000
	// entries took 53 s); a count per key was 8 MB.
	repeatedModels map[string]bool

	// checkOnly is set for the idempotence re-run (M13), which looks only
	// at the changes and the error notes: warning and info notes are
	// neither formatted nor kept (one M4 note per entry on 124,000
	// entries).
	checkOnly bool

	// bounds is what boundFields returns; boundQueued and boundWait are
	// what boundNodes returns.
	bounds                 []Field
	boundQueued, boundWait *node
}

// nodeOf returns the tree node of the input value v, which the strategies
// edit. The idempotence re-run (checkOnly) has no tree: nothing is
// rendered from it, and on a correct migration it edits nothing, so a
// copy of the whole rewritten document (a fifth of the peak memory on
// 124,000 entries) is not made; v's subtree is copied on its own instead,
// which gives the same change record. Any edit there is an M13 failure,
// whatever else it changes.
func (p *planner) nodeOf(v *validate.Value) *node {
	if p.idx == nil {
		n, _ := newTree(v, nil)
		return n
	}
	return p.idx[v]
}

// rootNode returns the tree's root, copying the document first in the
// idempotence re-run (see nodeOf), which reaches here only for a change.
func (p *planner) rootNode() *node {
	if p.root == nil {
		p.copyTree()
	}
	return p.root
}

// copyTree makes the planner's editable copy of the document, indexed by
// the values of its entries.
func (p *planner) copyTree() {
	entries := make(map[*validate.Value]bool, len(p.res.Entries))
	for _, e := range p.res.Entries {
		entries[e.Value] = true
	}
	p.root, p.idx = newTree(p.res.Doc.Root, entries)
}

func plan(res *validate.Result, opts Options) *planner {
	return newPlanner(res, opts, false).run()
}

// planCheck is plan for the idempotence check: the same changes and error
// notes, without the warning and info notes.
func planCheck(res *validate.Result, opts Options) *planner {
	return newPlanner(res, opts, true).run()
}

func newPlanner(res *validate.Result, opts Options, checkOnly bool) *planner {
	return &planner{opts: opts, res: res, modelLevel: map[*validate.Entry][]*validate.Entry{}, models: map[string]*validate.Entry{}, checkOnly: checkOnly}
}

func (p *planner) run() *planner {
	res := p.res
	p.models = make(map[string]*validate.Entry, len(res.Entries))
	if !p.checkOnly {
		p.copyTree()
	}
	for _, e := range res.Entries {
		switch {
		case e.Role == validate.RoleModelRequestAlgorithm && e.Active:
			p.modelLevel[e.Parent] = append(p.modelLevel[e.Parent], e)
		case e.Role == validate.RoleModel:
			if _, seen := p.models[e.Model]; !seen {
				p.models[e.Model] = e
			}
			if e.Shadowed {
				if p.repeatedModels == nil {
					p.repeatedModels = map[string]bool{}
				}
				p.repeatedModels[e.Model] = true
			}
		case e.Role == validate.RoleRequestAlgorithm && e.Active && e.KeyAlgorithm == lb.PulsarWaitAndWiden:
			p.topPWAWSet = true
		}
	}
	var todo []*validate.Entry
	for _, e := range res.Entries {
		if e.NoSLO {
			todo = append(todo, e)
		}
	}
	pins := p.pinList()
	if len(todo) == 0 && len(pins) == 0 {
		p.onlyNotes()
		return p
	}
	if res.Doc.Root.Kind != validate.KindObject {
		p.refuse("", "", "the top level is the positional array form [default, request_algorithms, models]; lcctl rewrites only the object form",
			"write the object form {\"default\": ..., \"request_algorithms\": ..., \"models\": ...} first (W20)")
		return p
	}
	if !p.checkOnly {
		p.changes = make([]change, 0, len(todo)) // about one change per entry
	}
	for _, e := range todo {
		p.entry(e)
	}
	p.pin(pins)
	p.onlyNotes()
	return p
}

func (p *planner) note(sev Severity, rule, path, msg, hint string) {
	if p.checkOnly && sev != SeverityError {
		return
	}
	p.notes = append(p.notes, Note{Severity: sev, Rule: rule, Path: path, Message: msg, Hint: hint})
}

func (p *planner) refuse(rule, path, msg, hint string) {
	p.note(SeverityError, rule, path, msg, hint)
}

// entry decides what happens to one no-SLO entry.
func (p *planner) entry(e *validate.Entry) {
	switch e.Role {
	case validate.RoleDefault, validate.RoleRequestAlgorithm:
		if !p.opts.sharedInScope() {
			hint := "migrate it in a run without --only"
			if p.opts.Strategy == Pulsar && e.Role == validate.RoleRequestAlgorithm && e.KeyAlgorithm == lb.PulsarWaitAndWiden && !e.Bounded {
				// A run without --only would refuse it (M7): say what
				// does work instead of sending the operator in a circle.
				hint = m7Hint
			}
			p.note(SeverityWarning, "W1", e.Path,
				fmt.Sprintf("%s is shared by every model and --only limits this run to %s, so it is left as it is; it still loses the eligible-primary shortcut at the upgrade", describeEntry(e), strings.Join(p.opts.Only, ", ")),
				hint)
			return
		}
	case validate.RoleModel, validate.RoleModelRequestAlgorithm:
		if !p.opts.selectedModel(e.Model) {
			p.note(SeverityWarning, "W1", e.Path,
				fmt.Sprintf("%s is not in --only, so it is left as it is; it still loses the eligible-primary shortcut at the upgrade", describeEntry(e)),
				"migrate it in another run")
			return
		}
	}
	if e.Bounded {
		if p.checkOnly {
			return
		}
		p.note(SeverityInfo, "M4", e.Path,
			fmt.Sprintf("%s has no queue SLO but already states its bounds (max_queued and cache_affinity_wait_ms), so it is left as it is", describeEntry(e)), "")
		return
	}
	if !p.pathSafe(e) {
		return
	}
	if e.Role == validate.RoleDefault {
		p.defaultEntry(e)
		return
	}
	if e.Role == validate.RoleRequestAlgorithm || e.Role == validate.RoleModelRequestAlgorithm {
		want := lb.PulsarWaitAndWiden
		if p.opts.Strategy == Pulsar {
			want = lb.Pulsar
		}
		if e.KeyAlgorithm != want {
			p.refuseKey(e)
			return
		}
	}
	if p.opts.Strategy == Bounded {
		p.bound(e)
	} else {
		p.toPulsar(e)
	}
}

// m7Hint says what to do with a request_algorithms entry keyed
// pulsar-wait-and-widen that --strategy pulsar cannot rewrite (M7).
const m7Hint = "only --strategy bounded can migrate this entry (it stays pulsar-wait-and-widen under the same key), and a bounded entry needs a Stargate with the affinity wait (#2288): on an older release, bound it in the same rollout as the binary upgrade ('lcctl docs rollout')"

// refuseKey explains M7 / V19 for a request_algorithms entry whose key
// would not match the target algorithm.
func (p *planner) refuseKey(e *validate.Entry) {
	if p.opts.Strategy == Pulsar && e.KeyAlgorithm == lb.PulsarWaitAndWiden {
		p.refuse("M7", e.Path,
			fmt.Sprintf("%s cannot switch to pulsar: a request_algorithms key must name its entry's algorithm (V19: \"request_algorithms key pulsar-wait-and-widen does not match configured algorithm pulsar\"), and moving the entry under a pulsar key would change which x-routing-method value selects it", describeEntry(e)),
			m7Hint+"; to switch the models to pulsar now, list them with --only")
		return
	}
	target := "pulsar-wait-and-widen"
	if p.opts.Strategy == Pulsar {
		target = "pulsar"
	}
	p.refuse("M7", e.Path,
		fmt.Sprintf("%s sits under the key %q, which names %s; the %s target would still not match it (V19: request_algorithms key %s does not match configured algorithm %s)", describeEntry(e), e.Key, e.KeyAlgorithm, p.opts.Strategy, e.KeyAlgorithm, target),
		"fix the key or the algorithm first (lcctl validate reports V19), then migrate")
}

// describeEntry names an entry for messages.
func describeEntry(e *validate.Entry) string {
	alg := pwaw
	if e.Spelling != "" {
		alg = fmt.Sprintf("%s (written %q)", pwaw, e.Spelling)
	}
	switch e.Role {
	case validate.RoleDefault:
		return fmt.Sprintf("`default` (%s)", alg)
	case validate.RoleRequestAlgorithm:
		return fmt.Sprintf("the top-level request_algorithms entry %s (%s)", e.Path, alg)
	case validate.RoleModelRequestAlgorithm:
		return fmt.Sprintf("the model-level request_algorithms entry %s (%s)", e.Path, alg)
	}
	return fmt.Sprintf("the models entry %s (%s)", e.Path, alg)
}

// pathSafe applies M14 (duplicates on the rewritten path) and lcctl's own
// YAML limits (anchors, aliases and merge keys on the path) and reports
// whether the entry may be rewritten.
func (p *planner) pathSafe(e *validate.Entry) bool {
	root := p.res.Doc.Root
	dup := func(where string) bool {
		p.refuse("M14", e.Path,
			fmt.Sprintf("%s: %s; Stargate's winner depends on duplicate-key rules (D1–D4) an operator rarely expects, so lcctl does not rewrite it", describeEntry(e), where),
			"remove the duplicate (lcctl validate reports it as W15), then migrate again")
		return false
	}
	var chain []*validate.Value
	switch e.Role {
	case validate.RoleDefault:
		if countKey(root, lb.TopLevelDefault) > 1 {
			return dup("the top-level key `default` is repeated")
		}
	case validate.RoleRequestAlgorithm:
		if countKey(root, raKey) > 1 {
			return dup("the top-level key `request_algorithms` is repeated")
		}
		ra := firstMember(root, raKey)
		if countAlg(ra, e.KeyAlgorithm) > 1 {
			return dup(fmt.Sprintf("another key of the top-level request_algorithms also names %s", e.KeyAlgorithm))
		}
		chain = append(chain, ra)
	case validate.RoleModel, validate.RoleModelRequestAlgorithm:
		if countKey(root, lb.TopLevelModels) > 1 {
			return dup("the top-level key `models` is repeated")
		}
		models := firstMember(root, lb.TopLevelModels)
		if p.repeatedModels[e.Model] {
			return dup(fmt.Sprintf("the models key %q is repeated", e.Model))
		}
		chain = append(chain, models)
		if e.Role == validate.RoleModelRequestAlgorithm {
			parent := e.Parent.Value
			if countKey(parent, raKey) > 1 {
				return dup(fmt.Sprintf("the key `request_algorithms` is repeated in models[%q]", e.Model))
			}
			ra := parent.Get(raKey)
			if countAlg(ra, e.KeyAlgorithm) > 1 {
				return dup(fmt.Sprintf("another key of models[%q].request_algorithms also names %s", e.Model, e.KeyAlgorithm))
			}
			chain = append(chain, parent, ra)
		}
	}
	if path := dupInside(e.Value, e.Path); path != "" {
		return dup("a key is repeated inside it at " + path)
	}
	if p.res.Doc.Format == validate.FormatYAML {
		for _, v := range chain {
			if v != nil && v.Node != nil && (v.Node.Anchor != "" || v.Node.Kind == yaml.AliasNode) {
				p.refuse("", e.Path, fmt.Sprintf("%s is inside a YAML node shared through an anchor (&%s); a change there would also change every alias of it", describeEntry(e), v.Node.Anchor),
					"expand the alias by hand, then migrate again")
				return false
			}
		}
		if e.Value.Node != nil && yamlShared(e.Value.Node) {
			p.refuse("", e.Path, fmt.Sprintf("%s uses YAML anchors, aliases or merge keys; lcctl does not rewrite shared YAML nodes, since a change would also apply to every alias", describeEntry(e)),
				"expand the anchors and aliases of this entry by hand, then migrate again")
			return false
		}
	}
	return true
}

// yamlShared reports an anchor, alias or merge key anywhere in n.
func yamlShared(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return true
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				return true
			}
		}
	}
	for _, c := range n.Content {
		if yamlShared(c) {
			return true
		}
	}
	return false
}

func countKey(v *validate.Value, key string) int {
	if v == nil || v.Kind != validate.KindObject {
		return 0
	}
	n := 0
	for _, m := range v.Members {
		if m.Key == key {
			n++
		}
	}
	return n
}

// countAlg counts the keys of a request_algorithms map that name a
// (aliases included: D2/D4 treat them as repeats).
func countAlg(v *validate.Value, a lb.Algorithm) int {
	if v == nil || v.Kind != validate.KindObject {
		return 0
	}
	n := 0
	for _, m := range v.Members {
		if b, ok := lb.ParseAlgorithmName(m.Key); ok && b == a {
			n++
		}
	}
	return n
}

func firstMember(v *validate.Value, key string) *validate.Value {
	if v == nil || v.Kind != validate.KindObject {
		return nil
	}
	for _, m := range v.Members {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// dupInside returns the path of the first object inside v (v included)
// that repeats a key (D3), or "".
func dupInside(v *validate.Value, path string) string {
	switch v.Kind {
	case validate.KindObject:
		if len(v.Members) <= 16 {
			// An entry has a handful of fields: compare them pairwise
			// rather than build a map per entry.
			for i, m := range v.Members {
				for _, o := range v.Members[:i] {
					if o.Key == m.Key {
						return path + "." + m.Key
					}
				}
			}
		} else {
			seen := make(map[string]bool, len(v.Members))
			for _, m := range v.Members {
				if seen[m.Key] {
					return path + "." + m.Key
				}
				seen[m.Key] = true
			}
		}
		for _, m := range v.Members {
			if d := dupInside(m.Value, path+"."+m.Key); d != "" {
				return d
			}
		}
	case validate.KindArray:
		for i, it := range v.Items() {
			if d := dupInside(it, path+"["+strconv.Itoa(i)+"]"); d != "" {
				return d
			}
		}
	}
	return ""
}

// topLevelErrors returns the errors that make the input no lb-config at
// all (V2: the top level is not an object or positional list, e.g. `42`,
// `null`, `"string"`; V4: a top-level field given twice). "Nothing to
// migrate" would let a CI gate pass such a file.
func topLevelErrors(r *validate.Result) []validate.Diagnostic {
	var out []validate.Diagnostic
	for _, d := range r.Errors() {
		if d.Code == validate.CodeTopLevelType || d.Code == validate.CodeDuplicateTopLevel {
			out = append(out, d)
		}
	}
	return out
}

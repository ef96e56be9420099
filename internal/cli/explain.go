package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/explain"
	"github.com/lcctl/lcctl/internal/formats"
	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/suggest"
)

// explainOptions are the flags of `lcctl explain` (docs/explain.md).
type explainOptions struct {
	cmdInput
	// DataKey keeps only the ConfigMap data entries with this key.
	DataKey string
	// ValuesKey is the key path of the lb-config in a Helm values file.
	ValuesKey                         string
	Config, AlgorithmConfig, Snapshot string
	Headers                           []string
	// Convenience flags, each one request header value.
	Model, RoutingKey, RoutingMethod, AffinityKey, InputTokens, Priority,
	SLOMs, MaxWaitMs, LastCluster, RequestID string
	Elapsed             string
	Exclude             []string
	FirstClassification string
	Timeline            bool
	Chart               string
	Compare             string
	Width               int
	Case                string
	Check               bool
	// Session and live inputs (explain_live.go, docs/explain.md "Live
	// inputs"): the session id and its source, the previous request of
	// the session (--span), the live-source flags shared with lcctl
	// snapshot, and the Olric connection flags shared with lcctl store.
	SessionID, Source, PreviousRequestID string
	live                                 liveFlags
	conn                                 connFlags
	liveIn                               *explainLive

	// derived names the flags the live sources filled (affinity-key
	// from --session-id, last-cluster from --span or Olric), as if
	// given; see changed.
	derived map[string]bool
	// Set by validate: --elapsed, --exclude and --first-classification
	// parsed, and the other lb-config file of --compare config=FILE.
	elapsed    time.Duration
	exclude    []string
	firstClass lb.SessionState
	otherFile  string
	// chart is --chart decided for text output (auto: stdout is a
	// terminal), set by validate.
	chart bool
}

// changed reports whether flag name was given or filled from a live
// source (prepareExplainLive).
func (o *explainOptions) changed(name string) bool { return o.flagGiven(name) || o.derived[name] }

// validate checks the flags that need no input read: --values-key and
// --data-key (validateValuesKeyFlags; not with --algorithm-config, which
// is one algorithm's object, never a manifest), --case and what it
// cannot be combined with, --check, --width, --config against
// --algorithm-config, what reads standard input, and parses --elapsed,
// --exclude, --first-classification, --compare and (text output) --chart.
// The request headers
// are assembled by the run step, after --session-id, --span and --olric
// have filled the affinity key and the last cluster.
func (o *explainOptions) validate(env *Env) error {
	o.derived = nil
	if err := validateValuesKeyFlags(o.flagGiven, o.ValuesKey, o.DataKey); err != nil {
		return err
	}
	if o.Case != "" {
		return o.validateCases()
	}
	if o.Check {
		return Usagef("--check needs --case FILE")
	}
	// An explicit --width outside the range is refused (it used to be
	// clamped silently while this message named the range); the
	// terminal's width and $COLUMNS are still clamped, since nobody asked
	// for them.
	if o.Width < 0 || o.Width > 0 && (o.Width < explain.MinWidth || o.Width > explain.MaxWidth) {
		return Usagef("--width %d: want a number of columns (%d–%d; 0 for the terminal's)", o.Width, explain.MinWidth, explain.MaxWidth)
	}
	if o.Config != "" && o.AlgorithmConfig != "" {
		return Usagef("--config and --algorithm-config are exclusive")
	}
	if o.AlgorithmConfig != "" && (o.ValuesKey != "" || o.DataKey != "") {
		return Usagef("--values-key and --data-key read an lb-config out of a Helm values file or Kubernetes manifest given to --config; --algorithm-config is one algorithm's settings object")
	}
	if (o.Config == "-" || o.AlgorithmConfig == "-") && o.Snapshot == "-" {
		return Usagef("--config and --snapshot cannot both read standard input")
	}
	if o.Compare == "config=-" {
		for _, u := range []struct{ flag, file string }{{"--snapshot", o.Snapshot}, {"--config", o.Config}, {"--algorithm-config", o.AlgorithmConfig}} {
			if u.file == "-" {
				return Usagef("%s and --compare config=- cannot both read standard input", u.flag)
			}
		}
	}
	var err error
	if o.elapsed, err = ParseElapsed(o.Elapsed); err != nil {
		return UsageErr(err)
	}
	if o.exclude, err = ParseExcludeList(o.Exclude); err != nil {
		return UsageErr(err)
	}
	o.firstClass = lb.SessionNone
	if o.FirstClassification != "" {
		s, ok := lb.ParseSessionState(o.FirstClassification)
		if !ok {
			return Usagef("--first-classification %q: want new, returning or stale", o.FirstClassification)
		}
		o.firstClass = s
	}
	o.otherFile = ""
	switch {
	case o.Compare == "" || o.Compare == "flag":
	case strings.HasPrefix(o.Compare, "config="):
		o.otherFile = strings.TrimPrefix(o.Compare, "config=")
		if o.otherFile == "" {
			return Usagef("--compare config=FILE: the file name is empty")
		}
	default:
		return Usagef("--compare %q: want flag or config=FILE", o.Compare)
	}
	if env.Global.JSON() {
		return nil // JSON output draws no chart; --chart is not read
	}
	switch o.Chart {
	case "auto":
		o.chart = env.OutTTY
	case "always":
		o.chart = true
	case "never":
		o.chart = false
	default:
		return Usagef("--chart %q: want auto, always or never", o.Chart)
	}
	return nil
}

// headerFlags maps each convenience flag to the header it sets.
var headerFlags = []struct{ flag, header string }{
	{"model", hdrModel},
	{"routing-key", hdrRoutingKey},
	{"routing-method", hdrRoutingMethod},
	{"affinity-key", hdrCacheAffinity},
	{"input-tokens", hdrInputTokens},
	{"priority", hdrPriority},
	{"slo-ms", hdrRequestSLOMs},
	{"max-wait-ms", hdrMaxWaitMs},
	{"last-cluster", hdrLastClusterID},
	{"request-id", hdrRequestID},
}

func (o *explainOptions) flagValue(name string) string {
	switch name {
	case "model":
		return o.Model
	case "routing-key":
		return o.RoutingKey
	case "routing-method":
		return o.RoutingMethod
	case "affinity-key":
		return o.AffinityKey
	case "input-tokens":
		return o.InputTokens
	case "priority":
		return o.Priority
	case "slo-ms":
		return o.SLOMs
	case "max-wait-ms":
		return o.MaxWaitMs
	case "last-cluster":
		return o.LastCluster
	case "request-id":
		return o.RequestID
	}
	return ""
}

func newExplainCommand(env *Env) *cobra.Command {
	o := &explainOptions{}
	cmd := &cobra.Command{
		Use:   "explain --snapshot FILE --model NAME [--config FILE] [request flags]",
		Short: "Show why a request goes where it goes, over time, flag off vs on",
		Long: `Explain one routing decision: the effective algorithm (resolved from the
lb-config exactly as Stargate resolves it), the session state and the
affinity order before and after last-cluster promotion, every cluster's TTFT
estimate, bucket, admission and verdict, and the decision: dispatch, wait
until when, or reject and why.

The request is given as Stargate's headers (-H 'name: value', parsed with
Stargate's rules) or with the convenience flags. --timeline follows the
decision through every change point (affinity deadline, bucket unlocks, band
openings); --compare flag decides the same request with last_cluster_affinity
off and on; --compare config=OTHER with another config.

--case FILE explains conformance cases instead ('lcctl docs formats'); --check
compares each with its expect block and exits 1 on a mismatch.

Exit codes: 0 explained (whatever the outcome), 1 a --check mismatch,
2 usage or input error.`,
		Example: `  # A returning session whose last cluster C is outside its ring group ('lcctl docs explain'):
  lcctl explain --config examples/explain/returning-outside-group.lb-config.yaml \
    --snapshot examples/explain/returning-outside-group.snapshot.yaml \
    --model model-a --routing-key rk-1 --affinity-key session-6 --last-cluster C \
    --input-tokens 2000 --timeline
  # The same request with last_cluster_affinity off and on, or under another lb-config:
  lcctl explain --config examples/explain/pwaw-sessions.lb-config.yaml \
    --snapshot examples/explain/returning-k1.snapshot.yaml --model model-a --routing-key rk-1 \
    --affinity-key session-6 --last-cluster B --input-tokens 2000 --compare flag
  lcctl explain --config new.json --snapshot snap.yaml --model model-a --input-tokens 2000 --compare config=old.json
  # Headers as Stargate receives them, 250 ms after arrival:
  lcctl explain --snapshot snap.yaml -H 'x-model: model-a' -H 'x-input-tokens: 2000' --elapsed 250ms
  # Conformance cases ('lcctl docs formats'):
  lcctl explain --check --case cases.yaml`,
		Args: cobra.NoArgs,
	}
	wireLeaf(cmd, env, o, runExplain)
	f := cmd.Flags()
	f.StringVar(&o.Config, "config", "", "lb-config `FILE` (JSON or YAML; validated first)")
	addValuesKeyFlag(f, &o.ValuesKey, &o.DataKey)
	f.StringVar(&o.AlgorithmConfig, "algorithm-config", "", "one detailed algorithm object `FILE` instead of a whole lb-config")
	f.StringVar(&o.Snapshot, "snapshot", "", "routing snapshot `FILE` ('lcctl docs formats'; - for standard input)")
	f.StringArrayVarP(&o.Headers, "header", "H", nil, "request header 'name: value' (repeatable; Stargate's header names)")
	f.StringVar(&o.Model, "model", "", "x-model: the model `NAME`")
	f.StringVar(&o.RoutingKey, "routing-key", "", "x-routing-key")
	f.StringVar(&o.RoutingMethod, "routing-method", "", "x-routing-method: an algorithm name, or a routing expression such as 'pulsar;seed=a;consider_kv_free_tokens=true'")
	f.StringVar(&o.AffinityKey, "affinity-key", "", "x-cache-affinity-key")
	f.StringVar(&o.InputTokens, "input-tokens", "", "x-input-tokens: the request's whole input in tokens (0, with a note, when not given)")
	f.StringVar(&o.Priority, "priority", "", "x-priority")
	f.StringVar(&o.SLOMs, "slo-ms", "", "x-request-slo-ms")
	f.StringVar(&o.MaxWaitMs, "max-wait-ms", "", "x-max-wait-ms")
	f.StringVar(&o.LastCluster, "last-cluster", "", "x-stargate-last-cluster-id: the session's last `CLUSTER`")
	f.StringVar(&o.RequestID, "request-id", "", "x-request-id (default lcctl-explain)")
	f.StringVar(&o.Elapsed, "elapsed", "0", "time since the request arrived (`DURATION`: 250ms, 1.5s, or milliseconds)")
	f.StringArrayVar(&o.Exclude, "exclude", nil, "clusters already tried by earlier attempts (`A,B`; repeatable)")
	f.StringVar(&o.FirstClassification, "first-classification", "", "session state pinned by the request's first decision: new, returning or stale")
	f.BoolVar(&o.Timeline, "timeline", false, "show the decisions at every change point until dispatch or the wait budget")
	f.StringVar(&o.Chart, "chart", "auto", "open-set bar chart with --timeline: auto (terminal only), always or never")
	f.StringVar(&o.Compare, "compare", "", "compare the same request: `flag|config=FILE` (flag: last_cluster_affinity off vs on; config=FILE: under another lb-config)")
	f.IntVar(&o.Width, "width", 0, "layout width in columns, 60–1000 (default: the terminal's, else $COLUMNS, else 100, clamped to that range)")
	f.StringVar(&o.Case, "case", "", "explain the conformance cases in `FILE` instead of one request")
	f.BoolVar(&o.Check, "check", false, "with --case: compare each case with its expect block; exit 1 on a mismatch")
	registerExplainLive(o, f)
	o.live.register(f, false)
	o.conn.register(f)
	_ = cmd.RegisterFlagCompletionFunc("source", cobra.FixedCompletions([]string{"prompt_cache_key", "conversation_id", "header"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("chart", cobra.FixedCompletions([]string{"auto", "always", "never"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("first-classification", cobra.FixedCompletions([]string{"new", "returning", "stale"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("compare", cobra.FixedCompletions([]string{"flag", "config="}, cobra.ShellCompDirectiveNoSpace))
	return cmd
}

// runExplain is `lcctl explain`: it gathers the inputs, runs the engine
// (explain_run.go) and renders the report (internal/explain).
func runExplain(ctx context.Context, env *Env, o *explainOptions) error {
	if o.Case != "" {
		return runExplainCases(o, env)
	}
	var err0 error
	if o.liveIn, err0 = prepareExplainLive(ctx, o, env); err0 != nil {
		return err0
	}
	in, notes, err := gatherExplainInputs(o, env)
	if err != nil {
		return err
	}
	var cfg *lb.Config
	if in.ConfigFile != "" {
		if cfg, err = loadExplainConfig(env, configFlag(in.AlgorithmObject), in.ConfigFile, o.ValuesKey, o.DataKey, in.AlgorithmObject, in.Request.Model); err != nil {
			return err
		}
	}
	modelNote := ""
	if !in.AlgorithmObject {
		modelNote = missingModelNote(cfg, labelFor(in.ConfigFile), in.Request.Model, in.Request.RoutingMethod.Set)
	}
	if modelNote != "" {
		notes = append([]string{modelNote}, notes...)
	}
	var other *lb.Config
	otherFile := o.otherFile
	if otherFile != "" {
		if other, err = loadExplainConfig(env, "compare", otherFile, o.ValuesKey, o.DataKey, in.AlgorithmObject, in.Request.Model); err != nil {
			return err
		}
	}

	rep := &explain.Report{Model: in.Request.Model, Snapshot: explain.NewSnapshot(in.Snapshot), Notes: notes}
	rep.Request = requestView(in)
	rep.Run = explain.DecideRun(&in.RunInput, cfg, "", nil)
	switch {
	case o.Compare == "flag":
		c := rep.Run.Config
		if c == nil {
			return Usagef("--compare flag: the request is rejected before an algorithm is chosen (%s)", rep.Run.Decision.Message)
		}
		if c.Algorithm != lb.WaitAndWiden && c.Algorithm != lb.PulsarWaitAndWiden {
			msg := fmt.Sprintf("--compare flag: last_cluster_affinity exists only for wait-and-widen and pulsar-wait-and-widen; the effective algorithm is %s", c.Algorithm)
			if modelNote != "" {
				msg += " because " + modelNote
			}
			return Usagef("%s", msg)
		}
		rep.Compare = &explain.Comparison{What: "flag",
			Left:  explain.DecideRun(&in.RunInput, cfg, "off", func(a *lb.AlgorithmConfig) { a.LastClusterAffinity = false }),
			Right: explain.DecideRun(&in.RunInput, cfg, "on", func(a *lb.AlgorithmConfig) { a.LastClusterAffinity = true })}
	case other != nil:
		left := rep.Run
		left.Label = labelFor(in.ConfigFile)
		otherIn := in.RunInput
		otherIn.ConfigFile = otherFile
		right := explain.DecideRun(&otherIn, other, labelFor(otherFile), nil)
		if right.Label == left.Label {
			left.Label, right.Label = "--config", "--compare"
		}
		rep.Compare = &explain.Comparison{What: "config", Left: left, Right: right}
	}
	if rep.Compare != nil {
		rep.Compare.Differences = explain.Differences(rep, rep.Compare)
		rep.Compare.ConfigFields = explain.ConfigFieldDifferences(rep.Compare)
		rep.Compare.ElapsedMs = rep.Request.ElapsedMs
	}
	o.liveIn.finishReport(rep)
	if env.Global.JSON() {
		if !o.Timeline {
			rep.Run.Timeline, rep.Run.TimelineTruncated = nil, false
		}
		return writeJSON(env.Out, "explain", rep)
	}
	// The text prints the timeline's table only with --timeline, but its
	// decision block follows the waits to their end either way.
	return explain.Text(env.Out, rep, env.Style, explain.Options{Width: explainWidth(o, env), Timeline: o.Timeline, Chart: o.chart})
}

// missingModelNote says that model has no `models` entry in cfg (read from
// file), so Stargate routes it with `default` and default settings (E2),
// or, with x-routing-method (method), with the top-level
// request_algorithms (E3.3), naming the entries there are and the closest
// one; "" when the model has an entry, or cfg has no models at all (every
// model uses default then, nothing to mistype) or is nil.
func missingModelNote(cfg *lb.Config, file, model string, method bool) string {
	if cfg == nil || len(cfg.Models) == 0 {
		return ""
	}
	if _, ok := cfg.Models[model]; ok {
		return ""
	}
	names := slices.Sorted(maps.Keys(cfg.Models))
	list := strings.Join(names, ", ")
	if len(names) > 5 {
		list = strings.Join(names[:5], ", ") + fmt.Sprintf(", … (%d in all)", len(names))
	}
	how := fmt.Sprintf("default (%s) and default settings", cfg.Default)
	if method {
		how = "x-routing-method looked up in the top-level request_algorithms (E3.3)"
	}
	return fmt.Sprintf("%s has no models entry in %s (it has %s): Stargate routes it with %s%s",
		model, file, list, how, suggest.DidYouMean(model, names))
}

func labelFor(file string) string {
	if file == "" {
		return "no config"
	}
	if i := strings.LastIndexAny(file, `/\`); i >= 0 {
		return file[i+1:]
	}
	return file
}

// explainWidth picks the layout width: --width, else the terminal's width,
// else $COLUMNS, else explain.DefaultWidth.
func explainWidth(o *explainOptions, env *Env) int {
	if o.Width > 0 {
		return o.Width
	}
	if w := env.Width(); w > 0 {
		return w
	}
	return explain.DefaultWidth
}

// gatherExplainInputs checks the flags, reads the snapshot and turns the
// headers into a request. Problems with the command line or the files are
// usage errors; a request Stargate would answer with 400 is not an error
// here (it is explained as outcome error).
func gatherExplainInputs(o *explainOptions, env *Env) (*explainInputs, []string, error) {
	if o.Snapshot == "" && (o.liveIn == nil || o.liveIn.snapYAML == nil) {
		return nil, nil, Usagef("explain needs --case FILE, or --snapshot FILE (or the live sources --pylon, --prometheus) and a request (see lcctl explain --help)")
	}
	in := &explainInputs{RunInput: explain.RunInput{ConfigFile: o.Config}}
	if o.AlgorithmConfig != "" {
		in.ConfigFile, in.AlgorithmObject = o.AlgorithmConfig, true
	}
	var notes []string
	var hs HeaderLines
	for _, line := range o.Headers {
		h, err := ParseHeaderLine(line)
		if err != nil {
			return nil, nil, Usagef("-H: %v", err)
		}
		hs = append(hs, h)
	}
	for _, hf := range headerFlags {
		if !o.changed(hf.flag) {
			continue
		}
		if hs.Count(hf.header) > 0 {
			return nil, nil, Usagef("--%s and -H '%s: …' both set %s; give one", hf.flag, hf.header, hf.header)
		}
		v := o.flagValue(hf.flag)
		if strings.ContainsAny(v, "\r\n\x00") {
			return nil, nil, Usagef("--%s: the value contains a control character an HTTP header cannot carry", hf.flag)
		}
		hs = append(hs, HeaderLine{Name: hf.header, Value: v})
	}
	if hs.Count(hdrModel) == 0 {
		return nil, nil, Usagef("the model is required: --model NAME or -H 'x-model: NAME'")
	}
	if hs.Count(hdrRequestID) == 0 {
		hs = append(hs, HeaderLine{Name: hdrRequestID, Value: "lcctl-explain"})
	}
	if hs.Count(hdrInputTokens) == 0 {
		hs = append(hs, HeaderLine{Name: hdrInputTokens, Value: "0"})
		notes = append(notes, "x-input-tokens not given: assuming 0 (Stargate itself answers 400 without it, H4)")
	}
	seen := map[string]bool{}
	for _, h := range hs {
		name := strings.ToLower(h.Name)
		if seen[name] {
			continue
		}
		seen[name] = true
		switch {
		case name == hdrStargateMaxWait:
			notes = append(notes, "x-stargate-max-wait-ms is the proxy's retry budget, not a load-balancer input (H11); ignored")
		case !slices.Contains(loadBalancerHeaders, name):
			notes = append(notes, fmt.Sprintf("header %s is not read by the load balancer; ignored", h.Name))
		case hs.Count(name) > 1:
			notes = append(notes, fmt.Sprintf("%s is repeated: Stargate reads only the first value", name))
		}
	}
	req, err := hs.Request()
	if err != nil {
		var re *lb.RoutingError
		if !errors.As(err, &re) {
			return nil, nil, UsageErr(err)
		}
		in.RoutingError = re
		req.Model, _ = lb.HeaderString(headerValue(hs, hdrModel))
	}
	if v, ok := hs.Get(hdrRoutingMethod); ok && !req.RoutingMethod.Set {
		req.RoutingMethod = lb.OptionalString{Value: v, Set: true}
	}
	if l := len(req.LastClusterID); l > 256 {
		notes = append(notes, fmt.Sprintf("x-stargate-last-cluster-id is %d bytes; the gateway stores ids of at most 256 bytes", l))
	}
	req.Elapsed = o.elapsed
	excl := o.exclude
	req.ExcludedClusterIDs = excl
	if o.FirstClassification != "" {
		req.FirstClassification = o.firstClass
	}
	in.Request = req
	in.headers = hs
	snapName := o.Snapshot
	var data []byte
	if o.Snapshot == "" {
		data, snapName = o.liveIn.snapYAML, liveSnapshotName
	} else if data, err = readFlagInput(env, "snapshot", o.Snapshot, explainInputLimit); err != nil {
		return nil, nil, UsageErr(err)
	}
	snap, err := formats.DecodeSnapshot(snapName, data)
	if err != nil {
		return nil, nil, UsageErr(err)
	}
	in.Snapshot = snap
	for _, id := range excl {
		if snap.Index(id) < 0 {
			notes = append(notes, fmt.Sprintf("--exclude %s: no such cluster in the snapshot; it has no effect (Stargate ignores unknown ids too)", id))
		}
	}
	if snap.Model != "" && in.Request.Model != "" && snap.Model != in.Request.Model {
		notes = append(notes, fmt.Sprintf("the snapshot is for model %s; the request's x-model %s wins", snap.Model, in.Request.Model))
	}
	return in, notes, nil
}

func headerValue(hs HeaderLines, name string) string {
	v, _ := hs.Get(name)
	return v
}

// requestView is the request part of the report.
func requestView(in *explainInputs) explain.Request {
	r := &in.Request
	v := explain.Request{
		RoutingKey: r.RoutingKey, CacheAffinityKey: r.CacheAffinityKey, LastClusterID: r.LastClusterID,
		InputTokens: r.InputTokens, Priority: r.Priority, ExcludedClusterIDs: append([]string{}, r.ExcludedClusterIDs...),
		ElapsedMs: lb.DurationMs(r.Elapsed),
	}
	for _, h := range in.headers {
		v.Headers = append(v.Headers, explain.Header{Name: h.Name, Value: h.Value})
	}
	if r.RoutingMethod.Set {
		m := r.RoutingMethod.Value
		v.RoutingMethod = &m
	}
	if r.RequestSLOMs.Set {
		x := r.RequestSLOMs.Value
		v.RequestSLOMs = &x
	}
	if r.MaxWaitMs.Set {
		x := r.MaxWaitMs.Value
		v.MaxWaitMs = &x
	}
	if r.FirstClassification != lb.SessionNone {
		s := r.FirstClassification.String()
		v.FirstClassification = &s
	}
	if e := in.RoutingError; e != nil {
		v.Error = &explain.RoutingError{Status: e.Status, Code: e.Code, Header: e.Header, Message: e.Message}
	}
	return v
}

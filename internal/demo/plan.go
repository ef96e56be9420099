package demo

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/suggest"
)

// Step names, in the order of the story; `lcctl demo --only NAME` takes
// them.
const (
	// StepValidate validates the shipped lb-configs.
	StepValidate = "validate"
	// StepMigrate shows the bounded migration of the no-SLO config.
	StepMigrate = "migrate"
	// StepPreflight runs the stage-2 checklist against the demo's Olric.
	StepPreflight = "preflight"
	// StepExplain reads a session's last cluster and explains its next
	// request.
	StepExplain = "explain"
	// StepStore scans the store and dry-runs an eviction.
	StepStore = "store"
	// StepSimulate compares policies, the flag off and on.
	StepSimulate = "simulate"
	// StepLive builds a snapshot from Pylon-style /metrics endpoints and
	// explains a session's next request in one command.
	StepLive = "live"
)

// StepNames lists the step names in order (step N is StepNames[N-1]).
var StepNames = []string{StepValidate, StepMigrate, StepPreflight, StepExplain, StepStore, StepSimulate, StepLive}

// DefaultSimRequests is the request count per policy of the simulate step
// (--max-requests): large enough for the flag's effect to show on the
// saturated scenario, small enough to take well under a second per policy.
const DefaultSimRequests = 20000

// EvictCluster is the cluster whose entries the store step's evict dry
// run counts (the smallest share of the demo sessions).
var EvictCluster = store.DemoClusters[2]

// LastClusterArg is the placeholder, in a Command's Args, for the last
// cluster the previous command of the step read from the store; see
// Command.WithLastCluster.
const LastClusterArg = "{last-cluster}"

// ExplainInputTokens is the x-input-tokens of the demo's explain step: a
// chat turn of 2000 tokens, 200 ms of prefill on the example clusters
// (10,000 tokens/s).
const ExplainInputTokens = "2000"

// Params are the inputs of Plan.
type Params struct {
	// Examples is where the example files are.
	Examples Examples
	// OlricAddr is the demo member's address for --olric.
	OlricAddr string
	// SimRequests is --max-requests of the simulate step; 0 means
	// DefaultSimRequests.
	SimRequests int64
	// PylonFlags are the live step's --pylon CLUSTER=URL arguments
	// (Pylons.Flags).
	PylonFlags []string
}

// Step is one step of the story.
type Step struct {
	// Number is the step's position, 1 to len(StepNames).
	Number int
	// Name is one of StepNames.
	Name string
	// Title is the step's heading.
	Title string
	// Story says, in a few sentences, where the step sits in the rollout
	// and what to look at.
	Story string
	// NeedsOlric is true when a command talks to the demo's Olric.
	NeedsOlric bool
	// NeedsPylons is true when a command scrapes the demo's Pylon-style
	// /metrics servers (StartPylons).
	NeedsPylons bool
	// Commands are the lcctl command lines the step runs, in order.
	Commands []Command
}

// Command is one lcctl command line of a step.
type Command struct {
	// Args are the arguments after "lcctl", without the global flags.
	Args []string
	// Expect are the exit codes with which the step runs as designed.
	Expect []int
	// Meaning explains the expected exit code to the operator.
	Meaning string
}

// Expected reports whether code is one of c.Expect.
func (c Command) Expected(code int) bool { return slices.Contains(c.Expect, code) }

// WithLastCluster returns c with every LastClusterArg replaced by cluster.
func (c Command) WithLastCluster(cluster string) Command {
	out := c
	out.Args = make([]string, len(c.Args))
	for i, a := range c.Args {
		if a == LastClusterArg {
			a = cluster
		}
		out.Args[i] = a
	}
	return out
}

// Line returns the command as an operator types it: "lcctl" and the
// arguments, each quoted for a POSIX shell when it needs it.
func (c Command) Line() string {
	parts := make([]string, 0, len(c.Args)+1)
	parts = append(parts, "lcctl")
	for _, a := range c.Args {
		parts = append(parts, ShellQuote(a))
	}
	return strings.Join(parts, " ")
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:=,@%+-]+$`)

// ShellQuote returns s as one word for a POSIX shell: unchanged when it
// has no special characters, else in single quotes.
func ShellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Plan returns the seven steps of the demo. No command writes a file or
// changes the store: migrate runs without --write, store evict without
// --yes, and preflight's Olric probe writes one key outside the store's
// key space and deletes it at once (docs/preflight.md).
func Plan(p Params) []Step {
	ex := p.Examples
	n := p.SimRequests
	if n <= 0 {
		n = DefaultSimRequests
	}
	olric := []string{"--olric", p.OlricAddr}
	session := []string{"--routing-key", Session.RoutingKey, "--model", Session.Model, "--affinity-key", Session.AffinityKey}
	cat := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	return []Step{
		{
			Number: 1, Name: StepValidate,
			Title: "validate: check the lb-configs the new Stargate release will load",
			Story: "Stage 1 starts with the configs. validate checks them as Stargate does at startup and reports every error at once, " +
				"plus what the release changes: warning LC2001 marks no-SLO pulsar-wait-and-widen entries, whose " +
				"\"eligible primary wins\" shortcut the release removes. mistakes.yaml is broken on purpose.",
			Commands: []Command{{
				Args:    []string{"validate", "-q", ex.Path(FileLBConfigs)},
				Expect:  []int{1},
				Meaning: "mistakes.yaml is broken on purpose; warnings alone (LC2001) would not fail the run without --strict",
			}},
		},
		{
			Number: 2, Name: StepMigrate,
			Title: "migrate: bound the no-SLO pulsar-wait-and-widen entries (dry run)",
			Story: "migrate --strategy bounded keeps pulsar-wait-and-widen and adds max_queued and cache_affinity_wait_ms, " +
				"so rank 1 keeps a session's requests while it has room. Without --write it prints the diff and a report " +
				"and writes nothing. Read the version-safety line before deploying such a file ('lcctl docs rollout').",
			Commands: []Command{{
				Args:    []string{"migrate", "--strategy", "bounded", ex.Path(FileNoSLO)},
				Expect:  []int{1},
				Meaning: "1 means changes are pending; nothing was written (no --write)",
			}},
		},
		{
			Number: 3, Name: StepPreflight, NeedsOlric: true,
			Title: "preflight --stage 2: check before turning the gateway store on",
			Story: "Stage 2 turns the gateway's last-cluster store on (STARGATE_LAST_CLUSTER_ENABLED=true) while Stargate still " +
				"ignores the hints. preflight checks the lb-config (flag still off), the gateway's Helm values and the Olric " +
				"the gateway will use: here the demo's embedded member.",
			Commands: []Command{{
				Args: cat([]string{"preflight", "--stage", "2", "--config", ex.Path(FileStage2Config),
					"--gateway-values", ex.Path(FileGatewayValues)}, olric),
				Expect:  []int{0},
				Meaning: "no check failed; the metrics checks are skipped until a gateway serves traffic",
			}},
		},
		{
			Number: 4, Name: StepExplain, NeedsOlric: true,
			Title: "store get → explain: where does this session's next request go?",
			Story: "With the store on, the gateway writes each session's last cluster into Olric and sends it to Stargate " +
				"as x-stargate-last-cluster-id. store get reads the entry of one session; explain then decides that " +
				"session's next request with that last cluster, over time, with last_cluster_affinity off and on (stage 3).",
			Commands: []Command{
				{
					Args:    cat([]string{"store", "get"}, olric, session),
					Expect:  []int{0},
					Meaning: "the entry exists (1 would mean absent or expired)",
				},
				{
					Args: cat([]string{"explain", "--config", ex.Path(FileExplainConfig), "--snapshot", ex.Path(FileExplainSnapshot)},
						session, []string{"--last-cluster", LastClusterArg, "--input-tokens", ExplainInputTokens, "--timeline", "--compare", "flag"}),
					Expect:  []int{0},
					Meaning: "explained",
				},
			},
		},
		{
			Number: 5, Name: StepStore, NeedsOlric: true,
			Title: "store scan and evict: where do the hints point?",
			Story: "scan counts the live entries per cluster. When a cluster is drained or removed, evict --cluster drops " +
				"the hints that point to it, so its sessions are placed afresh. Without --yes evict is a dry run; " +
				"the demo never passes --yes.",
			Commands: []Command{
				{
					Args:    cat([]string{"store", "scan"}, olric, []string{"--summary-only"}),
					Expect:  []int{0},
					Meaning: "every partition was scanned",
				},
				{
					Args:    cat([]string{"store", "evict"}, olric, []string{"--cluster", EvictCluster, "--sample", "3"}),
					Expect:  []int{0},
					Meaning: "dry run, nothing was deleted",
				},
			},
		},
		{
			Number: 6, Name: StepSimulate,
			Title: "simulate --compare: the flag off vs on, before stage 3",
			Story: "The simulator drives the real decision engine over a workload whose rank-1 cluster is saturated, " +
				"here cut to " + strconv.FormatInt(n, 10) + " requests per policy. Compare the lc-off and lc-on rows: " +
				"with the flag on, returning sessions leave their last cluster less often and reuse more KV cache.",
			Commands: []Command{{
				Args:    []string{"simulate", "--scenario", ex.Path(FileScenario), "--compare", "--max-requests", strconv.FormatInt(n, 10)},
				Expect:  []int{0},
				Meaning: "simulated; same scenario and seed, same figures",
			}},
		},
		{
			Number: 7, Name: StepLive, NeedsOlric: true, NeedsPylons: true,
			Title: "snapshot → explain --session-id: from a session id to the decision, on live data",
			Story: "An operator hears \"my multi-turn session got slow\". Each cluster's Pylon exports the stats Stargate routes on " +
				"(here three Pylon-style /metrics endpoints served by the demo); snapshot turns them into a routing snapshot, every " +
				"value annotated with its origin and age. explain then goes from the session id to the decision in one command: it " +
				"derives the cache affinity key as the gateway does, reads the session's last cluster from Olric and starts with " +
				"the provenance of every input.",
			Commands: []Command{
				{
					Args:    cat([]string{"snapshot", "--model", LiveModel, "--overlay", ex.Path(FileLiveOverlay)}, p.PylonFlags),
					Expect:  []int{0},
					Meaning: "the snapshot was written, each value annotated with its origin and age",
				},
				{
					Args: cat([]string{"explain", "--config", ex.Path(FileLiveConfig), "--session-id", LiveSession.SessionID,
						"--source", string(LiveSession.Source), "--routing-key", LiveSession.RoutingKey, "--model", LiveModel},
						olric, []string{"--input-tokens", ExplainInputTokens, "--overlay", ex.Path(FileLiveOverlay)}, p.PylonFlags),
					Expect:  []int{0},
					Meaning: "explained",
				},
			},
		},
	}
}

// LiveSession is the session of the live step: the first demo store
// session, whose entry points to cluster-b.
var LiveSession = store.DemoSessions(2)[0]

// Select returns the steps to run: all of them when step is 0 and only
// is "", else the one numbered step, or the one named by only (a name of
// StepNames or a step number). Errors say what is accepted.
func Select(steps []Step, step int, only string) ([]Step, error) {
	if step != 0 && only != "" {
		return nil, fmt.Errorf("--step and --only both pick a step; give one")
	}
	if only != "" {
		n, err := strconv.Atoi(only)
		if err == nil {
			if n < 1 || n > len(steps) {
				return nil, fmt.Errorf("--only %d: want a step from 1 to %d", n, len(steps))
			}
			return []Step{steps[n-1]}, nil
		}
		for _, s := range steps {
			if s.Name == only {
				return []Step{s}, nil
			}
		}
		return nil, fmt.Errorf("--only %q%s: want one of %s (or a step number)", only, suggest.DidYouMean(only, StepNames), strings.Join(StepNames, ", "))
	}
	if step == 0 {
		return steps, nil
	}
	if step < 1 || step > len(steps) {
		return nil, fmt.Errorf("--step %d: want a step from 1 to %d", step, len(steps))
	}
	return []Step{steps[step-1]}, nil
}

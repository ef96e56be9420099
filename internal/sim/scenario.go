package sim

import (
	"errors"
	"fmt"
	"path/filepath"
	"reflect"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/readlimit"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

// SeedKey names the simulation's master seed (Scenario.Seed) wherever it
// is written: the scenario file's top-level key, simulate's --seed flag
// and the seed key of simulate's JSON report (docs/simulate.md). It is
// not lb-config's seed (lb.FieldSeed), the hash seed of Stargate's ring
// and ranking, which has the same name.
const SeedKey = "seed"

// Scenario is one simulation setup, decoded from a YAML scenario file
// (docs/simulate.md "Scenario file"). Every field has a default; units are
// in the field names (_ms milliseconds, _s seconds, _tps tokens/s,
// _tokens tokens).
type Scenario struct {
	// Name labels the scenario in reports (default: the file's base name).
	Name string `yaml:"name"`
	// Description is free text shown in the text report.
	Description string `yaml:"description"`
	// Seed is the master seed; every random stream is derived from it per
	// purpose (default 1). --seed overrides it. Its key is SeedKey
	// (keyedFields).
	Seed uint64 `yaml:"-"`
	// SLOTTFTMs is the TTFT objective (ms) that goodput counts against
	// (default 2000). --slo-ms overrides it.
	SLOTTFTMs float64 `yaml:"slo_ttft_ms"`
	// WarmupS excludes requests arriving before this time (s) from the
	// request metrics (default 0).
	WarmupS float64 `yaml:"warmup_s"`
	// Clusters are the Stargate clusters, in candidate slice order.
	Clusters []ClusterSpec `yaml:"clusters"`
	// Workload describes the sessions and requests.
	Workload WorkloadSpec `yaml:"workload"`
	// Gateway is the LLM API gateway's last-cluster store.
	Gateway GatewaySpec `yaml:"gateway"`
	// Router is Stargate's view of the clusters and its proxy loop.
	Router RouterSpec `yaml:"router"`
	// Events are cluster drains, failures and restores at given times.
	Events []EventSpec `yaml:"events"`
	// Compare tunes the built-in comparison set (--compare).
	Compare CompareSpec `yaml:"compare"`
	// Policies are the policies a run without --compare, --config and
	// --policy simulates.
	Policies []PolicySpec `yaml:"policies"`

	// Dir is the directory relative paths (trace, lb configs) resolve
	// against: the scenario file's directory.
	Dir string `yaml:"-"`
	// File is the scenario file name as given.
	File string `yaml:"-"`

	dec *decoder
}

// Limits of a scenario. Simulated time is int64 nanoseconds (about 292
// years); these bounds keep every time, every duration and their sums inside
// it, and keep a run's length within reach.
const (
	// MaxSeconds bounds every time and duration a scenario gives (s; about
	// 3.2 years): warmup_s, duration_s, ttl_s, event and burst times, think
	// times, session_expiration_s; slo_ttft_ms is at most MaxSeconds·1000.
	// Without duration_s, sessions stop arriving at MaxSeconds. Drawn and
	// computed durations (a long-tailed think time, the prefill of a huge
	// input) saturate at MaxSeconds.
	MaxSeconds = 1e8
	// MaxTokens bounds token counts (tokens; 2^40, as in traces): the token
	// distributions, hot_set.prefix_tokens, max_context_tokens and
	// kv_cache_tokens. Drawn token counts saturate there.
	MaxTokens = 1 << 40
	// MaxRunRequests bounds the requests one policy run is expected to
	// issue (about 200 s of CPU time; docs/performance.md): a larger
	// generated workload is refused rather than left running for hours.
	MaxRunRequests = 100_000_000
	// MaxBursts bounds workload.bursts, MinBurstS a burst's duration_s
	// (s), and MaxBurstWindows the burst windows (repetitions) of all
	// bursts within the arrival window.
	MaxBursts       = 100
	MinBurstS       = 0.001
	MaxBurstWindows = 10_000_000

	// MaxSnapshots bounds the snapshot publications of one run (every
	// router.snapshot_interval_ms while anything is in flight): the
	// arrival window may not need more, and a run that reaches it while
	// requests are still in flight (requests that take years) fails.
	MaxSnapshots = 100_000_000

	// maxTurns bounds a session's turns (requests).
	maxTurns = 1e6
)

func (s *Scenario) keyedFields() []keyedField { return []keyedField{{SeedKey, &s.Seed}} }

func (s *Scenario) setDefaults() {
	s.Seed = 1
	s.SLOTTFTMs = 2000
}

// ClusterSpec is one simulated cluster: an inference engine with a fixed
// number of slots, a FIFO queue in front of them, one prefill pipeline and
// per-request decode, and a prefix KV cache.
type ClusterSpec struct {
	// ID is the cluster id (required, unique, 1–256 printable ASCII bytes).
	ID string `yaml:"id"`
	// Concurrency is the number of requests served at once (slots,
	// max_engine_concurrency; default 32).
	Concurrency int `yaml:"concurrency"`
	// QueueCapacity is the number of requests that may wait for a slot
	// (requests; default 256; -1 = unbounded, 0 = no queue). A request
	// arriving at a full queue is refused and the router retries elsewhere.
	QueueCapacity int `yaml:"queue_capacity"`
	// PrefillTPS is the prefill throughput of the cluster's single prefill
	// pipeline (tokens/s; default 10000). It is also published as
	// last_mean_input_tps.
	PrefillTPS float64 `yaml:"prefill_tps"`
	// DecodeTPS is the decode speed of one request (tokens/s per request;
	// default 50).
	DecodeTPS float64 `yaml:"decode_tps"`
	// RTTMs is the router↔cluster round trip (ms; default 5): half on the
	// way in, half on the way back.
	RTTMs float64 `yaml:"rtt_ms"`
	// KVCacheTokens is the KV cache capacity (tokens; default 2,000,000),
	// in blocks of workload.block_tokens: running requests reference
	// their blocks, unreferenced blocks stay cached and are evicted least
	// recently freed first (blockCache).
	KVCacheTokens int64 `yaml:"kv_cache_tokens"`
	// MaxInputTPS is the published max_input_tps (tokens/s; the Pulsar
	// weight; default = PrefillTPS).
	MaxInputTPS float64 `yaml:"max_input_tps"`
	// Engine is "fifo" (slots, one FIFO prefill pipeline at prefill_tps,
	// per-request decode at decode_tps; default) or "batched"
	// (iteration-level scheduling: engine_batch.go).
	Engine string `yaml:"engine"`
	// MaxNumBatchedTokens is a batched engine's token budget per
	// iteration (tokens; default 8192, vLLM's max_num_batched_tokens);
	// max_num_seqs is Concurrency.
	MaxNumBatchedTokens int64 `yaml:"max_num_batched_tokens"`
	// Step* are a batched engine's iteration time coefficients:
	// step_ms = step_base_ms + step_prefill_ms_per_token·prefill tokens +
	// step_decode_ms_per_seq·decode sequences + step_kv_read_ms_per_token·
	// context tokens of the decode sequences (ms; defaults: the BLIS
	// blackbox fit for meta-llama/llama-3.1-8b-instruct on one H100,
	// vLLM 0.8.4: 5.7527, 0.017251, 0.005999, and 0 — that fit has no KV
	// term).
	StepBaseMs            float64 `yaml:"step_base_ms"`
	StepPrefillMsPerToken float64 `yaml:"step_prefill_ms_per_token"`
	StepDecodeMsPerSeq    float64 `yaml:"step_decode_ms_per_seq"`
	StepKVReadMsPerToken  float64 `yaml:"step_kv_read_ms_per_token"`
}

// Engine kinds (ClusterSpec.Engine).
const (
	EngineFIFO    = "fifo"
	EngineBatched = "batched"
)

func (c *ClusterSpec) setDefaults() {
	c.Concurrency = 32
	c.QueueCapacity = 256
	c.PrefillTPS = 10000
	c.DecodeTPS = 50
	c.RTTMs = 5
	c.KVCacheTokens = 2_000_000
	c.Engine = EngineFIFO
	c.MaxNumBatchedTokens = 8192
	c.StepBaseMs = 5.752705
	c.StepPrefillMsPerToken = 0.017251
	c.StepDecodeMsPerSeq = 0.005999
}

// WorkloadSpec describes the traffic: sessions arriving as a Poisson
// process, each a conversation of several turns with think time between
// them and a context that grows by the previous input and output plus the
// new tokens; or a trace file.
type WorkloadSpec struct {
	// Trace is a trace file (time_ms,session,input_tokens,output_tokens
	// [,routing_key[,model]]; docs/simulate.md), relative to the scenario
	// file. When set, the session fields below are ignored except
	// payload_share, headers and the request limits.
	Trace string `yaml:"trace"`
	// Replay is open (every trace request at its timestamp; default) or
	// closed (a session's next request its original think time after the
	// simulated end of the previous one; replay.go).
	Replay string `yaml:"replay"`
	// TraceFormat is csv, mooncake or bailian (docs/simulate.md "Trace
	// formats"; default: detected from the first data line).
	TraceFormat string `yaml:"trace_format"`
	// BlockTokens is the KV cache block size (tokens; default 16, and 512
	// for Mooncake traces, whose hash ids stand for 512-token blocks).
	BlockTokens int64 `yaml:"block_tokens"`
	// SystemPromptTokens is a system prompt shared by every session of a
	// model, put before the first turn's input (and before the hot set
	// prefix; tokens; default 0; synthetic workloads only).
	SystemPromptTokens int64 `yaml:"system_prompt_tokens"`
	// SessionRate is the mean session arrival rate (sessions/s; default 1).
	SessionRate float64 `yaml:"session_rate"`
	// DurationS is how long new sessions arrive (s; default 300).
	DurationS float64 `yaml:"duration_s"`
	// Sessions stops arrivals after this many sessions (0 = no limit).
	Sessions int64 `yaml:"sessions"`
	// MaxRequests stops the workload after this many requests: no new
	// session, no further turn (0 = no limit).
	MaxRequests int64 `yaml:"max_requests"`
	// Turns is the number of turns of a session (requests; default
	// geometric, mean 4).
	Turns Dist `yaml:"turns"`
	// ThinkTimeS is the pause between a response and the next turn (s;
	// default exponential, mean 5).
	ThinkTimeS Dist `yaml:"think_time_s"`
	// FirstInputTokens is the first turn's input (tokens; default
	// lognormal, mean 2000, sigma 0.5).
	FirstInputTokens Dist `yaml:"first_input_tokens"`
	// NewInputTokens is the new input of each later turn (tokens; default
	// lognormal, mean 200, sigma 0.5).
	NewInputTokens Dist `yaml:"new_input_tokens"`
	// OutputTokens is each response's length (tokens; default lognormal,
	// mean 250, sigma 0.5).
	OutputTokens Dist `yaml:"output_tokens"`
	// MaxContextTokens ends a session whose next input would exceed it
	// (tokens; default 131072).
	MaxContextTokens int64 `yaml:"max_context_tokens"`
	// PayloadShare is the share of sessions whose session source is the
	// payload hash (gateway.md §2.3): a new cache affinity key every turn,
	// never looked up or written (0–1; default 0).
	PayloadShare float64 `yaml:"payload_share"`
	// RoutingKeys are x-routing-key values with weights (default: none).
	RoutingKeys []WeightedName `yaml:"routing_keys"`
	// Models are x-model values with weights (default: one model "model").
	Models []WeightedName `yaml:"models"`
	// HotSet makes a share of sessions share a few cache affinity keys and
	// a common prefix (system prompt, document).
	HotSet HotSetSpec `yaml:"hot_set"`
	// Bursts multiply the session rate during windows.
	Bursts []BurstSpec `yaml:"bursts"`
	// MaxWaitMs is x-max-wait-ms on every request (ms; absent by default).
	MaxWaitMs *uint64 `yaml:"max_wait_ms"`
	// RequestSLOMs is x-request-slo-ms on every request (ms; absent by
	// default).
	RequestSLOMs *uint64 `yaml:"request_slo_ms"`
	// Priority is x-priority on every request (default 0).
	Priority uint32 `yaml:"priority"`
}

func (w *WorkloadSpec) setDefaults() {
	w.SessionRate = 1
	w.DurationS = 300
	w.Turns = Dist{Kind: DistGeometric, Mean: 4}
	w.ThinkTimeS = Dist{Kind: DistExponential, Mean: 5}
	w.FirstInputTokens = Dist{Kind: DistLognormal, Mean: 2000, Sigma: 0.5}
	w.NewInputTokens = Dist{Kind: DistLognormal, Mean: 200, Sigma: 0.5}
	w.OutputTokens = Dist{Kind: DistLognormal, Mean: 250, Sigma: 0.5}
	w.MaxContextTokens = 131072
	w.Replay = ReplayOpen
}

// Trace replay modes (WorkloadSpec.Replay).
const (
	ReplayOpen   = "open"
	ReplayClosed = "closed"
)

// WeightedName is a name drawn with a relative weight.
type WeightedName struct {
	// Name is the value (non-empty).
	Name string `yaml:"name"`
	// Weight is the relative weight (> 0; default 1).
	Weight float64 `yaml:"weight"`
}

func (w *WeightedName) setDefaults() { w.Weight = 1 }

// HotSetSpec is a set of shared cache affinity keys: Share of the sessions
// use one of Prefixes keys, drawn with Zipf exponent ZipfS, and start with
// PrefixTokens shared tokens that every session of the key can reuse.
type HotSetSpec struct {
	// Prefixes is the number of hot keys (0 = no hot set).
	Prefixes int `yaml:"prefixes"`
	// Share is the share of sessions in the hot set (0–1).
	Share float64 `yaml:"share"`
	// PrefixTokens is the shared prefix length (tokens) added before the
	// first turn's input.
	PrefixTokens int64 `yaml:"prefix_tokens"`
	// ZipfS is the Zipf exponent of the key popularity (≥ 0; 0 = uniform;
	// default 1).
	ZipfS float64 `yaml:"zipf_s"`
}

func (h *HotSetSpec) setDefaults() { h.ZipfS = 1 }

// BurstSpec multiplies the session rate by RateMultiplier from StartS for
// DurationS, once or every EveryS.
type BurstSpec struct {
	// StartS is the first burst's start (s).
	StartS float64 `yaml:"start_s"`
	// DurationS is a burst's length (s, > 0).
	DurationS float64 `yaml:"duration_s"`
	// EveryS repeats the burst with this period (s; 0 = once; ≥ DurationS).
	EveryS float64 `yaml:"every_s"`
	// RateMultiplier multiplies the session rate during the burst (≥ 0;
	// default 2).
	RateMultiplier float64 `yaml:"rate_multiplier"`
}

func (b *BurstSpec) setDefaults() { b.RateMultiplier = 2 }

// GatewaySpec is the LLM API gateway's last-cluster store (gateway.md §5–7).
type GatewaySpec struct {
	// Enabled turns lookups and writes on (default true). Off, no request
	// carries a hint.
	Enabled bool `yaml:"enabled"`
	// Store is "shared" (the Olric DMap: one store, TTL only) or "local"
	// (one LRU per gateway replica; default shared).
	Store string `yaml:"store"`
	// Replicas is the number of gateway replicas a request is spread over
	// uniformly (default 1; matters for the local store).
	Replicas int `yaml:"replicas"`
	// TTLS is the entry lifetime, reset by every write (s; default 600).
	TTLS float64 `yaml:"ttl_s"`
	// MaxEntries is the local store's LRU cap (entries; default 100000).
	MaxEntries int `yaml:"max_entries"`
}

func (g *GatewaySpec) setDefaults() {
	g.Enabled = true
	g.Store = "shared"
	g.Replicas = 1
	g.TTLS = 600
	g.MaxEntries = 100000
}

// RouterSpec is Stargate's side: how fresh its view of the clusters is and
// how its proxy loop waits and retries.
type RouterSpec struct {
	// SnapshotIntervalMs is how often clusters publish ModelStats (ms;
	// default 100).
	SnapshotIntervalMs float64 `yaml:"snapshot_interval_ms"`
	// StalenessMs delays each published snapshot before the router sees it
	// (ms; default 0).
	StalenessMs float64 `yaml:"staleness_ms"`
	// RecheckIntervalMs is the longest the proxy sleeps on a timed wait
	// before deciding again (ms; default 25, Stargate's
	// ROUTING_RETRY interval; 0 = decide again only at the engine's retry
	// instant).
	RecheckIntervalMs float64 `yaml:"recheck_interval_ms"`
	// MaxAttempts bounds the dispatch attempts of one request; a cluster
	// that refuses or fails a request is excluded from the next attempt
	// (default 3).
	MaxAttempts int `yaml:"max_attempts"`
	// Config is an lb-config file (relative to the scenario) that a run
	// without other policy flags simulates in addition to Policies.
	Config string `yaml:"config"`
}

func (r *RouterSpec) setDefaults() {
	r.SnapshotIntervalMs = 100
	r.RecheckIntervalMs = 25
	r.MaxAttempts = 3
}

// EventSpec is a cluster event at a given time.
type EventSpec struct {
	// AtS is the event time (s).
	AtS float64 `yaml:"at_s"`
	// Cluster is the cluster id.
	Cluster string `yaml:"cluster"`
	// Action is "drain" (refuse new requests, finish the running ones),
	// "fail" (drop everything, KV cache included; requests before their
	// first token are retried elsewhere, streaming ones fail) or "restore".
	Action string `yaml:"action"`
}

// CompareSpec tunes the built-in comparison set.
type CompareSpec struct {
	// WaitAndWiden and PulsarWaitAndWiden are algorithm entries (lb-config
	// detailed form, `algorithm` optional) for the wait-and-widen family;
	// last_cluster_affinity is set off and on by the set itself. Default:
	// seed = scenario name, cache_affinity_backend_selection_count 1,
	// cache_affinity_wait_ms 300, cache_affinity_input_tokens_scale 0.1
	// (the upstream e2e last-cluster configs).
	WaitAndWiden       *yaml.Node `yaml:"wait_and_widen"`
	PulsarWaitAndWiden *yaml.Node `yaml:"pulsar_wait_and_widen"`
	// Pulsar and PowerOfN are algorithm entries for those policies
	// (default: the seed above, other fields at Stargate's defaults).
	Pulsar   *yaml.Node `yaml:"pulsar"`
	PowerOfN *yaml.Node `yaml:"power_of_n"`
	// ConsistentHash and StickyLeastLoaded tune the comparison policies.
	ConsistentHash    ConsistentHashSpec    `yaml:"consistent_hash"`
	StickyLeastLoaded StickyLeastLoadedSpec `yaml:"sticky_least_loaded"`
	// Policies selects and orders the set by name (default: all ten; see
	// ComparisonNames).
	Policies []string `yaml:"policies"`
}

// ConsistentHashSpec configures the plain consistent-hashing comparison
// policy.
type ConsistentHashSpec struct {
	// Seed is the ring seed (default: the scenario name), the value the
	// plain ring hashes as lb-config's seed; its key is that field's name,
	// lb.FieldSeed (keyedFields).
	Seed *string `yaml:"-"`
	// VirtualNodes per cluster (default 150).
	VirtualNodes int `yaml:"virtual_nodes"`
}

func (c *ConsistentHashSpec) setDefaults() { c.VirtualNodes = 150 }

func (c *ConsistentHashSpec) keyedFields() []keyedField {
	return []keyedField{{lb.FieldSeed.Name, &c.Seed}}
}

// StickyLeastLoadedSpec configures the sticky_least_loaded comparison
// policy (sticky-least-loaded.md §6–9).
type StickyLeastLoadedSpec struct {
	// SessionExpirationS is the idle expiry (s; default 7200).
	SessionExpirationS float64 `yaml:"session_expiration_s"`
	// MaxSessions bounds the session table (default 100000).
	MaxSessions int `yaml:"max_sessions"`
	// MaxSessionIDBytes is the longest session ID kept (bytes; default 256).
	MaxSessionIDBytes int `yaml:"max_session_id_bytes"`
	// FinishSessions calls finish_session when a session's last turn ends,
	// as SkyRL and prime-rl clients do (default true).
	FinishSessions bool `yaml:"finish_sessions"`
}

func (s *StickyLeastLoadedSpec) setDefaults() {
	s.SessionExpirationS = 7200
	s.MaxSessions = 100000
	s.MaxSessionIDBytes = 256
	s.FinishSessions = true
}

// PolicySpec is one policy of the scenario's own list: exactly one of
// Config, LBConfig, ConsistentHash and StickyLeastLoaded.
type PolicySpec struct {
	// Name labels the policy (required, unique).
	Name string `yaml:"name"`
	// Config is one algorithm entry (detailed object or name string) used
	// for every model.
	Config *yaml.Node `yaml:"config"`
	// LBConfig is an lb-config file (relative to the scenario); each
	// model's entry applies, `default` otherwise.
	LBConfig string `yaml:"lb_config"`
	// ConsistentHash selects the plain consistent-hashing policy.
	ConsistentHash *ConsistentHashSpec `yaml:"consistent_hash"`
	// StickyLeastLoaded selects the sticky_least_loaded policy.
	StickyLeastLoaded *StickyLeastLoadedSpec `yaml:"sticky_least_loaded"`
}

// MaxScenarioBytes bounds a scenario file (bytes); scenarios are a few
// kilobytes.
const MaxScenarioBytes = 16 << 20

// LoadScenario reads and decodes a scenario file of at most
// MaxScenarioBytes.
func LoadScenario(path string) (*Scenario, error) {
	return LoadScenarioWith(path, nil)
}

// LoadScenarioWith is LoadScenario with overrides: apply (when non-nil)
// changes the decoded scenario before it is checked, so that the checks,
// the workload-size check included, see the values the run will use (the
// CLI's --max-requests, --duration-s, --seed and --slo-ms).
func LoadScenarioWith(path string, apply func(*Scenario)) (*Scenario, error) {
	data, err := readFileLimited(path, MaxScenarioBytes)
	if err != nil {
		return nil, err
	}
	return parseScenario(path, data, apply)
}

// readFileLimited reads a file of at most limit bytes. Anything larger,
// including endless devices such as /dev/zero (os.ReadFile read it until
// memory ran out), is an error that names the file.
func readFileLimited(path string, limit int64) ([]byte, error) {
	data, err := readLimited(path, limit)
	var oe *openError
	switch {
	case errors.As(err, &oe):
		return nil, fmt.Errorf("failed to read %s: %w", path, oe.err)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// openError is readLimited's error for a file that could not be opened.
type openError struct{ err error }

func (e *openError) Error() string { return e.err.Error() }
func (e *openError) Unwrap() error { return e.err }

// readLimited is readFileLimited with errors that do not name the file:
// an *openError wrapping the reason when it cannot be opened (missing, a
// FIFO: readlimit.OpenNoStdin), "N bytes is larger than lcctl's L-byte limit",
// or the reason a read failed ("is a directory").
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := readlimit.OpenNoStdin(path)
	if err != nil {
		return nil, &openError{readlimit.Cause(err)}
	}
	defer f.Close()
	data, err := readlimit.ReadFile(f, limit)
	tl, tooLarge := errors.AsType[*readlimit.TooLargeError](err)
	switch {
	case tooLarge && tl.Size >= 0:
		return nil, fmt.Errorf("%d bytes is larger than lcctl's %d-byte limit", tl.Size, limit)
	case tooLarge:
		return nil, fmt.Errorf("larger than lcctl's %d-byte limit", limit)
	case err != nil:
		return nil, readlimit.Cause(err)
	}
	return data, nil
}

// FieldError returns an *InputError at the position of the scenario field
// path (a field path as errors print it: "router.config",
// "policies[1].lb_config"), or of the nearest enclosing field with a
// position: "scenario.yaml:L:C: path: message".
func (sc *Scenario) FieldError(path, format string, args ...any) error {
	d := sc.dec
	if d == nil {
		d = newDecoder(sc.File)
	}
	return d.errPath(path, format, args...)
}

// ParseScenario decodes and checks a scenario from YAML bytes. name is used
// in errors and to resolve relative paths. Unknown fields, wrong types and
// out-of-range values are errors (*InputError with file:line:col and the
// field path). It never panics.
func ParseScenario(name string, data []byte) (sc *Scenario, err error) {
	return parseScenario(name, data, nil)
}

func parseScenario(name string, data []byte, apply func(*Scenario)) (sc *Scenario, err error) {
	defer func() {
		if r := recover(); r != nil { // yaml.v3 has panicked on hostile input before
			sc, err = nil, &InputError{File: name, Msg: fmt.Sprintf("cannot decode: %v", r)}
		}
	}()
	doc, err := yamldoc.Parse(data)
	if err != nil {
		return nil, yamlError(name, err)
	}
	root := *doc
	sc = &Scenario{File: name, Dir: filepath.Dir(name)}
	v := reflect.ValueOf(sc).Elem()
	applyDefaults(v)
	d := newDecoder(name)
	if n, _ := d.resolve(&root, ""); n == nil || isNull(n) {
		return nil, &InputError{File: name, Line: 1, Col: 1, Msg: "empty scenario"}
	}
	if err := d.decode(&root, v, ""); err != nil {
		// The document as a whole could not be decoded (not a mapping,
		// too large): checking the defaults would add noise.
		d.errs = append(d.errs, err)
		return nil, d.collected()
	}
	sc.dec = d
	if sc.Name == "" {
		base := filepath.Base(name)
		sc.Name = base[:len(base)-len(filepath.Ext(base))]
	}
	if apply != nil {
		apply(sc)
	}
	sc.check()
	if err := d.collected(); err != nil {
		return nil, err
	}
	return sc, nil
}

// yamlError is the InputError of a yamldoc error.
func yamlError(name string, err error) error {
	e := yamldoc.SyntaxError(err, nil)
	switch e.Kind {
	case yamldoc.Empty:
		return &InputError{File: name, Line: 1, Col: 1, Msg: "empty scenario"}
	case yamldoc.Syntax:
		return &InputError{File: name, Line: e.Line, Col: e.Col, Msg: "invalid YAML: " + e.Msg}
	}
	return &InputError{File: name, Line: e.Line, Col: e.Col, Msg: e.Msg}
}

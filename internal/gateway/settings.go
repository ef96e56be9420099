package gateway

import (
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/suggest"
)

// LastClusterDMap is the Olric DMap the gateway keeps last-cluster hints
// in (lastcluster.DMapName, gateway.md §5.1). It is a constant of the
// gateway: OLRIC_DMAP_NAME names only the rate-limit DMap.
const LastClusterDMap = "stargate-last-cluster"

// Gateway defaults (config.Default and gateway.md §8).
const (
	DefaultTTL             = 10 * time.Minute
	DefaultLookupTimeout   = 20 * time.Millisecond
	DefaultLocalMaxEntries = 100000
	DefaultOlricBindPort   = 3320
	DefaultMemberlistPort  = 3322
	DefaultPartitionCount  = 271
	DefaultRateLimitDMap   = "rate-limit"
	DefaultMetricsPort     = 9464
)

// Severity ranks a Problem: an error stops the gateway from starting (or,
// for lcctl-only rules, breaks the feature); a warning is worth a look.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Category groups problems by the preflight check that reports them.
type Category string

// Categories (and their preflight check IDs, docs/preflight.md).
const (
	// CategoryValues: values parse and are in range (gateway.settings-valid).
	CategoryValues Category = "values"
	// CategoryOlric: Olric settings are coherent (gateway.olric-coherent).
	CategoryOlric Category = "olric"
	// CategoryDMap: the hint DMap is the one lcctl store uses (gateway.dmap).
	CategoryDMap Category = "dmap"
)

// Problem is one finding about the gateway settings.
type Problem struct {
	Severity Severity `json:"severity"` // error or warning
	Category Category `json:"category"` // which preflight check reports it
	// Name is the environment variable concerned.
	Name string `json:"name"`
	// Pos is where its value came from.
	Pos     Pos    `json:"position"`
	Message string `json:"message"`        // what is wrong, with the raw value
	Hint    string `json:"hint,omitempty"` // what to do
}

// String renders "file:line:col: message".
func (p Problem) String() string { return fmt.Sprintf("%s: %s", p.Pos, p.Message) }

// Setting is one typed setting and the variable it was read from (Var.Value
// empty: not set, Value is the gateway's default).
type Setting[T any] struct {
	Value T   `json:"value"`  // the parsed value, or the default
	Var   Var `json:"source"` // the variable it came from
	// Invalid is true when the variable is set but does not parse: the
	// gateway refuses to start, and Value is only the default (Load
	// reports the problem).
	Invalid bool `json:"invalid"`
}

// Set reports whether the variable was set (non-empty).
func (s Setting[T]) Set() bool { return s.Var.Value != "" }

// Settings are the gateway settings lcctl checks, with the gateway's
// defaults applied to unset variables.
type Settings struct {
	// Kind is the input kind; Files the input files.
	Kind  Kind     `json:"kind"`  // dotenv or helm-values
	Files []string `json:"files"` // input files in order

	// LastClusterEnabled is STARGATE_LAST_CLUSTER_ENABLED (default false).
	LastClusterEnabled Setting[bool] `json:"last_cluster_enabled"`
	// TTL is STARGATE_LAST_CLUSTER_TTL (default 10m), reset on every write.
	TTL Setting[time.Duration] `json:"ttl"`
	// LookupTimeout is STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT (default 20ms).
	LookupTimeout Setting[time.Duration] `json:"lookup_timeout"`
	// LocalMaxEntries is STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES (entries,
	// default 100000; used only with Olric off).
	LocalMaxEntries Setting[int64] `json:"local_max_entries"`

	// OlricEnabled is OLRIC_ENABLED (code default false).
	OlricEnabled Setting[bool] `json:"olric_enabled"`
	// OlricEnv is OLRIC_ENV: local, lan or wan (default local).
	OlricEnv Setting[string] `json:"olric_env"`
	// OlricBindPort and OlricMemberlistPort are the RESP and memberlist
	// ports (defaults 3320, 3322).
	OlricBindPort       Setting[int64] `json:"olric_bind_port"`       // OLRIC_BIND_PORT
	OlricMemberlistPort Setting[int64] `json:"olric_memberlist_port"` // OLRIC_MEMBERLIST_BIND_PORT
	// OlricPeers is OLRIC_PEERS split at commas, trimmed, empties dropped.
	OlricPeers Setting[[]string] `json:"olric_peers"`
	// OlricReplicaCount and OlricPartitionCount; values ≤ 0 are ignored by
	// the gateway (defaults 1 and 271).
	OlricReplicaCount   Setting[int64] `json:"olric_replica_count"`   // OLRIC_REPLICA_COUNT
	OlricPartitionCount Setting[int64] `json:"olric_partition_count"` // OLRIC_PARTITION_COUNT
	// OlricDMapName is OLRIC_DMAP_NAME, the rate-limit DMap (default
	// rate-limit).
	OlricDMapName Setting[string] `json:"olric_dmap_name"`
	// OlricStartupTimeout (default 15s) and OlricShutdownTimeout (5s).
	OlricStartupTimeout  Setting[time.Duration] `json:"olric_startup_timeout"`  // OLRIC_STARTUP_TIMEOUT
	OlricShutdownTimeout Setting[time.Duration] `json:"olric_shutdown_timeout"` // OLRIC_SHUTDOWN_TIMEOUT
	// OlricLogLevel is OLRIC_LOG_LEVEL.
	OlricLogLevel Setting[string] `json:"olric_log_level"`
	// PodNamespace is POD_NAMESPACE: set means Kubernetes discovery.
	PodNamespace Setting[string] `json:"pod_namespace"`
	// RateLimitEnabled is RATE_LIMIT_ENABLED (default true).
	RateLimitEnabled Setting[bool] `json:"rate_limit_enabled"`
	// MetricsPort is METRICS_PORT (default 9464).
	MetricsPort Setting[int64] `json:"metrics_port"`
	// Replicas is the gateway pod count from Helm values, 0 when unknown.
	Replicas int `json:"replicas,omitempty"`
	// ReplicasPos is where Replicas came from.
	ReplicasPos Pos `json:"replicas_position"`
	// OlricSwitch is Env.OlricSwitch: the Helm value that turned Olric on
	// or off (zero for dotenv input).
	OlricSwitch Var `json:"olric_switch"`
}

// Store returns "olric" or "local": which last-cluster store the gateway
// uses (gateway.md §5).
func (s *Settings) Store() string {
	if s.OlricEnabled.Value {
		return "olric"
	}
	return "local"
}

type loader struct {
	env      *Env
	problems []Problem
}

func (l *loader) bad(v Var, reason string) {
	l.problems = append(l.problems, Problem{Severity: SeverityError, Category: CategoryValues, Name: v.Name, Pos: v.Pos,
		Message: fmt.Sprintf("invalid %s=%q: %s", v.Name, v.Value, reason),
		Hint:    hintFor(v)})
}

// hintFor is the hint of a value of v that does not parse: what the
// variable takes, with its default as the example.
func hintFor(v Var) string {
	where := hintName(v)
	switch v.Name {
	case "STARGATE_LAST_CLUSTER_TTL", "STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT", "OLRIC_STARTUP_TIMEOUT", "OLRIC_SHUTDOWN_TIMEOUT":
		return fmt.Sprintf("set %s to a Go duration with a unit, e.g. %s (the default)", where, defaultText[v.Name])
	case "STARGATE_LAST_CLUSTER_ENABLED", "OLRIC_ENABLED", "RATE_LIMIT_ENABLED":
		return fmt.Sprintf("set %s to true or false", where)
	}
	if d, ok := defaultText[v.Name]; ok {
		return fmt.Sprintf("set %s to a base-10 integer, e.g. %s (the default)", where, d)
	}
	return fmt.Sprintf("set %s to a base-10 integer", where)
}

// positiveHint is the hint of a value of v that parses but is not > 0
// (a duration of 0s or -5ms has its unit: the unit is not what is wrong).
func positiveHint(v Var) string {
	what := "a duration above 0"
	if v.Name == "STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES" {
		what = "a count above 0"
	}
	return fmt.Sprintf("set %s to %s, e.g. %s (the default)", hintName(v), what, defaultText[v.Name])
}

// shortDuration is d as an operator writes it: 10m for 10m0s, 2h for
// 2h0m0s.
func shortDuration(d time.Duration) string {
	t := d.String()
	if strings.HasSuffix(t, "m0s") {
		t = t[:len(t)-2]
	}
	if strings.HasSuffix(t, "h0m") {
		t = t[:len(t)-2]
	}
	return t
}

// hintName is the name a hint tells the operator to set: the Helm values
// path for values input, else the variable.
func hintName(v Var) string {
	if v.ValuesPath != "" {
		return v.ValuesPath
	}
	return v.Name
}

// defaultText is the gateway default of the variables whose hints give
// an example, as an operator would write it.
var defaultText = map[string]string{
	"STARGATE_LAST_CLUSTER_TTL":               shortDuration(DefaultTTL),
	"STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT":    shortDuration(DefaultLookupTimeout),
	"STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES": strconv.Itoa(DefaultLocalMaxEntries),
	"OLRIC_STARTUP_TIMEOUT":                   "15s",
	"OLRIC_SHUTDOWN_TIMEOUT":                  "5s",
	"OLRIC_BIND_PORT":                         strconv.Itoa(DefaultOlricBindPort),
	"OLRIC_MEMBERLIST_BIND_PORT":              strconv.Itoa(DefaultMemberlistPort),
	"OLRIC_PARTITION_COUNT":                   strconv.Itoa(DefaultPartitionCount),
	"METRICS_PORT":                            strconv.Itoa(DefaultMetricsPort),
}

func (l *loader) boolean(name string, def bool) Setting[bool] {
	v := l.env.Get(name)
	s := Setting[bool]{Value: def, Var: v}
	if v.Value == "" {
		return s
	}
	b, err := strconv.ParseBool(v.Value)
	if err != nil {
		// The gateway parses with strconv.ParseBool (gateway.md §8.1):
		// yes, no, on and off are not booleans to it.
		l.bad(v, "not a boolean to Go's strconv.ParseBool (1, t, T, TRUE, true, True, 0, f, F, FALSE, false, False); the gateway does not start")
		s.Invalid = true
		return s
	}
	s.Value = b
	return s
}

func (l *loader) integer(name string, def int64) Setting[int64] {
	v := l.env.Get(name)
	s := Setting[int64]{Value: def, Var: v}
	if v.Value == "" {
		return s
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil {
		l.bad(v, err.Error())
		s.Invalid = true
		return s
	}
	s.Value = n
	return s
}

func (l *loader) duration(name string, def time.Duration) Setting[time.Duration] {
	v := l.env.Get(name)
	s := Setting[time.Duration]{Value: def, Var: v}
	if v.Value == "" {
		return s
	}
	d, err := time.ParseDuration(v.Value)
	if err != nil {
		l.bad(v, err.Error())
		s.Invalid = true
		return s
	}
	s.Value = d
	return s
}

func (l *loader) str(name, def string) Setting[string] {
	v := l.env.Get(name)
	if v.Value == "" {
		return Setting[string]{Value: def, Var: v}
	}
	return Setting[string]{Value: v.Value, Var: v}
}

// Load parses the variables of env with the gateway's rules and returns
// the settings (defaults for unset or malformed variables) and the parse
// problems: every malformed value as `invalid NAME="raw": reason`, the way
// the gateway reports startup errors (gateway.md §8.1), plus the reader's
// notes. Range and coherence rules are Validate's.
func Load(env *Env) (*Settings, []Problem) {
	l := &loader{env: env}
	s := &Settings{Kind: env.Kind, Files: env.Files, Replicas: env.Replicas, ReplicasPos: env.ReplicasPos, OlricSwitch: env.OlricSwitch}
	s.LastClusterEnabled = l.boolean("STARGATE_LAST_CLUSTER_ENABLED", false)
	s.TTL = l.duration("STARGATE_LAST_CLUSTER_TTL", DefaultTTL)
	s.LookupTimeout = l.duration("STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT", DefaultLookupTimeout)
	s.LocalMaxEntries = l.integer("STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES", DefaultLocalMaxEntries)
	s.OlricEnabled = l.boolean("OLRIC_ENABLED", false)
	s.OlricEnv = l.str("OLRIC_ENV", "local")
	s.OlricBindPort = l.integer("OLRIC_BIND_PORT", DefaultOlricBindPort)
	s.OlricMemberlistPort = l.integer("OLRIC_MEMBERLIST_BIND_PORT", DefaultMemberlistPort)
	peers := env.Get("OLRIC_PEERS")
	s.OlricPeers = Setting[[]string]{Var: peers}
	for _, p := range strings.Split(peers.Value, ",") {
		if p = strings.TrimSpace(p); p != "" {
			s.OlricPeers.Value = append(s.OlricPeers.Value, p)
		}
	}
	s.OlricReplicaCount = l.integer("OLRIC_REPLICA_COUNT", 1)
	s.OlricPartitionCount = l.integer("OLRIC_PARTITION_COUNT", DefaultPartitionCount)
	s.OlricDMapName = l.str("OLRIC_DMAP_NAME", DefaultRateLimitDMap)
	s.OlricStartupTimeout = l.duration("OLRIC_STARTUP_TIMEOUT", 15*time.Second)
	s.OlricShutdownTimeout = l.duration("OLRIC_SHUTDOWN_TIMEOUT", 5*time.Second)
	s.OlricLogLevel = l.str("OLRIC_LOG_LEVEL", "")
	s.PodNamespace = l.str("POD_NAMESPACE", "")
	s.RateLimitEnabled = l.boolean("RATE_LIMIT_ENABLED", true)
	s.MetricsPort = l.integer("METRICS_PORT", DefaultMetricsPort)
	problems := append(append([]Problem(nil), env.Notes...), l.problems...)
	// A STARGATE_LAST_CLUSTER_* name the gateway does not read is a typo,
	// and so is any name a few edits away from one it reads
	// (OLRIC_ENABLD); other names of the environment are not the
	// gateway's business here.
	for _, n := range env.Names() {
		if slices.Contains(KnownVars, n) {
			continue
		}
		close, ok := suggest.Closest(n, KnownVars)
		if !ok && !strings.HasPrefix(n, "STARGATE_LAST_CLUSTER_") {
			continue
		}
		v := env.Get(n)
		p := Problem{Severity: SeverityWarning, Category: CategoryValues, Name: n, Pos: v.Pos,
			Message: fmt.Sprintf("%s is not a variable the gateway reads", n),
			Hint:    "the last-cluster variables are STARGATE_LAST_CLUSTER_ENABLED, _TTL, _LOOKUP_TIMEOUT and _LOCAL_MAX_ENTRIES"}
		if ok {
			p.Message += fmt.Sprintf("; did you mean %s?", close)
			p.Hint = fmt.Sprintf("rename it to %s: the gateway ignores %s and uses the default", close, n)
		}
		problems = append(problems, p)
	}
	sortProblems(problems)
	return s, problems
}

// KnownVars are the environment variables Load reads (gateway.md §8.1,
// §8.2), in Load's order.
var KnownVars = []string{
	"STARGATE_LAST_CLUSTER_ENABLED", "STARGATE_LAST_CLUSTER_TTL", "STARGATE_LAST_CLUSTER_LOOKUP_TIMEOUT",
	"STARGATE_LAST_CLUSTER_LOCAL_MAX_ENTRIES", "OLRIC_ENABLED", "OLRIC_ENV", "OLRIC_BIND_PORT",
	"OLRIC_MEMBERLIST_BIND_PORT", "OLRIC_PEERS", "OLRIC_REPLICA_COUNT", "OLRIC_PARTITION_COUNT",
	"OLRIC_DMAP_NAME", "OLRIC_STARTUP_TIMEOUT", "OLRIC_SHUTDOWN_TIMEOUT", "OLRIC_LOG_LEVEL",
	"POD_NAMESPACE", "RATE_LIMIT_ENABLED", "METRICS_PORT",
}

// MaxLookupTimeout is the lookup timeout above which Validate warns: the
// lookup runs on the request path, so every request with a slow store waits
// this long (lcctl's choice).
const MaxLookupTimeout = 100 * time.Millisecond

// MaxOlricTTL is the longest TTL that works with Olric: 100 years, as
// store.MaxTTL. An Olric member turns the gateway's PX into an expiry as
// (ttl + now) in int64 nanoseconds since 1970 (olric v0.7.4
// internal/dmap/put.go), which wraps around for TTLs of about 236 years
// and more: the hint is stored already expired and no lookup ever hits.
// The local LRU store keeps time.Time expiries and has no such limit.
const MaxOlricTTL = 100 * 365 * 24 * time.Hour

// Validate applies the range and coherence rules to s and returns the
// problems, sorted by position. storeDMap is the DMap `lcctl store` will
// read and write (LastClusterDMap unless overridden); empty means
// LastClusterDMap.
//
// Rules (gateway.md §5, §8, §12; severities are lcctl's):
//   - values: TTL, lookup timeout and local max entries must be > 0
//     (gateway startup errors); a TTL under 1 ms is an error (the Olric write
//     becomes PX 0, an entry that never expires), and so is a TTL over
//     MaxOlricTTL with Olric on (stored already expired); a lookup timeout
//     above MaxLookupTimeout warns;
//   - olric (when OLRIC_ENABLED): ports in 1–65535 and distinct, not equal
//     to METRICS_PORT; OLRIC_ENV one of local/lan/wan (else treated as
//     local: warning); OLRIC_LOG_LEVEL one of DEBUG/INFO/WARN/ERROR;
//     replica/partition counts ≤ 0 are ignored (warning); startup timeout
//     > 0; peers in host:port form; neither peers nor POD_NAMESPACE means a
//     one-node cluster per replica (warning); with RATE_LIMIT_ENABLED=false
//     older gateway builds do not start Olric (warning); with the feature on
//     and Olric off, several replicas split the hints (warning);
//   - dmap: OLRIC_DMAP_NAME must not be the hint DMap (error), and the hint
//     DMap must be storeDMap (error).
func Validate(s *Settings, storeDMap string) []Problem {
	if storeDMap == "" {
		storeDMap = LastClusterDMap
	}
	var out []Problem
	add := func(sev Severity, cat Category, v Var, hint, format string, args ...any) {
		out = append(out, Problem{Severity: sev, Category: cat, Name: v.Name, Pos: v.Pos, Message: fmt.Sprintf(format, args...), Hint: hint})
	}
	if s.TTL.Set() && s.TTL.Value <= 0 {
		add(SeverityError, CategoryValues, s.TTL.Var, positiveHint(s.TTL.Var), "invalid %s=%q: must be > 0", s.TTL.Var.Name, s.TTL.Var.Value)
	} else if s.TTL.Value < time.Millisecond {
		add(SeverityError, CategoryValues, s.TTL.Var, "use a TTL of at least 1ms (the default is 10m)",
			"%s=%q is under 1 ms: the Olric write becomes PX 0 and the entry never expires", s.TTL.Var.Name, s.TTL.Var.Value)
	} else if s.OlricEnabled.Value && s.TTL.Value > MaxOlricTTL {
		add(SeverityError, CategoryValues, s.TTL.Var, "use a TTL of at most 100 years (the default is 10m)",
			"%s=%q is over 100 years: Olric computes the expiry as now + ttl in int64 nanoseconds, which overflows, so every hint is stored already expired", s.TTL.Var.Name, s.TTL.Var.Value)
	}
	if s.LookupTimeout.Set() && s.LookupTimeout.Value <= 0 {
		add(SeverityError, CategoryValues, s.LookupTimeout.Var, positiveHint(s.LookupTimeout.Var), "invalid %s=%q: must be > 0", s.LookupTimeout.Var.Name, s.LookupTimeout.Var.Value)
	} else if s.LookupTimeout.Value > MaxLookupTimeout {
		add(SeverityWarning, CategoryValues, s.LookupTimeout.Var, "keep the lookup timeout near the default 20ms",
			"%s=%s: every request can wait this long for a slow store before it is routed", s.LookupTimeout.Var.Name, s.LookupTimeout.Value)
	}
	if s.LocalMaxEntries.Set() && s.LocalMaxEntries.Value <= 0 {
		add(SeverityError, CategoryValues, s.LocalMaxEntries.Var, positiveHint(s.LocalMaxEntries.Var), "invalid %s=%q: must be > 0", s.LocalMaxEntries.Var.Name, s.LocalMaxEntries.Var.Value)
	}

	if s.OlricEnabled.Value {
		ports := []struct {
			set  Setting[int64]
			name string
		}{{s.OlricBindPort, "OLRIC_BIND_PORT"}, {s.OlricMemberlistPort, "OLRIC_MEMBERLIST_BIND_PORT"}}
		for _, p := range ports {
			if p.set.Value < 1 || p.set.Value > 65535 {
				v := p.set.Var
				v.Name = p.name
				add(SeverityError, CategoryOlric, v, "use a TCP port between 1 and 65535", "%s=%d is not a TCP port", p.name, p.set.Value)
			}
		}
		if s.OlricBindPort.Value == s.OlricMemberlistPort.Value {
			v := s.OlricMemberlistPort.Var
			if !s.OlricMemberlistPort.Set() {
				v = s.OlricBindPort.Var
			}
			add(SeverityError, CategoryOlric, v, "use distinct ports (chart defaults 3320 and 3322)",
				"Olric's RESP port and memberlist port are both %d", s.OlricBindPort.Value)
		}
		if s.MetricsPort.Value == s.OlricBindPort.Value || s.MetricsPort.Value == s.OlricMemberlistPort.Value {
			add(SeverityError, CategoryOlric, s.MetricsPort.Var, "move METRICS_PORT or the Olric ports apart",
				"METRICS_PORT %d collides with an Olric port", s.MetricsPort.Value)
		}
		switch strings.ToLower(s.OlricEnv.Value) {
		case "local", "lan", "wan":
		default:
			add(SeverityWarning, CategoryOlric, s.OlricEnv.Var, "set OLRIC_ENV to local, lan or wan (lan for multi-pod production)",
				"OLRIC_ENV=%q is not local, lan or wan; the gateway treats it as local", s.OlricEnv.Value)
		}
		if s.OlricLogLevel.Set() {
			switch s.OlricLogLevel.Value {
			case "DEBUG", "INFO", "WARN", "ERROR":
			default:
				add(SeverityWarning, CategoryOlric, s.OlricLogLevel.Var, "use DEBUG, INFO, WARN or ERROR", "OLRIC_LOG_LEVEL=%q is not a level Olric knows", s.OlricLogLevel.Value)
			}
		}
		if s.OlricReplicaCount.Set() && s.OlricReplicaCount.Value <= 0 {
			add(SeverityWarning, CategoryOlric, s.OlricReplicaCount.Var, "remove it or set a positive count", "OLRIC_REPLICA_COUNT=%d is ignored (Olric keeps 1)", s.OlricReplicaCount.Value)
		}
		if s.OlricPartitionCount.Set() && s.OlricPartitionCount.Value <= 0 {
			add(SeverityWarning, CategoryOlric, s.OlricPartitionCount.Var, "remove it or set a positive count", "OLRIC_PARTITION_COUNT=%d is ignored (Olric keeps 271)", s.OlricPartitionCount.Value)
		}
		if s.OlricStartupTimeout.Value <= 0 {
			add(SeverityWarning, CategoryOlric, s.OlricStartupTimeout.Var, "use a positive duration such as 15s", "OLRIC_STARTUP_TIMEOUT=%s leaves no time for the node to start", s.OlricStartupTimeout.Value)
		}
		for _, p := range s.OlricPeers.Value {
			if _, port, err := net.SplitHostPort(p); err != nil || port == "" {
				add(SeverityWarning, CategoryOlric, s.OlricPeers.Var, "list memberlist addresses as host:port (port 3322 by default)", "OLRIC_PEERS entry %q is not host:port", p)
			}
		}
		if len(s.OlricPeers.Value) == 0 && !s.PodNamespace.Set() {
			add(SeverityWarning, CategoryOlric, s.OlricEnabled.Var, "set OLRIC_PEERS, or run in Kubernetes with POD_NAMESPACE (the chart sets it)",
				"no OLRIC_PEERS and no POD_NAMESPACE: each gateway replica forms its own one-node Olric cluster, so hints are not shared")
		}
		if s.LastClusterEnabled.Value && !s.RateLimitEnabled.Value {
			add(SeverityWarning, CategoryOlric, s.RateLimitEnabled.Var, "make sure every replica runs a gateway build with last-cluster hints",
				"RATE_LIMIT_ENABLED=false: gateway builds older than the last-cluster feature start Olric only with rate limiting on")
		}
	} else if s.LastClusterEnabled.Value && s.Replicas > 1 {
		// Named at the value that turned Olric off (Helm values render
		// no OLRIC_ENABLED then), with where each of the three inputs
		// came from.
		off := s.OlricSwitch
		if off.ValuesPath == "" {
			off = s.OlricEnabled.Var
			off.Name = "OLRIC_ENABLED"
		}
		en := s.LastClusterEnabled.Var
		add(SeverityWarning, CategoryOlric, off, "enable Olric (llmApiGateway.olric.enabled=true) so replicas share the hints",
			"last-cluster hints are on (%s) with Olric off (%s) and %d replicas (%s): each replica keeps its own LRU, so the hit rate drops to about 1/%d",
			setting(en, "true"), setting(off, "false"), s.Replicas, setting(Var{ValuesPath: "llmApiGateway.replicaCount", Value: strconv.Itoa(s.Replicas), Pos: s.ReplicasPos}, ""),
			s.Replicas)
	}

	if s.OlricEnabled.Value && s.OlricDMapName.Value == LastClusterDMap {
		add(SeverityError, CategoryDMap, s.OlricDMapName.Var, "keep OLRIC_DMAP_NAME at rate-limit; the hint DMap is fixed",
			"OLRIC_DMAP_NAME=%q: the rate limiter would share the last-cluster DMap", s.OlricDMapName.Value)
	}
	if storeDMap != LastClusterDMap {
		add(SeverityError, CategoryDMap, Var{Name: "DMAP", Pos: Pos{File: "lcctl"}}, "drop --dmap, or set it to "+LastClusterDMap,
			"lcctl store would use DMap %q, but the gateway keeps hints in %q", storeDMap, LastClusterDMap)
	}
	sortProblems(out)
	return out
}

// setting renders v for a finding as "NAME=VALUE, ORIGIN": its values
// path (else its variable name), its raw value (unset when empty) and
// where it came from (Var.Origin).
func setting(v Var, unset string) string {
	name := v.ValuesPath
	if name == "" {
		name = v.Name
	}
	val := v.Value
	if val == "" {
		val = unset
	}
	return fmt.Sprintf("%s=%s, %s", name, val, v.Origin())
}

// Check is Load followed by Validate: the settings and every problem,
// sorted by position.
func Check(env *Env, storeDMap string) (*Settings, []Problem) {
	s, ps := Load(env)
	ps = append(ps, Validate(s, storeDMap)...)
	sortProblems(ps)
	return s, ps
}

func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool {
		a, b := ps[i].Pos, ps[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/readlimit"
	"github.com/lcctl/lcctl/internal/suggest"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

// Environment variables of the config file and the context choice.
const (
	// EnvConfigFile names the config file (below --config-file, above
	// $XDG_CONFIG_HOME/lcctl/config.yaml).
	EnvConfigFile = "LCCTL_CONFIG"
	// EnvContext names the context to use (below --context, above the
	// file's current-context).
	EnvContext = "LCCTL_CONTEXT"
)

// maxConfigFileBytes bounds the config file.
const maxConfigFileBytes = 1 << 20

// contextKey is one setting a context can hold: the flag it fills on each
// command that has it (Flags maps a command path to its flag name; "*" is
// every other command) and the environment variable that, when set, wins
// over the context.
type contextKey struct {
	Key   string
	Flags map[string]string
	Env   string
	Help  string
	// Path is true for a file setting: a relative value is resolved
	// against the config file's directory (a URL is left alone).
	Path bool
}

// flagFor returns the flag name the key fills on the command with path
// (without "lcctl "), "" when none.
func (k contextKey) flagFor(path string) string {
	if f, ok := k.Flags[path]; ok {
		return f
	}
	return k.Flags["*"]
}

// contextKeys are the settings a context holds: where an environment's
// Olric members, Prometheus, metrics endpoints and files are. Each fills
// the flag of the same name unless the command names it differently.
var contextKeys = []contextKey{
	{Key: "olric", Flags: map[string]string{"*": "olric"}, Env: EnvOlricAddrs, Help: "Olric members host:port (a list or a comma-separated string)"},
	{Key: "map-addr", Flags: map[string]string{"*": "map-addr"}, Help: "MEMBER=LOCAL dial mappings (a list; one port-forward per pod)"},
	{Key: "dmap", Flags: map[string]string{"*": "dmap"}, Env: EnvOlricDMap, Help: "the last-cluster DMap"},
	{Key: "dial-timeout", Flags: map[string]string{"*": "dial-timeout"}, Help: "Olric connection timeout (e.g. 2s)"},
	{Key: "request-timeout", Flags: map[string]string{"*": "request-timeout"}, Help: "Olric request timeout"},
	{Key: "password-file", Flags: map[string]string{"*": "password-file"}, Env: EnvOlricPassword, Help: "file holding the Olric password (the password itself is never a context setting)", Path: true},
	{Key: "tls", Flags: map[string]string{"*": "tls"}, Help: "talk TLS to Olric (true/false)"},
	{Key: "tls-ca", Flags: map[string]string{"*": "tls-ca"}, Help: "PEM file of CAs", Path: true},
	{Key: "tls-server-name", Flags: map[string]string{"*": "tls-server-name"}, Help: "server name to verify"},
	{Key: "tls-cert", Flags: map[string]string{"*": "tls-cert"}, Help: "PEM client certificate", Path: true},
	{Key: "tls-key", Flags: map[string]string{"*": "tls-key"}, Help: "PEM client key", Path: true},
	{Key: "prometheus", Flags: map[string]string{"*": "prometheus"}, Help: "Prometheus URL (lcctl snapshot)"},
	{Key: "cluster-label", Flags: map[string]string{"*": "cluster-label"}, Help: "the label holding the cluster id (lcctl snapshot)"},
	{Key: "backend-label", Flags: map[string]string{"*": "backend-label"}, Help: "the label telling backends apart (lcctl snapshot)"},
	{Key: "metric-prefix", Flags: map[string]string{"*": "metric-prefix"}, Help: "Pylon metric prefix (lcctl snapshot)"},
	{Key: "stargate-metrics", Flags: map[string]string{"check metrics": "stargate", "*": "stargate-metrics"}, Help: "Stargate /metrics URL or file (preflight --stargate-metrics, check metrics --stargate)", Path: true},
	{Key: "gateway-metrics", Flags: map[string]string{"check metrics": "gateway", "*": "gateway-metrics"}, Help: "gateway /metrics URL or file (preflight --gateway-metrics, check metrics --gateway)", Path: true},
	{Key: "stargate-prefix", Flags: map[string]string{"*": "stargate-prefix"}, Help: "Stargate --metrics-prefix"},
	{Key: "config", Flags: map[string]string{"preflight": "config", "explain": "config"}, Help: "the lb-config file (preflight --config, explain --config)", Path: true},
	{Key: "gateway-values", Flags: map[string]string{"*": "gateway-values"}, Help: "gateway Helm values files (a list; preflight)", Path: true},
	{Key: "gateway-env", Flags: map[string]string{"*": "gateway-env"}, Help: "gateway env file (preflight)", Path: true},
}

// lookupContextKey finds a key by name.
func lookupContextKey(name string) (contextKey, bool) {
	for _, k := range contextKeys {
		if k.Key == name {
			return k, true
		}
	}
	return contextKey{}, false
}

// configFile is lcctl's config file ($XDG_CONFIG_HOME/lcctl/config.yaml):
//
//	current-context: prod
//	contexts:
//	  prod:
//	    olric: [olric-0:3320, olric-1:3320]
//	    prometheus: http://prometheus.monitoring:9090
//	    cluster-label: cluster
//
// Path is where it was read from; Doc is the YAML tree (kept for `context
// use`, which rewrites current-context only); Exists is false when no
// file is there (every command then runs without a context).
type configFile struct {
	Path    string
	Source  string // how Path was chosen: --config-file, LCCTL_CONFIG or the default
	Exists  bool
	Mode    fs.FileMode
	Current string
	// Contexts maps a name to its settings; a setting is a string or a
	// list of strings, in file order within each context (Order).
	Contexts map[string]map[string][]string
	Order    map[string][]string
	// Lines maps a context and a setting to the setting's 1-based line.
	Lines map[string]map[string]int
	Names []string
	Doc   *yaml.Node
	// Data is the file's bytes as read (within maxConfigFileBytes); Doc's
	// positions refer to them, so a rewrite starts from these bytes.
	Data []byte
}

// configPath chooses the config file: --config-file, else $LCCTL_CONFIG,
// else $XDG_CONFIG_HOME/lcctl/config.yaml, else ~/.config/lcctl/config.yaml.
func configPath(env *Env) (path, source string) {
	if env.Global.ConfigFile != "" {
		return env.Global.ConfigFile, "--config-file"
	}
	if p := env.Env(EnvConfigFile); p != "" {
		return p, "$" + EnvConfigFile
	}
	if x := env.Env("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "lcctl", "config.yaml"), "$XDG_CONFIG_HOME/lcctl/config.yaml"
	}
	// Only the injected environment is read (tests run without the
	// user's own config file).
	home := env.Env("HOME")
	if home == "" {
		return "", "no config file (neither $XDG_CONFIG_HOME nor $HOME is set)"
	}
	return filepath.Join(home, ".config", "lcctl", "config.yaml"), "~/.config/lcctl/config.yaml"
}

// loadConfigFile reads the config file. A missing file at the default
// place is no error (Exists false); one named by --config-file or
// $LCCTL_CONFIG must exist. The error names the file and line.
func loadConfigFile(env *Env) (*configFile, error) {
	path, source := configPath(env)
	cf := &configFile{Path: path, Source: source, Contexts: map[string]map[string][]string{}, Order: map[string][]string{}, Lines: map[string]map[string]int{}}
	if path == "" {
		return cf, nil
	}
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) && source != "--config-file" && source != "$"+EnvConfigFile {
		return cf, nil
	}
	if err != nil {
		return nil, fmt.Errorf("config file %s (%s): %w", path, source, readlimit.Cause(err))
	}
	if st.IsDir() {
		return nil, fmt.Errorf("config file %s (%s) is a directory", path, source)
	}
	data, err := readInput(env, path, maxConfigFileBytes)
	if err != nil {
		return nil, err
	}
	cf.Exists, cf.Mode, cf.Data = true, st.Mode().Perm(), data
	if err := cf.parse(data); err != nil {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return cf, nil
}

// parse reads the file's YAML: current-context and contexts, nothing else.
func (cf *configFile) parse(data []byte) error {
	doc, err := yamldoc.Parse(data)
	var ye *yamldoc.Error
	switch {
	case errors.As(err, &ye) && ye.Kind == yamldoc.Empty:
		doc = &yaml.Node{}
	case err != nil:
		return fmt.Errorf("not valid YAML: %w", err)
	}
	cf.Doc = doc
	if len(doc.Content) == 0 {
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: want a mapping with current-context and contexts", root.Line)
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch k.Value {
		case "current-context":
			if v.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: current-context: want a context name", v.Line)
			}
			cf.Current = v.Value
		case "contexts":
			if v.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: contexts: want a mapping of context names to settings", v.Line)
			}
			for j := 0; j+1 < len(v.Content); j += 2 {
				if err := cf.parseContext(v.Content[j], v.Content[j+1]); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("line %d: unknown key %q (want current-context, contexts)%s", k.Line, k.Value, suggest.DidYouMean(k.Value, []string{"current-context", "contexts"}))
		}
	}
	return nil
}

func (cf *configFile) parseContext(name, body *yaml.Node) error {
	if name.Value == "" || strings.ContainsAny(name.Value, " \t\n") {
		return fmt.Errorf("line %d: context name %q: want a name without spaces", name.Line, name.Value)
	}
	if _, dup := cf.Contexts[name.Value]; dup {
		return fmt.Errorf("line %d: context %q is defined twice", name.Line, name.Value)
	}
	if body.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: context %q: want a mapping of settings", body.Line, name.Value)
	}
	names := make([]string, len(contextKeys))
	for i, k := range contextKeys {
		names[i] = k.Key
	}
	settings := map[string][]string{}
	for i := 0; i+1 < len(body.Content); i += 2 {
		k, v := body.Content[i], body.Content[i+1]
		if _, ok := lookupContextKey(k.Value); !ok {
			hint := suggest.DidYouMean(k.Value, names)
			if strings.Contains(strings.ToLower(k.Value), "password") || strings.Contains(strings.ToLower(k.Value), "token") {
				hint = " (a context never holds a secret itself: name a file with password-file, or use $" + EnvOlricPassword + ")"
			}
			return fmt.Errorf("line %d: context %q: unknown setting %q%s; settings: %s", k.Line, name.Value, k.Value, hint, strings.Join(names, ", "))
		}
		if _, dup := settings[k.Value]; dup {
			return fmt.Errorf("line %d: context %q: %s is set twice", k.Line, name.Value, k.Value)
		}
		var vals []string
		switch v.Kind {
		case yaml.ScalarNode:
			vals = []string{v.Value}
		case yaml.SequenceNode:
			for _, it := range v.Content {
				if it.Kind != yaml.ScalarNode {
					return fmt.Errorf("line %d: context %q: %s: want strings", it.Line, name.Value, k.Value)
				}
				vals = append(vals, it.Value)
			}
		default:
			return fmt.Errorf("line %d: context %q: %s: want a string or a list of strings", v.Line, name.Value, k.Value)
		}
		settings[k.Value] = vals
		cf.Order[name.Value] = append(cf.Order[name.Value], k.Value)
		if cf.Lines == nil {
			cf.Lines = map[string]map[string]int{}
		}
		if cf.Lines[name.Value] == nil {
			cf.Lines[name.Value] = map[string]int{}
		}
		cf.Lines[name.Value][k.Value] = k.Line
	}
	cf.Contexts[name.Value] = settings
	cf.Names = append(cf.Names, name.Value)
	return nil
}

// selectedContext names the context in force and how it was chosen:
// --context, else $LCCTL_CONTEXT, else the file's current-context; ""
// when none. A name that is not in the file is an error.
func (cf *configFile) selectedContext(env *Env) (name, source string, err error) {
	switch {
	case env.Global.Context != "":
		name, source = env.Global.Context, "--context"
		if env.Global.ContextFrom != "" {
			name, source = env.Global.Context, env.Global.ContextFrom
		}
	case env.Env(EnvContext) != "":
		name, source = env.Env(EnvContext), "$"+EnvContext
	case cf.Current != "":
		name, source = cf.Current, "current-context in "+cf.Path
	default:
		return "", "", nil
	}
	if _, ok := cf.Contexts[name]; !ok {
		where := "no config file at " + cf.Path
		if cf.Path == "" {
			where = "no config file"
		}
		if cf.Exists {
			where = cf.Path + " defines " + describeNames(cf.Names)
		}
		return "", "", fmt.Errorf("context %q (%s) does not exist: %s%s", name, source, where, suggest.DidYouMean(name, cf.Names))
	}
	return name, source, nil
}

func describeNames(names []string) string {
	if len(names) == 0 {
		return "no context"
	}
	return "the contexts " + strings.Join(names, ", ")
}

// warnings are the notes a loaded config file gets on stderr: a file
// others can read or write, and secrets in plain text (a URL with a
// password) in the context in use.
func (cf *configFile) warnings(context string) []string {
	var out []string
	if cf.Exists && cf.Mode&0o077 != 0 {
		out = append(out, fmt.Sprintf("%s is accessible by other users (mode %04o): run chmod 600 %s", cf.Path, cf.Mode, cf.Path))
	}
	if context == "" {
		return out
	}
	for _, key := range cf.Order[context] {
		for _, v := range cf.Contexts[context][key] {
			if u, err := url.Parse(v); err == nil && u.User != nil {
				if _, has := u.User.Password(); has {
					out = append(out, fmt.Sprintf("context %q stores a password in plain text in %s (%s URL): anyone who can read the file can use it", context, cf.Path, key))
				} else {
					out = append(out, fmt.Sprintf("context %q stores a credential in plain text in %s (the user part of the %s URL, often a token)", context, cf.Path, key))
				}
			}
		}
	}
	return out
}

// contextOrigin is where a flag's value came from when a context
// setting filled it (applyContext): the context, its config file, the
// setting and its line.
type contextOrigin struct {
	Context, File, Key string
	Line               int // 1-based line of the setting in File
}

// String names the setting: context "prod", setting olric at FILE:LINE.
func (o contextOrigin) String() string {
	return fmt.Sprintf("context %q, setting %s at %s:%d", o.Context, o.Key, o.File, o.Line)
}

// applyContext fills the command's flags from the context in force, for
// every flag not given on the command line whose environment variable is
// not set either: precedence flag > env > context > default. It runs in
// the root's PersistentPreRunE, after flag parsing and before the
// command's run function. Each flag it fills is recorded in
// env.contextFlags, so that an error about the value names the context
// (withContextOrigin). A blank setting that would fill a flag is a usage
// error naming the context, its file and line: the command line's
// "--olric is empty … leave the flag out" would name a flag never given.
func applyContext(cmd *cobra.Command, env *Env) error {
	env.contextFlags = nil
	if cmd.Name() == "context" || cmd.Parent() != nil && cmd.Parent().Name() == "context" {
		return nil // the context commands read the file themselves
	}
	cf, err := loadConfigFile(env)
	if err != nil {
		return UsageErr(err)
	}
	name, _, err := cf.selectedContext(env)
	if err != nil {
		return UsageErr(err)
	}
	for _, w := range cf.warnings(name) {
		fmt.Fprintf(env.Err, "lcctl: warning: %s\n", w)
	}
	if name == "" {
		return nil
	}
	path := strings.TrimPrefix(cmd.CommandPath(), "lcctl ")
	settings := cf.Contexts[name]
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		k, _ := lookupContextKey(key)
		fl := cmd.Flags().Lookup(k.flagFor(path))
		if fl == nil || fl.Changed || (k.Env != "" && env.Env(k.Env) != "") {
			continue
		}
		vals := settings[key]
		origin := contextOrigin{Context: name, File: cf.Path, Key: key, Line: cf.Lines[name][key]}
		if len(vals) == 0 || slices.ContainsFunc(vals, func(v string) bool { return strings.TrimSpace(v) == "" }) {
			then := "--" + fl.Name + " from the command line or its default"
			if k.Env != "" {
				then = "--" + fl.Name + " from the command line or $" + k.Env
			}
			return Usagef("%s, is empty (want %s): give a value, or remove the setting (then %s applies)", origin, k.Help, then)
		}
		if k.Path {
			vals = resolveContextPaths(cf.Path, vals)
		}
		if err := setFlag(cmd.Flags(), fl, vals); err != nil {
			return Usagef("%s: %v", origin, err)
		}
		if env.contextFlags == nil {
			env.contextFlags = map[string]contextOrigin{}
		}
		env.contextFlags[fl.Name] = origin
	}
	return nil
}

// withContextOrigin adds to err, when its message is about a flag a
// context filled (--olric, not given on the command line), which context
// setting the value came from: "; --olric is context "a", setting olric
// at FILE:LINE". An ExitError keeps its code and details; an error
// without a message (ErrFindings) and one that already names the context
// are returned as they are.
//
// An error whose message does not spell the flag (the store's "cannot
// connect to Olric: …") is marked with aboutFlag; a failed check of a
// report goes through contextNotes (annotateContextChecks). Both end the
// same way.
func withContextOrigin(env *Env, err error) error {
	if err == nil || len(env.contextFlags) == 0 {
		return err
	}
	msg := err.Error()
	var about []string
	var fv *flagValueError
	if errors.As(err, &fv) {
		about = append(about, fv.flag)
	}
	notes := contextNotes(env, msg, about...)
	if notes == "" {
		return err
	}
	wrapped := fmt.Errorf("%w%s", err, notes)
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err == nil {
			return err
		}
		return &ExitError{Code: ee.Code, Err: wrapped, Details: ee.Details}
	}
	return wrapped
}

// contextNotes returns the ending "; --FLAG is context "NAME", setting
// KEY at FILE:LINE" (one per flag, in flag order) for every flag a
// context filled that msg mentions or that about names, leaving out a
// context msg already names; "" when there is none.
func contextNotes(env *Env, msg string, about ...string) string {
	flags := make([]string, 0, len(env.contextFlags))
	for f := range env.contextFlags {
		flags = append(flags, f)
	}
	sort.Strings(flags)
	var b strings.Builder
	for _, f := range flags {
		o := env.contextFlags[f]
		if (mentionsFlag(msg, f) || slices.Contains(about, f)) && !strings.Contains(msg, fmt.Sprintf("context %q", o.Context)) {
			b.WriteString("; --" + f + " is " + o.String())
		}
	}
	return b.String()
}

// valueOrigin names where the value of --flag came from, for a message
// about it: "--flag" when given on the command line, the context setting
// (contextOrigin's form) when a context filled it, else "$"+envVar (a
// value neither given nor filled can only be the variable's, or the
// default when envVar is "").
func valueOrigin(env *Env, given func(string) bool, flag, envVar string) string {
	if o, ok := env.contextFlags[flag]; ok {
		return o.String()
	}
	if given(flag) || envVar == "" {
		return "--" + flag
	}
	return "$" + envVar
}

// flagValueError marks err as being about the value of --flag although
// its message need not spell the flag, so that withContextOrigin names
// the context that supplied the value. The message is err's.
type flagValueError struct {
	flag string
	err  error
}

func (e *flagValueError) Error() string { return e.err.Error() }
func (e *flagValueError) Unwrap() error { return e.err }

// aboutFlag marks err (nil stays nil) as about the value of --flag (the
// name without dashes): an unreachable address, a URL that does not
// answer.
func aboutFlag(flag string, err error) error {
	if err == nil {
		return nil
	}
	return &flagValueError{flag: flag, err: err}
}

// annotateContextChecks ends the reason of every failed or warning
// result of rep whose check is about the value of a flag (about maps a
// check ID to the flag's name) with contextNotes, when a context filled
// that flag: the report's form of withContextOrigin.
func annotateContextChecks(env *Env, rep *checks.Report, about map[string]string) {
	if len(env.contextFlags) == 0 {
		return
	}
	for _, g := range rep.Groups {
		for i := range g.Checks {
			r := &g.Checks[i]
			f, ok := about[r.ID]
			if !ok || (r.Status != checks.StatusFail && r.Status != checks.StatusWarn) {
				continue
			}
			r.Reason += contextNotes(env, r.Reason+" "+r.Hint, f)
		}
	}
}

// mentionsFlag reports whether msg names --flag (not as the start of a
// longer flag name such as --olric-x).
func mentionsFlag(msg, flag string) bool {
	needle := "--" + flag
	for i := strings.Index(msg, needle); i >= 0; {
		end := i + len(needle)
		if end == len(msg) || !(msg[end] == '-' || msg[end] == '_' || msg[end] >= 'a' && msg[end] <= 'z' || msg[end] >= '0' && msg[end] <= '9') {
			return true
		}
		j := strings.Index(msg[end:], needle)
		if j < 0 {
			return false
		}
		i = end + j
	}
	return false
}

// resolveContextPaths makes relative file values of a context relative to
// the config file's directory, so that a context works from any current
// directory; absolute paths, "-" and URLs are kept.
func resolveContextPaths(configPath string, vals []string) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = v
		if v != "" && v != "-" && !filepath.IsAbs(v) && !strings.Contains(v, "://") && configPath != "" {
			out[i] = filepath.Join(filepath.Dir(configPath), v)
		}
	}
	return out
}

// setFlag sets a flag from a context value, as if given on the command
// line: each item of a repeatable flag, the items joined by commas for
// any other.
func setFlag(fs *pflag.FlagSet, fl *pflag.Flag, vals []string) error {
	switch fl.Value.Type() {
	case "stringArray", "stringSlice":
		for _, v := range vals {
			if err := fs.Set(fl.Name, v); err != nil {
				return err
			}
		}
		return nil
	}
	return fs.Set(fl.Name, strings.Join(vals, ","))
}

package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/renameio/v2/maybe"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/store"
	"github.com/lcctl/lcctl/internal/ui"
)

// addContextFlags registers the global --context and --config-file flags.
func addContextFlags(root *cobra.Command, g *GlobalOptions) {
	pf := root.PersistentFlags()
	pf.StringVar(&g.Context, "context", "", "use this context of the config file (default $"+EnvContext+", else its current-context)")
	pf.StringVar(&g.ConfigFile, "config-file", "", "lcctl's config file (default $"+EnvConfigFile+", else $XDG_CONFIG_HOME/lcctl/config.yaml)")
}

func newContextCommand(env *Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "context",
		Short: "List, choose and show the contexts of lcctl's config file",
		Long: `A context names one environment's settings — Olric members, --map-addr
mappings, the Prometheus URL and cluster label, metrics URLs, the lb-config
and gateway values files — so that 'lcctl --context prod store scan' needs
no other flag. Contexts live in lcctl's config file:

  --config-file PATH, else $LCCTL_CONFIG, else
  $XDG_CONFIG_HOME/lcctl/config.yaml (~/.config/lcctl/config.yaml)

  current-context: prod
  contexts:
    prod:
      olric: [olric-0.olric:3320, olric-1.olric:3320]
      prometheus: http://prometheus.monitoring:9090
      cluster-label: cluster
    local:
      olric: 127.0.0.1:3320
      map-addr: [10.0.3.7:3320=127.0.0.1:13320]

The context in force is --context NAME, else $LCCTL_CONTEXT, else
current-context. Each setting fills the flag of the same name on every
command that has it, with precedence flag > environment variable > context
> the flag's default ('lcctl context show --resolved' shows which applies).
A context never holds a password itself (password-file names a file); a URL
with credentials in it gets a warning on every use, and so does a config
file other users can read (keep it at mode 0600).`,
		Example: `  lcctl context list
  lcctl context use prod
  lcctl context show --resolved
  lcctl --context staging store stats`,
	}
	cmd.AddCommand(newContextListCommand(env), newContextUseCommand(env), newContextShowCommand(env))
	return cmd
}

// contextListReport is the JSON output of `lcctl context list`.
type contextListReport struct {
	File     string             `json:"file"`
	Exists   bool               `json:"exists"`
	Current  string             `json:"current_context"`
	Selected string             `json:"selected_context"`
	Contexts []contextListEntry `json:"contexts"`
}

type contextListEntry struct {
	Name     string              `json:"name"`
	Current  bool                `json:"current"`
	Settings map[string][]string `json:"settings"`
}

func loadForContextCommand(env *Env) (*configFile, string, string, error) {
	cf, err := loadConfigFile(env)
	if err != nil {
		return nil, "", "", UsageErr(err)
	}
	name, source, err := cf.selectedContext(env)
	if err != nil {
		return nil, "", "", UsageErr(err)
	}
	return cf, name, source, nil
}

// contextFile is what the validate step of the context commands loads:
// lcctl's config file and the context in force.
type contextFile struct {
	cf *configFile
	// name is the context in force ("" none) and source what chose it.
	name, source string
}

// load reads the config file and selects the context; a file that does
// not parse or an unknown context is a usage error.
func (c *contextFile) load(env *Env) error {
	cf, name, source, err := loadForContextCommand(env)
	if err != nil {
		return err
	}
	c.cf, c.name, c.source = cf, name, source
	return nil
}

// contextListOptions are the (no) arguments of `lcctl context list`.
type contextListOptions struct {
	cmdInput
	contextFile
}

// validate loads the config file.
func (o *contextListOptions) validate(env *Env) error { return o.load(env) }

func newContextListCommand(env *Env) *cobra.Command {
	return wireLeaf(&cobra.Command{
		Use:     "list",
		Short:   "List the contexts of the config file (* marks the one in force)",
		Example: "  lcctl context list\n  lcctl context list -o json",
		Args:    cobra.NoArgs,
	}, env, &contextListOptions{}, runContextList)
}

// runContextList lists the contexts of the loaded file.
func runContextList(_ context.Context, env *Env, o *contextListOptions) error {
	cf, selected := o.cf, o.name
	for _, w := range cf.warnings("") {
		fmt.Fprintf(env.Err, "lcctl: warning: %s\n", w)
	}
	rep := contextListReport{File: cf.Path, Exists: cf.Exists, Current: cf.Current, Selected: selected, Contexts: []contextListEntry{}}
	for _, n := range cf.Names {
		rep.Contexts = append(rep.Contexts, contextListEntry{Name: n, Current: n == selected, Settings: redactSettings(cf.Contexts[n])})
	}
	if env.Global.JSON() {
		return writeJSON(env.Out, "context-list", rep)
	}
	if !cf.Exists {
		fmt.Fprintf(env.Out, "no config file at %s; 'lcctl context --help' shows its format\n", ui.Printable(cf.Path))
		return nil
	}
	width := len("NAME")
	for _, n := range cf.Names {
		width = max(width, len(n))
	}
	fmt.Fprintf(env.Out, "  %-*s  %s\n", width, "NAME", "SETTINGS")
	for _, n := range cf.Names {
		mark := " "
		if n == selected {
			mark = "*"
		}
		fmt.Fprintf(env.Out, "%s %-*s  %s\n", mark, width, ui.Printable(n), strings.Join(cf.Order[n], ", "))
	}
	fmt.Fprintf(env.Out, "%s\n", env.Style.Faint.Render("config file: "+ui.Printable(cf.Path)))
	return nil
}

// contextUseOptions are the argument of `lcctl context use NAME`.
type contextUseOptions struct {
	cmdInput
	// Set by validate: the config file and the context to make current.
	cf   *configFile
	name string
}

// validate loads the config file and checks that it exists and has the
// context args[0]; both are usage errors.
func (o *contextUseOptions) validate(env *Env) error {
	if len(o.args) != 1 {
		return Usagef("context use takes one context name")
	}
	o.name = o.args[0]
	cf, err := loadConfigFile(env)
	if err != nil {
		return UsageErr(err)
	}
	if !cf.Exists {
		return Usagef("no config file at %s: create it with the contexts first ('lcctl context --help' shows the format)", cf.Path)
	}
	saved, savedFrom := env.Global.Context, env.Global.ContextFrom
	env.Global.Context, env.Global.ContextFrom = o.name, "the argument of context use"
	_, _, err = cf.selectedContext(env)
	env.Global.Context, env.Global.ContextFrom = saved, savedFrom
	if err != nil {
		return UsageErr(err)
	}
	o.cf = cf
	return nil
}

func newContextUseCommand(env *Env) *cobra.Command {
	return wireLeaf(&cobra.Command{
		Use:   "use NAME",
		Short: "Make NAME the current context (rewrites current-context in the config file)",
		Long: `Set current-context in the config file to NAME. Only that line changes
(comments and the rest of the file are kept); the file is replaced
atomically and keeps its mode.`,
		Example: "  lcctl context use prod",
		Args:    cobra.ExactArgs(1),
	}, env, &contextUseOptions{}, runContextUse)
}

// runContextUse rewrites current-context in the validated file.
func runContextUse(_ context.Context, env *Env, o *contextUseOptions) error {
	cf, name := o.cf, o.name
	data, err := setCurrentContext(cf, name)
	if err != nil {
		return fmt.Errorf("%s: %w", cf.Path, err)
	}
	// Through a symlink: the link stays, its target is replaced.
	target := cf.Path
	if resolved, err := filepath.EvalSymlinks(cf.Path); err == nil {
		target = resolved
	}
	if err := maybe.WriteFile(target, data, cf.Mode); err != nil {
		return fmt.Errorf("write %s: %w (the file is unchanged)", cf.Path, err)
	}
	if env.Global.JSON() {
		return writeJSON(env.Out, "context-use", map[string]string{"file": cf.Path, "current_context": name})
	}
	fmt.Fprintf(env.Out, "current context: %s (%s)\n", ui.Printable(name), ui.Printable(cf.Path))
	if override := env.Env(EnvContext); override != "" && override != name {
		fmt.Fprintf(env.Err, "lcctl: note: $%s=%s still chooses another context in this shell\n", EnvContext, ui.Printable(override))
	}
	return nil
}

// setCurrentContext returns the file's bytes with current-context set to
// name: the value's bytes replaced in place, or a first line added.
func setCurrentContext(cf *configFile, name string) ([]byte, error) {
	data := cf.Data // the bytes Doc's positions refer to
	quoted, err := yaml.Marshal(name)
	if err != nil {
		return nil, err
	}
	value := strings.TrimSuffix(string(quoted), "\n")
	if cf.Doc != nil && len(cf.Doc.Content) > 0 {
		root := cf.Doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value != "current-context" {
				continue
			}
			v := root.Content[i+1]
			lt := strings.SplitAfter(string(data), "\n")
			if v.Line < 1 || v.Line > len(lt) {
				break
			}
			line := lt[v.Line-1]
			col := v.Column - 1
			// The old value is a single-line scalar written as v.Value,
			// plain or quoted.
			for _, old := range []string{v.Value, `"` + v.Value + `"`, `'` + v.Value + `'`} {
				if col >= 0 && col+len(old) <= len(line) && line[col:col+len(old)] == old {
					lt[v.Line-1] = line[:col] + value + line[col+len(old):]
					out := []byte(strings.Join(lt, ""))
					check := &configFile{Contexts: map[string]map[string][]string{}, Order: map[string][]string{}}
					if err := check.parse(out); err != nil || check.Current != name {
						return nil, fmt.Errorf("could not rewrite current-context safely (line %d); edit it by hand", v.Line)
					}
					return out, nil
				}
			}
			return nil, fmt.Errorf("could not rewrite current-context safely (line %d); edit it by hand", v.Line)
		}
	}
	nl := "\n"
	if i := strings.IndexByte(string(data), '\n'); i > 0 && data[i-1] == '\r' {
		nl = "\r\n" // keep the file's line endings
	}
	return append([]byte("current-context: "+value+nl), data...), nil
}

// resolvedSetting is one row of `lcctl context show --resolved`.
type resolvedSetting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
	// From is env, context or default.
	From string `json:"from"`
	// Detail names the variable, the context, or the flag whose default
	// applies.
	Detail string `json:"detail"`
}

// contextShowReport is the JSON output of `lcctl context show`.
type contextShowReport struct {
	File     string              `json:"file"`
	Context  string              `json:"context"`
	ChosenBy string              `json:"chosen_by"`
	Settings map[string][]string `json:"settings"`
	// Resolved is set with --resolved: every setting lcctl knows, with the
	// value a command would use and where it comes from.
	Resolved []resolvedSetting `json:"resolved,omitempty"`
}

// contextShowOptions are the flags and argument of
// `lcctl context show [NAME]`.
type contextShowOptions struct {
	cmdInput
	resolved bool
	contextFile
}

// validate makes args[0], when given, the context in force and loads the
// config file; an unknown context is a usage error.
func (o *contextShowOptions) validate(env *Env) error {
	if len(o.args) == 1 {
		env.Global.Context, env.Global.ContextFrom = o.args[0], "the argument of context show"
	}
	return o.load(env)
}

func newContextShowCommand(env *Env) *cobra.Command {
	o := &contextShowOptions{}
	cmd := &cobra.Command{
		Use:   "show [NAME]",
		Short: "Show a context's settings (the one in force by default)",
		Long: `Print the settings of context NAME, or of the context in force
(--context, $LCCTL_CONTEXT, current-context). URLs are shown with their
password replaced by xxxxx.

--resolved lists every setting a context can hold with the value a command
would use and where it comes from, by the precedence

  flag on the command line > environment variable > context > default

(a flag given to a command always wins; it is not part of this listing).`,
		Example: "  lcctl context show\n  lcctl context show staging\n  lcctl --context prod context show --resolved -o json",
		Args:    cobra.MaximumNArgs(1),
	}
	cmd.Flags().BoolVar(&o.resolved, "resolved", false, "list every setting with the value in force and where it comes from (env, context, default)")
	return wireLeaf(cmd, env, o, runContextShow)
}

// runContextShow prints the settings of the validated context.
func runContextShow(_ context.Context, env *Env, o *contextShowOptions) error {
	cf, name, source := o.cf, o.name, o.source
	for _, w := range cf.warnings(name) {
		fmt.Fprintf(env.Err, "lcctl: warning: %s\n", w)
	}
	rep := contextShowReport{File: cf.Path, Context: name, ChosenBy: source, Settings: map[string][]string{}}
	if name != "" {
		rep.Settings = redactSettings(cf.Contexts[name])
	}
	if o.resolved {
		rep.Resolved = resolveSettings(o.root, env, cf, name)
	}
	if env.Global.JSON() {
		return writeJSON(env.Out, "context-show", rep)
	}
	printContextShow(env, cf, &rep)
	return nil
}

func printContextShow(env *Env, cf *configFile, rep *contextShowReport) {
	w, st := env.Out, env.Style
	switch {
	case rep.Context == "" && !cf.Exists:
		fmt.Fprintf(w, "no context: no config file at %s\n", ui.Printable(cf.Path))
	case rep.Context == "":
		fmt.Fprintf(w, "no context in force (%s sets no current-context)\n", ui.Printable(cf.Path))
	default:
		fmt.Fprintf(w, "%s %s\n", st.Header.Render("context "+ui.Printable(rep.Context)), st.Faint.Render("(chosen by "+ui.Printable(rep.ChosenBy)+"; file "+ui.Printable(cf.Path)+")"))
		if rep.Resolved == nil {
			for _, k := range cf.Order[rep.Context] {
				fmt.Fprintf(w, "  %s: %s\n", k, ui.Printable(strings.Join(rep.Settings[k], ", ")))
			}
		}
	}
	if rep.Resolved == nil {
		return
	}
	fmt.Fprintf(w, "%s\n", st.Faint.Render("precedence: flag on the command line > environment variable > context > default"))
	kw, vw := len("SETTING"), len("VALUE")
	for _, r := range rep.Resolved {
		kw, vw = max(kw, len(r.Key)), max(vw, len(ui.Printable(r.Value)))
	}
	vw = min(vw, 60)
	fmt.Fprintf(w, "  %-*s  %-*s  %s\n", kw, "SETTING", vw, "VALUE", "FROM")
	for _, r := range rep.Resolved {
		v := ui.Printable(r.Value)
		if v == "" {
			v = `""`
		}
		fmt.Fprintf(w, "  %-*s  %-*s  %s %s\n", kw, r.Key, vw, v, r.From, st.Faint.Render(r.Detail))
	}
}

// resolveSettings computes, for every context setting, the value a command
// would use without a flag: the environment variable, else the context,
// else the default of the flag it fills.
func resolveSettings(root *cobra.Command, env *Env, cf *configFile, name string) []resolvedSetting {
	out := make([]resolvedSetting, 0, len(contextKeys))
	for _, k := range contextKeys {
		r := resolvedSetting{Key: k.Key}
		switch {
		case k.Env != "" && env.Env(k.Env) != "":
			r.Value, r.From, r.Detail = redactValue(env.Env(k.Env)), "env", "$"+k.Env
			if k.Env == EnvOlricPassword {
				r.Value = "xxxxx"
			}
		case name != "" && cf.Contexts[name][k.Key] != nil:
			r.Value, r.From, r.Detail = strings.Join(redactSettings(cf.Contexts[name])[k.Key], ","), "context", ui.Printable(name)
		default:
			r.From = "default"
			r.Value, r.Detail = flagDefault(root, k)
		}
		out = append(out, r)
	}
	return out
}

// flagDefault finds the default of the flag a setting fills and names
// the flag and every top-level command that takes it ("--dmap (explain,
// preflight, snapshot, store)"): a setting serves several commands, so
// the detail names none as its origin. The value is the first command's
// (in help order) flag default; dmap's empty flag default means the
// gateway's DMap (store.DMapName), which is shown instead.
func flagDefault(root *cobra.Command, k contextKey) (value, detail string) {
	var (
		flag  string
		found bool
		cmds  []string
	)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.TrimPrefix(c.CommandPath(), "lcctl ")
		if name := k.flagFor(path); name != "" && c != root {
			fl := c.Flags().Lookup(name)
			if fl == nil {
				fl = c.PersistentFlags().Lookup(name) // store's Olric flags
			}
			if fl != nil {
				if !found {
					value, flag, found = fl.DefValue, name, true
				}
				top, _, _ := strings.Cut(path, " ")
				if !slices.Contains(cmds, top) {
					cmds = append(cmds, top)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if value == "[]" {
		value = ""
	}
	if k.Key == "dmap" && value == "" {
		value = store.DMapName
	}
	if !found {
		return value, ""
	}
	return value, "--" + flag + " (" + strings.Join(cmds, ", ") + ")"
}

// redactSettings copies settings with every URL's password replaced by
// xxxxx.
func redactSettings(s map[string][]string) map[string][]string {
	out := make(map[string][]string, len(s))
	for k, vs := range s {
		for _, v := range vs {
			out[k] = append(out[k], redactValue(v))
		}
	}
	return out
}

// redactValue hides credentials in a setting's value the way every other
// printed source is hidden (metrics.RedactSource: a password, a lone user
// name, an unparsable URL's userinfo).
func redactValue(v string) string { return metrics.RedactSource(v) }

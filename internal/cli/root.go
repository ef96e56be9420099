// Package cli builds lcctl's cobra command tree. Each command lives in its
// own file as an options struct filled from flags plus a run function that
// takes a context, the options and the injected streams; nothing here
// computes decisions or talks to Olric directly.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/metrics"
	"github.com/lcctl/lcctl/internal/ui"
)

// Exit codes, documented in README.md and docs/cli.md.
const (
	// ExitOK means success and no findings.
	ExitOK = 0
	// ExitFindings means the command ran and found errors (or warnings
	// under --strict), a check failed, or an operation failed.
	ExitFindings = 1
	// ExitUsage means a usage or input error: bad flags, a missing or
	// unreadable file, input that is not JSON/YAML.
	ExitUsage = 2
)

// Output formats accepted by the global --output flag.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// GlobalOptions are the flags every command shares.
type GlobalOptions struct {
	// Output is "text" (default) or "json".
	Output string
	// NoColor disables ANSI styling; NO_COLOR in the environment and a
	// non-terminal stdout do the same.
	NoColor bool
	// Context and ConfigFile choose the context and lcctl's config file
	// (contexts.go); "" uses $LCCTL_CONTEXT / $LCCTL_CONFIG and defaults.
	Context, ConfigFile string
	// ContextFrom names where Context came from when a subcommand set it
	// from its argument ("" means --context), for error messages.
	ContextFrom string
}

// JSON reports whether machine output was requested.
func (g *GlobalOptions) JSON() bool { return g.Output == OutputJSON }

// Env is what every run function receives: the streams, the global options
// and the styles for stdout and stderr.
type Env struct {
	*ui.Streams
	Global *GlobalOptions
	// Style styles stdout; ErrStyle styles stderr.
	Style, ErrStyle *ui.Styles
	// onValue, when set, receives the result values commands report
	// with emit (in every output mode): how `lcctl demo`, which runs
	// commands in-process, reads what they found without parsing their
	// output.
	onValue func(doc string, v any)
	// contextFlags maps the flags the context in force filled
	// (applyContext) to the setting each came from, for the errors
	// about their values (withContextOrigin).
	contextFlags map[string]contextOrigin
}

// colorEnabled decides styling for one stream.
func colorEnabled(s *ui.Streams, g *GlobalOptions, tty bool) bool {
	if g.NoColor || !tty {
		return false
	}
	if _, set := lookupEnv(s, "NO_COLOR"); set {
		return false
	}
	return s.Env("TERM") != "dumb"
}

func lookupEnv(s *ui.Streams, name string) (string, bool) {
	v := s.Env(name)
	return v, v != ""
}

// ExitError carries an exit code up to Main. A nil Err with a code prints
// nothing more (the command already reported its findings).
type ExitError struct {
	Code int
	Err  error
	// Details are lines (diagnostics, hints) printed before Err, each
	// escaped like Err and then rendered with Style; explain's invalid
	// --config errors use them.
	Details []detailLine
}

// detailLine is one line of ExitError.Details: its text and the style it
// is rendered in (nil: plain).
type detailLine struct {
	text  string
	style func(...string) string
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Usagef returns an ExitUsage error with a formatted message.
func Usagef(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// UsageErr wraps err as an ExitUsage error (missing file, bad input).
func UsageErr(err error) error {
	if err == nil {
		return nil
	}
	return &ExitError{Code: ExitUsage, Err: err}
}

// ErrFindings is returned by commands that already printed their findings
// and want exit status 1 without another message.
var ErrFindings = &ExitError{Code: ExitFindings}

// Help groups of the top-level commands.
const (
	groupStart  = "start"
	groupConfig = "config"
	groupLive   = "live"
	groupOther  = "other"
)

func init() {
	// List commands in the order they are added (the order of the
	// rollout story), not alphabetically. Set once, before any command
	// tree is built.
	cobra.EnableCommandSorting = false
}

// decorateDefaultCommands creates cobra's help and completion commands now
// (Execute would create them later) and gives them a one-line Short and
// examples like every other command.
func decorateDefaultCommands(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "help":
			c.Short = "Help about any command"
			c.Example = `  lcctl help demo
  lcctl help store evict`
		case "completion":
			c.Short = "Print a shell completion script (bash, zsh, fish, powershell)"
			// requireSubcommands makes a bare `completion` and an
			// unknown shell usage errors.
			c.Example = `  source <(lcctl completion bash)
  lcctl completion zsh > "${fpath[1]}/_lcctl"`
			for _, sh := range c.Commands() {
				sh.Short = "Print the completion script for " + sh.Name()
				switch sh.Name() {
				case "bash":
					// cobra's bash script calls bash-completion's
					// helpers (_get_comp_words_by_ref); without the
					// package the first Tab fails.
					sh.Long = "Print the bash completion script for lcctl.\n\nThe script needs the bash-completion package (v2): install it first\n(apt install bash-completion, brew install bash-completion@2) and load it\nfrom ~/.bashrc; without it bash reports '_get_comp_words_by_ref: command\nnot found' on the first Tab."
					sh.Example = "  source <(lcctl completion bash)\n  lcctl completion bash > /etc/bash_completion.d/lcctl"
				case "zsh":
					sh.Example = "  lcctl completion zsh > \"${fpath[1]}/_lcctl\""
				case "fish":
					sh.Example = "  lcctl completion fish > ~/.config/fish/completions/lcctl.fish"
				case "powershell":
					sh.Example = "  lcctl completion powershell | Out-String | Invoke-Expression"
				}
			}
		}
	}
}

// NewRootCommand builds the full command tree bound to streams. Exposed for
// tests and documentation generation.
func NewRootCommand(streams *ui.Streams) *cobra.Command {
	return newRootCommand(streams, nil)
}

// newRootCommand is NewRootCommand with a receiver of the values
// commands emit (nil: none).
func newRootCommand(streams *ui.Streams, onValue func(doc string, v any)) *cobra.Command {
	g := &GlobalOptions{Output: OutputText}
	env := &Env{Streams: streams, Global: g, onValue: onValue}
	root := &cobra.Command{
		Use:   "lcctl",
		Short: "Operator toolkit for Stargate session-aware last-cluster affinity",
		Long: `lcctl helps operators roll out Stargate's session-aware last-cluster
affinity: validate and migrate load-balancer configs, explain routing
decisions, inspect the gateway's last-cluster store, run rollout checklists
and simulate the effect of the change.

New here? 'lcctl demo' runs the whole rollout story on a built-in demo.

Exit codes: 0 ok, 1 findings or failure, 2 usage or input error.`,
		Example: `  lcctl demo
  lcctl validate lb-config.json
  lcctl preflight --stage 2 --config lb-config.json --gateway-values values.yaml --olric llm-api-gateway:3320
  lcctl --output json explain --config lb-config.json --snapshot snap.yaml --model model-a`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			switch g.Output {
			case OutputText, OutputJSON:
			default:
				return Usagef("invalid --output %q: want text or json", g.Output)
			}
			env.Style = ui.NewStyles(streams.Out, colorEnabled(streams, g, streams.OutTTY))
			env.ErrStyle = ui.NewStyles(streams.Err, colorEnabled(streams, g, streams.ErrTTY))
			// Fill unset flags from the context in force (contexts.go).
			return applyContext(cmd, env)
		},
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.Err)
	pf := root.PersistentFlags()
	pf.StringVarP(&g.Output, "output", "o", OutputText, "output format: text or json")
	pf.BoolVar(&g.NoColor, "no-color", false, "disable colour (also when NO_COLOR is set or stdout is not a terminal)")
	addContextFlags(root, g)
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{OutputText, OutputJSON}, cobra.ShellCompDirectiveNoFileComp))
	root.SetFlagErrorFunc(flagError)

	// Commands appear in --help in this order, grouped (see init).
	root.AddGroup(
		&cobra.Group{ID: groupStart, Title: "Start here:"},
		&cobra.Group{ID: groupConfig, Title: "Configs and routing decisions:"},
		&cobra.Group{ID: groupLive, Title: "Rollout checks and the live store:"},
		&cobra.Group{ID: groupOther, Title: "Other commands:"},
	)
	for _, c := range []struct {
		group string
		add   func(*Env) *cobra.Command
	}{
		{groupStart, newDemoCommand},
		{groupConfig, newValidateCommand},
		{groupConfig, newMigrateCommand},
		{groupConfig, newExplainCommand},
		{groupConfig, newSnapshotCommand},
		{groupConfig, newSimulateCommand},
		{groupLive, newPreflightCommand},
		{groupLive, newCheckCommand},
		{groupLive, newStoreCommand},
		{groupOther, newContextCommand},
		{groupOther, newExplainCodeCommand},
		{groupOther, newDocsCommand},
		{groupOther, newVersionCommand},
	} {
		cmd := c.add(env)
		cmd.GroupID = c.group
		root.AddCommand(cmd)
	}
	root.SetHelpCommandGroupID(groupOther)
	root.SetCompletionCommandGroupID(groupOther)
	decorateDefaultCommands(root)
	requireSubcommands(root)
	wireHelp(root, env)
	root.Version = versionInfo().Version
	root.SetVersionTemplate(versionTemplate())
	return root
}

// requireSubcommands makes every command that only groups subcommands
// (lcctl itself, store, check, completion) fail as a usage error (exit 2)
// when run bare or with an unknown subcommand. Cobra's default for a group
// without a Run is to print its help to stdout and exit 0, so a typo such
// as `lcctl store scna` looked like success. The error lists the
// subcommands; an unknown name gets "did you mean" when a subcommand is
// close. The help command likewise refuses an unknown topic (wireHelp).
func requireSubcommands(cmd *cobra.Command) {
	if cmd == cmd.Root() {
		// The RunE below makes each group "runnable" to cobra, whose
		// usage would then offer a bare `lcctl store [flags]` line; a
		// group shows only `lcctl store [command]`. Subcommands inherit
		// this template.
		cmd.SetUsageTemplate(strings.Replace(cmd.UsageTemplate(), "Usage:{{if .Runnable}}", "Usage:{{if and .Runnable (not .HasAvailableSubCommands)}}", 1))
	}
	for _, c := range cmd.Commands() {
		requireSubcommands(c)
	}
	if !cmd.HasAvailableSubCommands() {
		return
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return unknownSubcommand(c, args)
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		return Usagef("missing subcommand: %s needs one of %s\nRun '%s --help' for usage.", c.CommandPath(), strings.Join(subcommandNames(c), ", "), c.CommandPath())
	}
}

// unknownSubcommand is the usage error for args[0] not being a subcommand
// of cmd.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if !cmd.HasAvailableSubCommands() {
		return Usagef("unknown command %q for %q (it takes no subcommands)", args[0], cmd.CommandPath())
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	cmd.SuggestionsMinimumDistance = 2
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += fmt.Sprintf("; did you mean %q?", s[0])
	}
	return Usagef("%s\nSubcommands: %s. Run '%s --help' for usage.", msg, strings.Join(subcommandNames(cmd), ", "), cmd.CommandPath())
}

// subcommandNames lists the names of cmd's visible subcommands in help
// order.
func subcommandNames(cmd *cobra.Command) []string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

// Main runs lcctl with args and returns the process exit code. Errors go to
// streams.Err; only cmd/lcctl calls os.Exit.
func Main(ctx context.Context, args []string, streams *ui.Streams) int {
	return run(ctx, args, streams, nil)
}

// run is Main with a receiver of the values commands emit.
//
// Every command's stdout goes through one ui.CheckedWriter: when a write
// to it failed (a full disk, /dev/full, a closed descriptor), the output
// is incomplete, so after the command ran Main says so on stderr
// ("lcctl: standard output: write /dev/stdout: no space left on device")
// and exits 1 (or the command's own non-zero code), unless the command's
// error already is that write error. A broken pipe on the process's
// stdout never gets here: the Go runtime ends the process with SIGPIPE,
// as for -o json (exit 141 from a shell).
func run(ctx context.Context, args []string, streams *ui.Streams, onValue func(doc string, v any)) int {
	checked := *streams
	out := ui.NewCheckedWriter(streams.Out)
	checked.Out = out
	root := newRootCommand(&checked, onValue)
	root.SetArgs(args)
	done := make(chan struct{})
	go sayWhatWeWaitFor(ctx, done, streams.Err)
	cmd, err := root.ExecuteContextC(ctx)
	close(done)
	code := reportError(ctx, cmd, err, streams)
	if werr := out.Err(); werr != nil {
		if err == nil || !strings.Contains(err.Error(), werr.Error()) {
			writeProblem(streams.Err, "standard output: "+werr.Error()+" (the output is incomplete)")
		}
		if code == ExitOK {
			code = ExitFindings
		}
	}
	return code
}

// reportError prints the error a command (cmd, nil when cobra found none)
// ended with on streams.Err and returns the exit code it means.
func reportError(ctx context.Context, cmd *cobra.Command, err error, streams *ui.Streams) int {
	if err == nil {
		return ExitOK
	}
	helpFor := "lcctl"
	if cmd != nil {
		helpFor = cmd.CommandPath()
	}
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// Ctrl-C or SIGTERM: say so, not just "context canceled".
		writeProblem(streams.Err, interruptedMessage(err.Error()))
		var ee *ExitError
		if errors.As(err, &ee) && ee.Code != ExitOK {
			return ee.Code
		}
		return ExitFindings
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		for _, d := range ee.Details {
			writeDetail(streams.Err, d)
		}
		if ee.Err != nil {
			msg := ee.Err.Error()
			if ctx.Err() != nil {
				msg = interruptedMessage(msg)
			}
			writeProblem(streams.Err, msg)
		}
		return ee.Code
	}
	// cobra's own errors (unknown command, bad args) are usage errors.
	msg := err.Error()
	writeProblem(streams.Err, msg)
	if strings.HasPrefix(msg, "unknown command") || strings.Contains(msg, "arg(s)") || strings.HasPrefix(msg, "unknown flag") || strings.Contains(msg, "flag needs an argument") {
		// The help of the command that refused the arguments, not the
		// root's.
		fmt.Fprintf(streams.Err, "Run '%s --help' for usage.\n", helpFor)
		return ExitUsage
	}
	return ExitFindings
}

// interruptedMessage is the error line of a command stopped by Ctrl-C or
// SIGTERM: msg without Go's trailing ": context canceled", said as an
// interruption ("evict interrupted after 3 of 10 candidates"; a message
// that was only the context's error becomes "interrupted").
func interruptedMessage(msg string) string {
	if msg == context.Canceled.Error() {
		return "interrupted"
	}
	msg = strings.TrimSuffix(msg, ": "+context.Canceled.Error())
	if !strings.Contains(msg, "interrupted") {
		msg = "interrupted: " + msg
	}
	return msg
}

// writeProblem writes one error or problem line, "lcctl: MSG", to w (the
// error stream). It is the one path by which every command's errors reach
// the terminal: messages quote file names and input values, so control and
// bidirectional formatting characters are escaped (ui.PrintableLines) and
// no escape sequence in a config value can recolour, clear or retitle the
// terminal or reorder the line.
func writeProblem(w io.Writer, msg string) {
	// Sources are redacted here too: cobra's own errors echo arguments
	// ("unknown command \"http://user:pw@…\""), and a message that names
	// a source without metrics.RedactSource must not print its secret.
	fmt.Fprintf(w, "lcctl: %s\n", ui.PrintableLines(metrics.RedactText(msg)))
}

// writeDetail writes one detail line of an error (a diagnostic, a hint),
// escaped like writeProblem before it is styled.
func writeDetail(w io.Writer, d detailLine) {
	text := ui.PrintableLines(d.text)
	if d.style != nil {
		text = d.style(text)
	}
	fmt.Fprintln(w, text)
}

// sayWhatWeWaitFor prints, when ctx ends (Ctrl-C, SIGTERM) while the
// command is blocked reading an input (waitingFor), what lcctl is waiting
// for: a read from a pipe or a terminal does not notice the signal, and
// the first Ctrl-C went unanswered. A second signal ends the process
// (cmd/lcctl restores the default handling after the first).
func sayWhatWeWaitFor(ctx context.Context, done <-chan struct{}, w io.Writer) {
	select {
	case <-done:
	case <-ctx.Done():
		if what := waitingFor.Load(); what != nil {
			writeProblem(w, fmt.Sprintf("interrupted while waiting for %s to end (a pipe or terminal with no more input yet); press Ctrl-C again to stop at once", *what))
		}
	}
}

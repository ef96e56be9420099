package cli

// The steps of a leaf command (DEVELOPERS.md "Commands"). Cobra parses the
// flags into the command's options struct; PreRunE records what only
// cobra knows (the positional arguments, which flags were given) and runs
// the options' validate step, which checks and normalises them and
// returns the usage errors (exit 2); RunE calls the run function with the
// validated options. A run function takes a context, the Env and the
// options, never *cobra.Command, so a test fills an options struct,
// validates it and runs it without cobra.

import (
	"context"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// cmdInput is what a leaf command's options get from cobra besides the
// flag values. Options structs embed it; a test sets its fields directly.
type cmdInput struct {
	// args are the positional arguments.
	args []string
	// given holds the names of the flags given on the command line or
	// filled from the context in force (applyContext): what cobra's
	// Flags().Changed reports.
	given map[string]bool
	// root is the root of the command tree, for the commands that
	// describe it (help, context show --resolved).
	root *cobra.Command
}

// input returns the embedded cmdInput (leafOptions).
func (in *cmdInput) input() *cmdInput { return in }

// flagGiven reports whether flag name was given (on the command line or
// by the context in force), as opposed to left at its default.
func (in *cmdInput) flagGiven(name string) bool { return in.given[name] }

// leafOptions is implemented by the options struct of every leaf command
// (a pointer to a struct embedding cmdInput).
type leafOptions interface {
	input() *cmdInput
	// validate checks and normalises the options (filling the fields
	// the run function reads, such as parsed durations) before anything
	// runs. Its errors are usage errors (ExitUsage) with the messages
	// users see; it writes nothing to the streams.
	validate(env *Env) error
}

// wireLeaf sets cmd's PreRunE and RunE to the steps of a leaf command:
// PreRunE records cmd's positional arguments and given flags in o and
// calls o.validate(env); RunE calls run(ctx, env, o) with the validated
// options and the command's context. An error of either about a flag a
// context filled names that context (withContextOrigin). It returns cmd.
func wireLeaf[O leafOptions](cmd *cobra.Command, env *Env, o O, run func(context.Context, *Env, O) error) *cobra.Command {
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		in := o.input()
		in.args, in.root = args, c.Root()
		in.given = map[string]bool{}
		c.Flags().Visit(func(f *pflag.Flag) { in.given[f.Name] = true })
		return withContextOrigin(env, o.validate(env))
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error {
		return withContextOrigin(env, run(c.Context(), env, o))
	}
	return cmd
}

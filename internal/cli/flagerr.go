package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lcctl/lcctl/internal/suggest"
)

// flagError is the root's flag error function (cobra's SetFlagErrorFunc,
// inherited by every command): a usage error (exit 2) that names, for an
// unknown flag, the nearest flag of the command that refused it (its own
// and inherited flags, through suggest.Closest), and ends with the
// "Run 'lcctl CMD --help' for usage." hint, which cobra's plain
// "unknown flag: --stric" lacked.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if name, ok := unknownFlagName(msg); ok {
		var names []string
		seen := map[string]bool{}
		add := func(f *pflag.Flag) {
			if !f.Hidden && !seen[f.Name] {
				seen[f.Name] = true
				names = append(names, f.Name)
			}
		}
		cmd.LocalFlags().VisitAll(add)
		cmd.InheritedFlags().VisitAll(add)
		if c, ok := suggest.Closest(name, names); ok {
			msg += fmt.Sprintf("; did you mean --%s?", c)
		}
	}
	return Usagef("%s\nRun '%s --help' for usage.", msg, cmd.CommandPath())
}

// unknownFlagName returns the name, without dashes and any "=value", of
// the flag in pflag's "unknown flag: --NAME" error; false for every other
// flag error (a shorthand, a missing or bad value).
func unknownFlagName(msg string) (string, bool) {
	rest, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok || rest == "" {
		return "", false
	}
	name, _, _ := strings.Cut(rest, "=")
	return name, true
}

// needsArgs is a command's Args check for at least one positional
// argument, with an error that says what the command needs (what, for
// example "a config file or folder (or - for standard input)") rather
// than cobra's "requires at least 1 arg(s), only received 0".
func needsArgs(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return Usagef("%s needs %s\nRun '%s --help' for usage.", cmd.Name(), what, cmd.CommandPath())
		}
		return nil
	}
}

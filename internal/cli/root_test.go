package cli_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/ui"
)

// groupPaths lists the argument paths of every command that has
// subcommands (lcctl itself is the empty path), walking the real tree so a
// group added later is covered too.
func groupPaths(cmd *cobra.Command, path []string, out *[][]string) {
	if cmd.HasAvailableSubCommands() {
		*out = append(*out, path)
	}
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			groupPaths(c, append(append([]string(nil), path...), c.Name()), out)
		}
	}
}

// TestCommandGroupsRefuseBareAndUnknown: every command group, run bare or
// with an unknown subcommand, is a usage error (exit 2) with a message on
// stderr and nothing on stdout; cobra's default was the help on stdout and
// exit 0, so `lcctl store scna` looked like success.
func TestCommandGroupsRefuseBareAndUnknown(t *testing.T) {
	var groups [][]string
	groupPaths(cli.NewRootCommand(&ui.Streams{}), nil, &groups)
	want := map[string]bool{"": true, "store": true, "check": true, "completion": true}
	for _, g := range groups {
		delete(want, strings.Join(g, " "))
	}
	if len(want) > 0 {
		t.Fatalf("groups %v not found in the command tree (found %v)", want, groups)
	}
	for _, g := range groups {
		path := strings.TrimSpace("lcctl " + strings.Join(g, " "))
		code, out, errs := runLcctlStdin(t, "", nil, g...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errs, "lcctl: missing subcommand: "+path+" needs one of ") || !strings.Contains(errs, "Run '"+path+" --help' for usage.") || len(errs) > 400 {
			t.Errorf("%q bare: exit %d, stdout %q, stderr %q; want exit 2 and a short 'missing subcommand' on stderr", path, code, out, errs)
		}
		code, out, errs = runLcctlStdin(t, "", nil, append(g, "bogus")...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errs, `unknown command "bogus" for "`+path+`"`) || !strings.Contains(errs, "Subcommands: ") {
			t.Errorf("%q bogus: exit %d, stdout %q, stderr %q; want exit 2 and 'unknown command'", path, code, out, errs)
		}
	}
}

// TestUnknownSubcommandSuggests: a near miss names the subcommand meant.
func TestUnknownSubcommandSuggests(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"store", "scna"}, `unknown command "scna" for "lcctl store"; did you mean "scan"?`},
		{[]string{"check", "metrix"}, `unknown command "metrix" for "lcctl check"; did you mean "metrics"?`},
		{[]string{"completion", "bsh"}, `did you mean "bash"?`},
		{[]string{"explian"}, `unknown command "explian" for "lcctl"; did you mean "explain"?`},
		{[]string{"help", "store", "evcit"}, `unknown command "evcit" for "lcctl store"; did you mean "evict"?`},
		{[]string{"help", "bogus"}, `unknown command "bogus" for "lcctl"`},
	} {
		code, out, errs := runLcctlStdin(t, "", nil, tc.args...)
		if code != cli.ExitUsage || out != "" || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errs, tc.want)
		}
	}
	// Help and --help still succeed, on stdout; a leaf keeps its use line.
	for _, args := range [][]string{{"--help"}, {"store", "--help"}, {"help", "store", "scan"}, {"check", "metrics", "--help"}} {
		code, out, errs := runLcctlStdin(t, "", nil, args...)
		if code != cli.ExitOK || !strings.Contains(out, "Usage:") || errs != "" {
			t.Errorf("%v: exit %d, stderr %q; want help on stdout and exit 0", args, code, errs)
		}
	}
	_, out, _ := runLcctlStdin(t, "", nil, "store", "scan", "--help")
	if !strings.Contains(out, "Usage:\n  lcctl store scan [flags]") {
		t.Errorf("store scan --help lost its use line:\n%s", out)
	}
}

// TestArgErrorsPointToTheCommandHelp: a command refusing its arguments
// points to its own --help, not the root's.
func TestArgErrorsPointToTheCommandHelp(t *testing.T) {
	for _, args := range [][]string{{"migrate", "--strategy", "bounded"}, {"validate"}, {"store", "get", "a", "b", "c"}} {
		code, out, errs := runLcctlStdin(t, "", nil, args...)
		path := "lcctl " + args[0]
		if args[0] == "store" {
			path = "lcctl store get"
		}
		if code != cli.ExitUsage || out != "" || !strings.Contains(errs, "Run '"+path+" --help' for usage.") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and a pointer to %s --help", args, code, out, errs, path)
		}
	}
}

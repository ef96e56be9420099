package cli

import (
	"strings"
	"testing"
)

// A mistyped flag names the nearest flag of the command that refused it
// (not of another command) and the command's --help; exit 2.
func TestUnknownFlagSuggestsNearestFlagOfThatCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
		not  string
	}{
		{[]string{"validate", "--stric", "x.json"}, []string{"unknown flag: --stric; did you mean --strict?", "Run 'lcctl validate --help' for usage."}, ""},
		{[]string{"store", "scan", "--clustr", "a"}, []string{"did you mean --cluster?", "Run 'lcctl store scan --help' for usage."}, ""},
		// An inherited (root) flag is a candidate too.
		{[]string{"validate", "--nocolor", "x.json"}, []string{"did you mean --no-color?"}, ""},
		// Nothing close: no suggestion, still the hint.
		{[]string{"validate", "--zzzzzz", "x.json"}, []string{"unknown flag: --zzzzzz\n", "Run 'lcctl validate --help'"}, "did you mean"},
		// validate has no --cluster: the suggestion is validate's own.
		{[]string{"validate", "--clustr", "x.json"}, []string{"unknown flag: --clustr"}, "--cluster?"},
	} {
		code, out, errs := runCLI(t, "", tc.args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if out != "" {
			t.Errorf("%v: stdout %q, want nothing", tc.args, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%v: stderr %q lacks %q", tc.args, errs, w)
			}
		}
		if tc.not != "" && strings.Contains(errs, tc.not) {
			t.Errorf("%v: stderr %q has %q", tc.args, errs, tc.not)
		}
	}
}

// validate and migrate without a file say what they need, not cobra's
// "requires at least 1 arg(s)".
func TestMissingFileArgumentSaysWhatIsNeeded(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate"}, "validate needs an lb-config file or folder (or - for standard input)"},
		{[]string{"migrate", "--strategy", "bounded"}, "migrate needs an lb-config file or folder to migrate"},
	} {
		code, _, errs := runCLI(t, "", tc.args...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) || strings.Contains(errs, "arg(s)") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
		if !strings.Contains(errs, "--help' for usage.") {
			t.Errorf("%v: stderr %q lacks the --help hint", tc.args, errs)
		}
	}
}

// An interrupted command's error line drops Go's ": context canceled"
// and says it was interrupted.
func TestInterruptedMessage(t *testing.T) {
	for in, want := range map[string]string{
		"evict interrupted after 3 of 10 candidates: context canceled": "evict interrupted after 3 of 10 candidates",
		"context canceled":              "interrupted",
		"scan of d: context canceled":   "interrupted: scan of d",
		"scan of d: connection refused": "interrupted: scan of d: connection refused",
	} {
		if got := interruptedMessage(in); got != want {
			t.Errorf("interruptedMessage(%q) = %q, want %q", in, got, want)
		}
	}
}

// A file flag whose file cannot be read names the flag.
func TestMissingFileNamesItsFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "metrics", "--gateway", "nope.prom"}, "--gateway: read nope.prom: no such file or directory"},
		{[]string{"check", "metrics", "--stargate", "nope.prom"}, "--stargate: read nope.prom: no such file or directory"},
		{[]string{"preflight", "--stage", "1", "--stargate-metrics", "nope.prom"}, "--stargate-metrics: read nope.prom"},
		{[]string{"simulate", "--scenario", "nope.yaml", "--compare"}, "--scenario: failed to read nope.yaml: no such file or directory"},
		{[]string{"explain", "--case", "nope.yaml"}, "--case: failed to read nope.yaml: no such file or directory"},
	} {
		code, _, errs := runCLI(t, "", tc.args...)
		if code != ExitUsage || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
}

package migrate

import (
	"github.com/lcctl/lcctl/internal/validate"
)

// tester is what the helpers need from *testing.T and *rapid.T.
type tester interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
}

// checkMigrated asserts what every pending migration must satisfy: the
// output passes validation (M12), keeps its format, leaves no unbounded
// no-SLO entry in scope (M1/M4), and a second run with the same options
// changes nothing (M13).
func checkMigrated(t tester, name string, res *Result, opts Options) {
	t.Helper()
	if res.Status != StatusPending {
		t.Fatalf("status %s, want %s", res.Status, StatusPending)
	}
	after := validate.File(name, res.Output)
	if !after.Valid() {
		t.Fatalf("migrated file does not validate: %v\n%s", after.Errors(), res.Output)
	}
	if after.Format != res.Format {
		t.Errorf("format changed from %s to %s", res.Format, after.Format)
	}
	if validate.DetectFormat("", res.Output) != validate.DetectFormat("", res.Input) {
		t.Errorf("the first byte no longer says the same format")
	}
	if left := unboundedInScope(after, opts); len(left) > 0 {
		t.Errorf("%v are still unbounded no-SLO pulsar-wait-and-widen entries after migration", left)
	}
	again, err := Migrate(name, res.Output, opts)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if again.Status != StatusUnchanged {
		t.Errorf("second run: status %s, want unchanged (M13); changes %v notes %v\n%s", again.Status, again.Changes, again.Notes, UnifiedDiff("first", "second", res.Output, again.Output))
	}
}

// unboundedInScope lists the no-SLO entries a run with opts should have
// migrated (or refused) but that are neither bounded (M4) nor out of scope.
func unboundedInScope(r *validate.Result, opts Options) []string {
	var out []string
	for _, e := range r.NoSLO() {
		if e.Bounded {
			continue
		}
		switch e.Role {
		case validate.RoleDefault:
			if opts.Strategy == Bounded || !opts.sharedInScope() {
				continue
			}
		case validate.RoleRequestAlgorithm:
			if !opts.sharedInScope() {
				continue
			}
		default:
			if !opts.selectedModel(e.Model) {
				continue
			}
		}
		out = append(out, e.Path)
	}
	return out
}

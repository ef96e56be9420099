package migrate

import (
	"slices"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/validate"
)

// TestMigrateFieldsDoc keeps the field lists of docs/migrate.md equal to
// droppedForPulsar and copiedToHeaderEntry (run with -update to rewrite).
func TestMigrateFieldsDoc(t *testing.T) {
	quote := func(names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = "`" + n + "`"
		}
		return strings.Join(q, ", ")
	}
	want := "- Removed by `--strategy pulsar` (pulsar rejects them), each listed in\n  the change: " + quote(droppedForPulsar) + ".\n" +
		"- Kept by `--strategy pulsar`, and copied into the M8 header entry: " + quote(copiedToHeaderEntry) + ".\n"
	testutil.CheckGeneratedDoc(t, "docs/migrate.md", "pulsar fields", want,
		"go test ./internal/migrate -run TestMigrateFieldsDoc -update", *update)
}

// TestPulsarFieldLists checks the registry-derived lists against what
// validate says of a switched entry: every dropped field is refused by
// pulsar and accepted by pulsar-wait-and-widen (so none is left behind),
// every copied field is accepted by both.
func TestPulsarFieldLists(t *testing.T) {
	pwawFields := validate.AcceptedFields(lb.PulsarWaitAndWiden)
	for _, f := range lb.Fields() {
		if f.Type == lb.TypeMap || !f.Parsed.Has(lb.PulsarWaitAndWiden) {
			continue
		}
		dropped, copied := slices.Contains(droppedForPulsar, f.Name), slices.Contains(copiedToHeaderEntry, f.Name)
		if dropped == copied {
			t.Errorf("%s: dropped %v, copied %v; a pulsar-wait-and-widen field is exactly one of them", f.Name, dropped, copied)
		}
		if copied && !(validate.FieldAccepted(lb.Pulsar, f.Name) && validate.FieldAccepted(lb.PulsarWaitAndWiden, f.Name)) {
			t.Errorf("%s: copied, but not accepted by both algorithms", f.Name)
		}
		if dropped && validate.FieldAccepted(lb.Pulsar, f.Name) {
			t.Errorf("%s: dropped although pulsar accepts it", f.Name)
		}
	}
	for _, name := range pwawFields {
		if f := lb.FieldByName(name); f.Type != lb.TypeMap && !slices.Contains(droppedForPulsar, name) && !slices.Contains(copiedToHeaderEntry, name) {
			t.Errorf("%s: accepted by pulsar-wait-and-widen, neither dropped nor copied", name)
		}
	}
}

package migrate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/validate"
)

// A file within lcctl's input limit whose migration is larger than the
// limit is migrated (the rewritten text is decoded and validated without
// the limit, validate.DecodeRewritten), with a warning that lcctl will not
// read the written file back. It used to be refused with "the rewritten
// text would not hold exactly the intended document (... input limit)".
func TestRewrittenOverInputLimit(t *testing.T) {
	// Long model IDs keep the entry count (and the test's time) low: each
	// string entry grows by about 80 bytes when bounded.
	pad := strings.Repeat("x", 460)
	var b strings.Builder
	b.WriteString("{\"models\": {")
	for i := 0; b.Len() < validate.MaxInputBytes-1024; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  \"m-%s-%06d\": \"pulsar-wait-and-widen\"", pad, i)
	}
	b.WriteString("\n}}\n")
	data := []byte(b.String())
	opts := DefaultOptions()
	opts.Strategy = Bounded
	res, err := Migrate("lb.json", data, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != StatusPending {
		t.Fatalf("status %s, want %s; notes %v", res.Status, StatusPending, res.Notes)
	}
	if len(res.Output) <= validate.MaxInputBytes {
		t.Fatalf("output is %d bytes: the test needs one over the %d-byte limit", len(res.Output), validate.MaxInputBytes)
	}
	warned := false
	for _, n := range res.Notes {
		if n.Severity == SeverityWarning && strings.Contains(n.Message, "input limit") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("no warning that lcctl will not read the %d-byte result back: %v", len(res.Output), res.Notes)
	}
	if d, diags := validate.Decode("lb.json", res.Output, validate.FormatJSON); d.Root != nil || len(diags) == 0 || diags[0].Code != validate.CodeRead {
		t.Errorf("Decode accepted %d bytes over the input limit: %v", len(res.Output), diags)
	}
	if d, diags := validate.DecodeRewritten("lb.json", res.Output, validate.FormatJSON); d.Root == nil {
		t.Errorf("DecodeRewritten refused the migrated text: %v", diags)
	}
}

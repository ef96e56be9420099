package validate_test

import (
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/validate"
)

// 1e400 was reported at :1:66 with the message saying "column 70"
// (serde's byte position after the number) and nothing explaining it.
func TestSerdePositionExplained(t *testing.T) {
	r := validate.File("big.json", []byte(`{"default":"pulsar","models":{"m":{"algorithm":"pulsar","max_input_tps":1e400}}}`))
	errs := r.Errors()
	if len(errs) != 1 {
		t.Fatalf("%v", errs)
	}
	d := errs[0]
	if d.Line != 1 || d.Col != 73 || !strings.Contains(d.Message, "column 77") || !strings.Contains(d.Message, "the value starts at line 1, column 73") {
		t.Fatalf("%s", d)
	}
}

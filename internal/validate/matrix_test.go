package validate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/testutil"
)

// TestFieldMatrixDoc keeps the field matrix of docs/validate.md equal to
// the rendering of the lb field registry (run with -update to rewrite it).
func TestFieldMatrixDoc(t *testing.T) {
	testutil.CheckGeneratedDoc(t, "docs/validate.md", "field matrix", renderFieldMatrix(),
		"go test ./internal/validate -run TestFieldMatrixDoc -update", *update)
}

// renderFieldMatrix renders lb.Fields as the matrix of lb-config.md §6.7
// with each field's type, unit, default and routing-expression use.
func renderFieldMatrix() string {
	var b strings.Builder
	b.WriteString("| Field | Type | Unit | Default |")
	for _, a := range lb.Algorithms {
		b.WriteString(" " + a.String() + " |")
	}
	b.WriteString(" `x-routing-method` parameter for | Notes |\n|")
	for range len(lb.Algorithms) + 6 {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, f := range lb.Fields() {
		unit := f.Unit
		if unit == "" {
			unit = "–"
		}
		def := "`" + f.Default + "`"
		if f.Default == "unset" {
			def = "unset"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |", f.Name, f.Type, unit, def)
		for _, a := range lb.Algorithms {
			switch {
			case f.RouterRejects.Has(a):
				b.WriteString(" R |")
			case f.Parsed.Has(a):
				b.WriteString(" ✓ |")
			default:
				b.WriteString(" P |")
			}
		}
		var expr []string
		for _, a := range f.Expression.Algorithms() {
			expr = append(expr, a.String())
		}
		if len(expr) == len(lb.Algorithms) {
			expr = []string{"every algorithm"}
		} else if len(expr) == 0 {
			expr = []string{"–"}
		}
		var notes []string
		if f.Range != nil {
			notes = append(notes, fmt.Sprintf("%g–%g", f.Range.Min, f.Range.Max))
		}
		if f.NullRejected {
			notes = append(notes, "`null` rejected")
		}
		if f.Normalize != 0 {
			notes = append(notes, fmt.Sprintf("`0` is read as `%d`", f.Normalize))
		}
		switch {
		case f.ExprPositive && f.Type == lb.TypeF64:
			notes = append(notes, "≤ 0 in an expression is inert")
		case f.ExprPositive:
			notes = append(notes, "`0` in an expression is inert")
		}
		if f.ExprMax != 0 {
			notes = append(notes, fmt.Sprintf("at most %d in an expression", f.ExprMax))
		}
		if len(f.Aliases) > 0 {
			notes = append(notes, "aliases "+strings.Join(f.Aliases, ", "))
		}
		if len(notes) == 0 {
			notes = []string{"–"}
		}
		fmt.Fprintf(&b, " %s | %s |\n", strings.Join(expr, ", "), strings.Join(notes, "; "))
	}
	return b.String()
}

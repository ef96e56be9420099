package migrate

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// applyUnified applies a unified diff produced by UnifiedDiff to a and
// returns the result; it fails the test on any inconsistency (context or
// removed lines that do not match, bad counts).
// fataler is what applyUnified needs from *testing.T and *rapid.T.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

func applyUnified(t fataler, a, diff string) string {
	t.Helper()
	if diff == "" {
		return a
	}
	src := splitLines(a)
	lines := splitLines(diff)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		t.Fatalf("bad header:\n%s", diff)
	}
	hdr := regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)
	var out []string
	pos := 0 // next line of src to copy
	i := 2
	for i < len(lines) {
		m := hdr.FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("bad hunk header %q", lines[i])
		}
		i++
		oldStart, _ := strconv.Atoi(m[1])
		oldN := 1
		if m[2] != "" {
			oldN, _ = strconv.Atoi(m[2])
		}
		newN := 1
		if m[4] != "" {
			newN, _ = strconv.Atoi(m[4])
		}
		from := oldStart - 1
		if oldN == 0 {
			from = oldStart
		}
		if from < pos {
			t.Fatalf("hunks overlap or go backwards at %q", m[0])
		}
		out = append(out, src[pos:from]...)
		pos = from
		gotOld, gotNew := 0, 0
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			text := l[1:]
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					t.Fatalf("line %d: %q does not match %q", pos+1, text, src[min(pos, len(src)-1)])
				}
				pos++
				gotOld++
				if l[0] == ' ' {
					out = append(out, text)
					gotNew++
				}
			case '+':
				out = append(out, text)
				gotNew++
			default:
				t.Fatalf("bad diff line %q", l)
			}
		}
		if gotOld != oldN || gotNew != newN {
			t.Fatalf("hunk %q counts %d,%d lines", m[0], gotOld, gotNew)
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}

// splitLines splits s after each newline (the last line may lack one).
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

func TestUnifiedDiffProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alpha := []string{"a\n", "b\n", "c\n", "{\n", "}\n", "  x: 1\n"}
		gen := rapid.SliceOfN(rapid.SampledFrom(alpha), 0, 30)
		x, y := gen.Draw(t, "a"), gen.Draw(t, "b")
		a, b := strings.Join(x, ""), strings.Join(y, "")
		if rapid.Bool().Draw(t, "strip-a") {
			a = strings.TrimSuffix(a, "\n")
		}
		if rapid.Bool().Draw(t, "strip-b") {
			b = strings.TrimSuffix(b, "\n")
		}
		d := UnifiedDiff("a", "b", []byte(a), []byte(b))
		if (d == "") != (a == b) {
			t.Fatalf("empty diff %v for a==b %v", d == "", a == b)
		}
		if got := applyUnified(t, a, d); got != b {
			t.Fatalf("applying the diff gives %q, want %q\n%s", got, b, d)
		}
	})
}

func TestUnifiedDiffFormat(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n16\n17\n18\n19\n20\n"
	b := strings.Replace(strings.Replace(a, "3\n", "three\n", 1), "18\n", "", 1)
	want := `--- old
+++ new
@@ -1,6 +1,6 @@
 1
 2
-3
+three
 4
 5
 6
@@ -15,6 +15,5 @@
 15
 16
 17
-18
 19
 20
`
	if got := UnifiedDiff("old", "new", []byte(a), []byte(b)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// No newline at the end, and insertion into an empty file.
	if got, want := UnifiedDiff("o", "n", []byte("x"), []byte("x\n")), "--- o\n+++ n\n@@ -1,1 +1,1 @@\n-x\n\\ No newline at end of file\n+x\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
	if got, want := UnifiedDiff("o", "n", nil, []byte("a\nb\n")), "--- o\n+++ n\n@@ -0,0 +1,2 @@\n+a\n+b\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

// TestUnifiedDiffLarge: huge, totally different inputs still give a
// correct diff (the anchored diff is O(n log n) on any input).
func TestUnifiedDiffLarge(t *testing.T) {
	var a, b strings.Builder
	for i := range 12000 {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	d := UnifiedDiff("a", "b", []byte(a.String()), []byte(b.String()))
	if got := applyUnified(t, a.String(), d); got != b.String() {
		t.Fatal("applying the fallback diff does not give b")
	}
}

// TestUnifiedDiffOnMigration: on a large real migration (1,000 models,
// changes spread over the whole file) the diff applies, and it removes
// and adds only the lines that changed (every line of the input the
// migration keeps is context, not a -/+ pair).
func TestUnifiedDiffOnMigration(t *testing.T) {
	data := largeConfig(1000, false)
	opts := DefaultOptions()
	opts.Strategy = Pulsar
	res, err := Migrate("lb.json", data, opts)
	if err != nil || res.Status != StatusPending {
		t.Fatal(err, res.Status)
	}
	d := UnifiedDiff("a", "b", data, res.Output)
	if got := applyUnified(t, string(data), d); got != string(res.Output) {
		t.Fatal("the diff does not reproduce the migrated file")
	}
	removed, added := 0, 0
	for _, l := range splitLines(d)[2:] {
		switch l[0] {
		case '-':
			removed++
		case '+':
			added++
		}
	}
	if want := len(splitLines(string(res.Output))) - len(splitLines(string(data))); added-removed != want || removed > 2*1000 {
		t.Fatalf("%d lines removed, %d added for a migration that adds %d lines", removed, added, want)
	}
}

// TestMigrateDiffName checks that Options.DiffName gives the diff of the
// migration in Result.Diff, the one UnifiedDiff makes, and that without
// it (or without a change) Result.Diff is empty.
func TestMigrateDiffName(t *testing.T) {
	in := []byte(`{"models": {"m": "pulsar-wait-and-widen"}}` + "\n")
	opts := DefaultOptions()
	opts.Strategy = Bounded
	res, err := Migrate("lb.json", in, opts)
	if err != nil || res.Status != StatusPending || res.Diff != "" {
		t.Fatalf("without DiffName: %v %s diff %q", err, res.Status, res.Diff)
	}
	opts.DiffName = "x/lb.json"
	res, err = Migrate("lb.json", in, opts)
	if err != nil || res.Status != StatusPending {
		t.Fatalf("%v %s", err, res.Status)
	}
	if want := UnifiedDiff("x/lb.json", "x/lb.json", res.Input, res.Output); res.Diff != want || want == "" {
		t.Errorf("Diff %q, want %q", res.Diff, want)
	}
	res, _ = Migrate("lb.json", []byte(`{"models": {"m": "pulsar"}}`), opts)
	if res.Status != StatusUnchanged || res.Diff != "" {
		t.Errorf("unchanged file: %s diff %q", res.Status, res.Diff)
	}
}

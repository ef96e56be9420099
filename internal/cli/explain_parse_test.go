package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/lb"
)

func TestParseHeaderLine(t *testing.T) {
	ok := map[string]lb.Header{
		"x-model: model-a":     {Name: "x-model", Value: " model-a"},
		"X-Priority:3":         {Name: "X-Priority", Value: "3"},
		" x-a : b:c ":          {Name: "x-a", Value: " b:c "},
		"x-k:":                 {Name: "x-k", Value: ""},
		"x-k: caf\xc3\xa9":     {Name: "x-k", Value: " café"},
		"x-k: \xff\xfe":        {Name: "x-k", Value: " \xff\xfe"},
		"x-k:\ttab\t":          {Name: "x-k", Value: "\ttab\t"},
		"!#$%&'*+-.^_`|~09: v": {Name: "!#$%&'*+-.^_`|~09", Value: " v"},
	}
	for in, want := range ok {
		got, err := cli.ParseHeaderLine(in)
		if err != nil || got != want {
			t.Errorf("ParseHeaderLine(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"x-model", "", ": v", "  : v", "bad name: v", "x(y): v", "x-k: a\nb", "x-k: a\rb", "x-k: \x00", "x-k: \x7f", "x\xff: v"} {
		if _, err := cli.ParseHeaderLine(in); err == nil {
			t.Errorf("ParseHeaderLine(%q): want an error", in)
		}
	}
}

func TestParseElapsed(t *testing.T) {
	ok := map[string]time.Duration{"0": 0, "250": 250 * time.Millisecond, "250ms": 250 * time.Millisecond, "1.5s": 1500 * time.Millisecond,
		"123.75": 123750 * time.Microsecond, " 2m ": 2 * time.Minute, "0.0000004": 0, "0.0000006": 1, "+5": 5 * time.Millisecond,
		"1e3": time.Second, ".5": 500 * time.Microsecond, "3us": 3 * time.Microsecond}
	for in, want := range ok {
		if got, err := cli.ParseElapsed(in); err != nil || got != want {
			t.Errorf("ParseElapsed(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", " ", "-1", "-5ms", "NaN", "nan", "inf", "+Inf", "1e400", "999999999h", "5 ms", "ms", "0x10", "1_000", "9223372036854.775808"} {
		if d, err := cli.ParseElapsed(in); err == nil {
			t.Errorf("ParseElapsed(%q) = %v; want an error", in, d)
		} else if !strings.Contains(err.Error(), "--elapsed") {
			t.Errorf("ParseElapsed(%q): error %q does not name the flag", in, err)
		}
	}
}

func TestParseExcludeList(t *testing.T) {
	got, err := cli.ParseExcludeList([]string{"A, B", "B,C"})
	if err != nil || strings.Join(got, "|") != "A|B|C" {
		t.Fatalf("got %v, %v; want A B C (trimmed, repeats dropped)", got, err)
	}
	for _, in := range []string{"", "A,", ",A", "A,,B", " , "} {
		if _, err := cli.ParseExcludeList([]string{in}); err == nil {
			t.Errorf("ParseExcludeList(%q): want an error", in)
		}
	}
}

func FuzzParseHeaderLine(f *testing.F) {
	for _, s := range []string{"x-model: m", "x:", ":", "a b: c", "x-k: \xff", "x-k:\t\t", "x-k: a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := cli.ParseHeaderLine(s)
		if err != nil {
			if !strings.Contains(err.Error(), "header") {
				t.Fatalf("error %q does not say it is about a header", err)
			}
			return
		}
		if h.Name == "" || strings.ContainsAny(h.Name, " \t:()<>@,;\\\"/[]?={}") {
			t.Fatalf("accepted name %q", h.Name)
		}
		for i := 0; i < len(h.Value); i++ {
			if b := h.Value[i]; (b < 0x20 && b != '\t') || b == 0x7f {
				t.Fatalf("accepted control byte in %q", h.Value)
			}
		}
		if !strings.HasSuffix(s, ":"+h.Value) {
			t.Fatalf("value %q is not the text after the first colon of %q", h.Value, s)
		}
	})
}

func FuzzParseElapsed(f *testing.F) {
	for _, s := range []string{"0", "250", "250ms", "1.5s", "-1", "NaN", "1e400", "9223372036854ms", "+.5", "1e-400", "5h5m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := cli.ParseElapsed(s)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseElapsed(%q) = %v < 0", s, d)
		}
		back, err := cli.ParseElapsed(d.String())
		if err != nil || back != d {
			t.Fatalf("ParseElapsed(%q) = %v does not round-trip through %q: %v, %v", s, d, d.String(), back, err)
		}
	})
}

func FuzzParseExcludeList(f *testing.F) {
	f.Add("A,B", "B")
	f.Add(",", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		ids, err := cli.ParseExcludeList([]string{a, b})
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if id == "" || id != strings.TrimSpace(id) || seen[id] || strings.Contains(id, ",") {
				t.Fatalf("bad id %q in %v", id, ids)
			}
			seen[id] = true
		}
	})
}

package metrics

import "testing"

func TestRedactSource(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pw@h:1/metrics":  "http://user:xxxxx@h:1/metrics",
		"https://TOKEN@h/metrics":     "https://xxxxx@h/metrics",
		"http://h:1/metrics":          "http://h:1/metrics",
		"http://h/a@b":                "http://h/a@b",
		"http://u:p@h:1/%zz":          "http://xxxxx@h:1/%zz", // unparsable: everything before the host hidden
		"metrics@2.prom":              "metrics@2.prom",
		"stdin":                       "stdin",
		"HTTP://u:SECRET@h/x?q=a@b#c": "http://u:xxxxx@h/x?q=a@b#c",
	} {
		if got := RedactSource(in); got != want {
			t.Errorf("RedactSource(%q) = %q, want %q", in, got, want)
		}
	}
}

package metrics

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestRedactSource(t *testing.T) {
	for in, want := range map[string]string{
		"http://user:pw@h:1/metrics":  "http://user:xxxxx@h:1/metrics",
		"https://TOKEN@h/metrics":     "https://xxxxx@h/metrics",
		"http://h:1/metrics":          "http://h:1/metrics",
		"http://h/a@b":                "http://h/a@b",
		"http://u:p@h:1/%zz":          "http://xxxxx@h:1/%zz", // unparsable: everything before the host hidden
		"metrics@2.prom":              "metrics@2.prom",
		"stdin":                       "stdin",
		"HTTP://u:SECRET@h/x?q=a@b#c": "http://u:xxxxx@h/x?q=xxxxx#c",
		// Query values are secrets too (?token=, ?access_token=): the
		// names, order and separators stay; a part without "=" may be a
		// bare token and is hidden whole.
		"http://h/m?token=S1&job=x":   "http://h/m?token=xxxxx&job=xxxxx",
		"https://h/m?access_token=S1": "https://h/m?access_token=xxxxx",
		"http://h/m?debug&t=S1&&e=":   "http://h/m?xxxxx&t=xxxxx&&e=",
		"http://h/m?SECRET":           "http://h/m?xxxxx",
		"http://h/m?t=S1#frag":        "http://h/m?t=xxxxx#frag",
		"http://h/m#a?t=1":            "http://h/m#a?t=1",
		"http://u:p@h/m?t=S1":         "http://u:xxxxx@h/m?t=xxxxx",
		"http://u:p@h:1:bad/m?t=S1":   "http://xxxxx@h:1:bad/m?t=xxxxx",
		"http://h/%zz?t=S1":           "http://h/%zz?t=xxxxx",
		"m.prom?t=1":                  "m.prom?t=1",
		// Another scheme is read as a file name, and echoed: redacted too.
		"ftp://u:SECRET@h/m?k=S":  "ftp://u:xxxxx@h/m?k=xxxxx",
		"s3+x.y://TOKEN@bucket/m": "s3+x.y://xxxxx@bucket/m",
		"1x://u:p@h/m":            "1x://u:p@h/m",
		"://u:p@h":                "://u:p@h",
		"./a://b@c":               "./a://b@c",
		// Credentials without a scheme: user:password@host or //user@host.
		"u:SECRET9@host:9090/m?t=SECRETA": "xxxxx@host:9090/m?t=xxxxx",
		"//u:SECRETB@h/m":                 "//xxxxx@h/m",
		"//TOKEN@h/m":                     "//xxxxx@h/m",
		"dir/u:p@h":                       "dir/u:p@h",
	} {
		if got := RedactSource(in); got != want {
			t.Errorf("RedactSource(%q) = %q, want %q", in, got, want)
		}
	}
}

// A URL net/url cannot parse (a bad port, a bad escape, a space in the
// host) fails before any request, and net/url's error quotes the whole
// URL: the password must not come through it (it printed
// `parse "http://user:SECRETPW@h:1:bad/x": invalid port`).
func TestFetchUnparsableURLRedacted(t *testing.T) {
	for _, src := range []string{
		"http://user:SECRETPW@127.0.0.1:1:bad/x",
		"http://user:SECRETPW@127.0.0.1:1/%zz",
		"http://user:SECRETPW@bad host/x",
		"https://SECRETTOKEN@127.0.0.1:99999:1/x",
	} {
		var f Fetcher
		_, err := f.Fetch(t.Context(), src)
		if err == nil {
			t.Fatalf("Fetch(%q): no error", src)
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("Fetch(%q) error shows the credentials: %v", src, err)
		}
		if !strings.Contains(err.Error(), "xxxxx@") {
			t.Errorf("Fetch(%q) error does not name the source redacted: %v", src, err)
		}
	}
}

func TestRedactError(t *testing.T) {
	// What url.Parse returns for "http://u:SECRET@h:1/%zz".
	perr := &url.Error{Op: "parse", URL: "http://u:SECRET@h:1/%zz", Err: url.EscapeError("%zz")}
	client := &url.Error{Op: "Get", URL: "http://u:***@h:1/m", Err: errors.New("connection refused")}
	nested := &url.Error{Op: "Post", URL: "http://u:***@h/api", Err: &url.Error{Op: "parse", URL: "http://v:SECRET@h/%zz", Err: errors.New("bad")}}
	refused := errors.New("refused")
	wrapped := fmt.Errorf("cluster a: %w", &url.Error{Op: "Get", URL: "http://u:***@h/m", Err: refused})
	for err, want := range map[error]string{
		perr:    `parse "http://xxxxx@h:1/%zz": invalid URL escape "%zz"`,
		client:  `Get "http://u:xxxxx@h:1/m": connection refused`,
		nested:  `Post "http://u:xxxxx@h/api": parse "http://xxxxx@h/%zz": bad`,
		wrapped: `cluster a: Get "http://u:xxxxx@h/m": refused`,
	} {
		if got := RedactError(err).Error(); got != want {
			t.Errorf("RedactError: %q, want %q", got, want)
		}
	}
	if !errors.Is(RedactError(wrapped), refused) {
		t.Error("the redacted error does not unwrap to its cause")
	}
	if RedactError(nil) != nil {
		t.Error("RedactError(nil) is not nil")
	}
}

// Every source a message names is redacted, whoever wrote the message.
func TestRedactText(t *testing.T) {
	for in, want := range map[string]string{
		`unknown command "http://user:SECRET1@h/m?token=SECRET2" for "lcctl check metrics"`: `unknown command "http://user:xxxxx@h/m?token=xxxxx" for "lcctl check metrics"`,
		`--interval needs http(s) URLs; "ftp://u:S@h/m?x=S" is a file`:                      `--interval needs http(s) URLs; "ftp://u:xxxxx@h/m?x=xxxxx" is a file`,
		"read u:SECRET9@host:9090/m?t=SECRETA: no such file":                                "read xxxxx@host:9090/m?t=xxxxx: no such file",
		"nothing to hide in metrics@2.prom or m.prom?t=1":                                   "nothing to hide in metrics@2.prom or m.prom?t=1",
		"": "",
	} {
		if got := RedactText(in); got != want {
			t.Errorf("RedactText(%q) = %q, want %q", in, got, want)
		}
	}
}

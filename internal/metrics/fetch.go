package metrics

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/lcctl/lcctl/internal/readlimit"
)

// DefaultTimeout bounds one HTTP scrape when Fetcher.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// acceptHeader prefers the plain text format (cheapest to parse), then
// OpenMetrics 1.0.
const acceptHeader = "text/plain;version=0.0.4;q=1.0,application/openmetrics-text;version=1.0.0;q=0.5,*/*;q=0.1"

// FetchError is a scrape that could not be obtained over HTTP: connection
// failure, timeout or a non-2xx status. The CLI reports it as a failure
// (exit 1), not as bad input.
type FetchError struct {
	Source string // the URL
	Err    error  // what went wrong
}

// Error renders "fetch <url>: <cause>".
func (e *FetchError) Error() string {
	return fmt.Sprintf("fetch %s: %v", RedactSource(e.Source), e.Err)
}

// Unwrap returns the underlying error.
func (e *FetchError) Unwrap() error { return e.Err }

// ReadError is a file or stdin source that could not be read (missing,
// unreadable, too large, or stdin used twice). The CLI reports it as an
// input error (exit 2).
type ReadError struct {
	Source string // the file path or "stdin"
	Err    error  // what went wrong
}

// Error renders "read <source>: <cause>", the source through RedactSource.
func (e *ReadError) Error() string { return fmt.Sprintf("read %s: %v", RedactSource(e.Source), e.Err) }

// Unwrap returns the underlying error.
func (e *ReadError) Unwrap() error { return e.Err }

// RedactSource returns src as it may be printed: for an http(s) URL with
// credentials (http://user:secret@host/metrics) the password is replaced
// by "xxxxx", as net/url's URL.Redacted does, and so is a user name given
// without a password (often a token: http://TOKEN@host/); every value in
// the query string is replaced by "xxxxx" too, its parameter name kept
// (?token=abc&job=x reads ?token=xxxxx&job=xxxxx), since a scrape endpoint
// behind a proxy often takes its credential there (?access_token=…), and
// so is a query part without "=" as a whole (?SECRET reads ?xxxxx: a bare
// token is as likely as a flag name). The fragment is kept. A source of
// another scheme (ftp://user:pw@host/m, read as a file name and refused)
// is redacted the same way, since it is echoed in the error. Other
// sources (files, "-", "stdin") and URLs without credentials or a query
// are returned unchanged. Every source in text, JSON and error messages
// passes through it.
func RedactSource(src string) string {
	if !hasScheme(src) {
		if at, ok := schemelessUserinfo(src); ok {
			// user:password@host/… or //user@host/… without a scheme
			// (read as a file name, and echoed in the error).
			lead := len(src) - len(strings.TrimPrefix(src, "//"))
			return redactQuery(src[:lead] + "xxxxx" + src[at:])
		}
		return src
	}
	return redactQuery(redactUserinfo(src))
}

// schemelessUserinfo finds credentials in a source written without a
// scheme: "//user:pw@host/…" (any user part), or "user:pw@host/…" (a
// colon before the @, which a file name such as metrics@2.prom lacks),
// the @ before the first "/". It returns the index of that @.
func schemelessUserinfo(src string) (int, bool) {
	rest, slashes := strings.CutPrefix(src, "//")
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	at := strings.LastIndex(host, "@")
	if at < 0 || (!slashes && !strings.Contains(host[:at], ":")) {
		return 0, false
	}
	return len(src) - len(rest) + at, true
}

// RedactText returns msg with every word that is a source RedactSource
// changes (a URL with credentials or a query, credentials without a
// scheme) replaced by its redacted form; words end at white space and
// quotes, and punctuation after a word (":,;.)]") stays as it is. The CLI passes every error line through it, so a source echoed
// by a library (cobra's `unknown command "http://user:pw@…"`) or by a
// message that forgot to redact is masked too.
func RedactText(msg string) string {
	if !strings.ContainsAny(msg, "@?") {
		return msg
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start >= 0 {
			// Punctuation after a word ("FILE: no such file") is kept.
			w := strings.TrimRight(msg[start:end], ":,;.)]")
			b.WriteString(RedactSource(w))
			b.WriteString(msg[start+len(w) : end])
			start = -1
		}
	}
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case ' ', '\t', '\n', '"', '\'', '`':
			flush(i)
			b.WriteByte(msg[i])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	flush(len(msg))
	return b.String()
}

// hasScheme reports whether src starts with a URL scheme and "://"
// (RFC 3986 §3.1: a letter, then letters, digits, "+", "-" or ".").
func hasScheme(src string) bool {
	scheme, _, ok := strings.Cut(src, "://")
	if !ok || scheme == "" {
		return false
	}
	for i, r := range scheme {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && (r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'):
		default:
			return false
		}
	}
	return true
}

// redactUserinfo is RedactSource's credentials part.
func redactUserinfo(src string) string {
	if !strings.Contains(src, "@") {
		return src
	}
	u, err := url.Parse(src)
	if err != nil {
		// Unparsable: hide everything between the scheme and the last @
		// before the path, where credentials would be.
		scheme, rest, _ := strings.Cut(src, "://")
		host := rest
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			host = rest[:i]
		}
		if at := strings.LastIndex(host, "@"); at >= 0 {
			return scheme + "://xxxxx@" + rest[at+1:]
		}
		return src
	}
	if u.User == nil {
		return src
	}
	if _, has := u.User.Password(); !has {
		u.User = url.User("xxxxx")
		return u.String()
	}
	return u.Redacted()
}

// redactQuery replaces each value of src's query string (from the first
// "?" to the fragment's "#") by "xxxxx", keeping the names, the order and
// the separators, and each part without "=" by "xxxxx" whole; it works on the text, so a URL net/url cannot parse is
// redacted too, and one without a query is returned as it is.
func redactQuery(src string) string {
	i := strings.IndexAny(src, "?#")
	if i < 0 || src[i] == '#' {
		return src
	}
	query, frag := src[i+1:], ""
	if j := strings.IndexByte(query, '#'); j >= 0 {
		query, frag = query[:j], query[j:]
	}
	parts := strings.Split(query, "&")
	for k, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		switch {
		case ok && value != "":
			parts[k] = name + "=xxxxx"
		case !ok && p != "":
			parts[k] = "xxxxx"
		}
	}
	return src[:i+1] + strings.Join(parts, "&") + frag
}

// RedactError returns err with the URL of every *url.Error in its chain
// passed through RedactSource, so an error of net/http or net/url names
// the URL as lcctl does everywhere else: net/url's parse errors quote the
// URL as given, password included, and net/http's client errors print the
// password as "***". The *url.Errors are changed in place; a message
// already formatted around one (fmt.Errorf) has net/http's ":***@"
// rewritten as ":xxxxx@", in an error that still unwraps to err. nil
// stays nil. Every HTTP error of a scrape or a Prometheus query goes
// through it.
func RedactError(err error) error {
	for e := err; e != nil; {
		ue, ok := errors.AsType[*url.Error](e)
		if !ok {
			break
		}
		ue.URL = RedactSource(ue.URL)
		e = ue.Err
	}
	if err != nil && strings.Contains(err.Error(), ":***@") {
		return &redactedError{msg: strings.ReplaceAll(err.Error(), ":***@", ":xxxxx@"), err: err}
	}
	return err
}

// redactedError is an error whose message had net/http's password mask
// replaced (RedactError).
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// IsURL reports whether src names an http or https URL (case-insensitive
// scheme); anything else is a file path or "-".
func IsURL(src string) bool {
	l := strings.ToLower(src)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// Fetcher reads scrapes from URLs, files and stdin. The zero value is
// usable: http.DefaultClient, DefaultTimeout, no stdin, time.Now.
type Fetcher struct {
	// Client does the HTTP requests; nil means http.DefaultClient.
	Client *http.Client
	// Timeout bounds each HTTP scrape (headers and body); 0 means
	// DefaultTimeout.
	Timeout time.Duration
	// Stdin is read for the source "-"; it can be read once per Fetcher.
	Stdin io.Reader
	// Now stamps scrapes; nil means time.Now.
	Now func() time.Time

	stdinUsed bool
}

// Fetch reads and parses one scrape. src is an http(s) URL, "-" for
// stdin, or a file path; keep is passed to Parse. Errors: *FetchError (HTTP), *ReadError (file,
// stdin), *ParseError (malformed content), or the context's error.
func (f *Fetcher) Fetch(ctx context.Context, src string, keep ...string) (*Scrape, error) {
	now := time.Now
	if f.Now != nil {
		now = f.Now
	}
	var (
		data []byte
		ct   string
		err  error
	)
	switch {
	case src == "":
		return nil, &ReadError{Source: src, Err: errors.New("empty source")}
	case IsURL(src):
		data, ct, err = f.get(ctx, src)
	case src == "-":
		if f.Stdin == nil {
			return nil, &ReadError{Source: "stdin", Err: errors.New("no standard input")}
		}
		if f.stdinUsed {
			return nil, &ReadError{Source: "stdin", Err: errors.New("standard input can be read only once")}
		}
		f.stdinUsed = true
		data, err = readLimited(f.Stdin)
		if err != nil {
			err = &ReadError{Source: "stdin", Err: err}
		}
		src = "stdin"
	default:
		var fh *os.File
		fh, err = readlimit.Open(src)
		if err == nil {
			data, err = readLimited(fh)
			_ = fh.Close()
		}
		if err != nil {
			err = &ReadError{Source: src, Err: readlimit.Cause(err)}
		}
	}
	if err != nil {
		return nil, err
	}
	taken := now()
	s, err := Parse(RedactSource(src), data, ct, keep...)
	if err != nil {
		var pe *ParseError
		if errors.As(err, &pe) && looksLikeHTML(data, ct) {
			// A login page, a proxy's error page or a dashboard: say so
			// rather than "invalid metric name" at line 1.
			if IsURL(src) {
				pe.Msg += fmt.Sprintf(" (the answer is an HTML page%s, not Prometheus metrics: is this the metrics endpoint, e.g. http://host:9464/metrics?)", contentTypeNote(ct))
			} else {
				pe.Msg += " (this is an HTML page, not Prometheus metrics)"
			}
		}
		return nil, err
	}
	s.Time = taken
	return s, nil
}

func (f *Fetcher) get(ctx context.Context, src string) ([]byte, string, error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		// net/url's parse error quotes the whole URL, password included.
		return nil, "", &FetchError{Source: src, Err: RedactError(err)}
	}
	req.Header.Set("Accept", acceptHeader)
	client := f.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// The *url.Error quotes the URL, or a redirect's target, with
		// its password masked by net/http but its query in full.
		if ue, ok := errors.AsType[*url.Error](err); ok {
			ue.URL = RedactSource(ue.URL)
		}
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s", timeout)
		}
		// net/http's error prints the password as "***".
		return nil, "", &FetchError{Source: src, Err: RedactError(err)}
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, "", &FetchError{Source: src, Err: fmt.Errorf("HTTP status %s", resp.Status)}
	}
	data, err := readLimited(resp.Body)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			// The headers came, the body did not finish.
			err = fmt.Errorf("the answer did not complete within %s", timeout)
		}
		return nil, "", &FetchError{Source: src, Err: err}
	}
	return data, resp.Header.Get("Content-Type"), nil
}

// looksLikeHTML reports whether a scrape is an HTML page: an HTML
// Content-Type, or a body that starts like one.
func looksLikeHTML(data []byte, contentType string) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	head := strings.ToLower(string(bytes.TrimSpace(data[:min(len(data), 512)])))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html")
}

func contentTypeNote(ct string) string {
	if ct == "" {
		return ""
	}
	return fmt.Sprintf(", Content-Type %q", ct)
}

func readLimited(r io.Reader) ([]byte, error) {
	data, err := readlimit.ReadAll(r, MaxScrapeBytes)
	if _, ok := errors.AsType[*readlimit.TooLargeError](err); ok {
		return nil, fmt.Errorf("scrape larger than %d bytes", MaxScrapeBytes)
	}
	return data, err
}

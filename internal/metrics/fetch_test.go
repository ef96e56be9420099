package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func serveFile(t *testing.T, name, contentType string) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "text/plain") {
			t.Errorf("Accept header %q does not ask for the text format", r.Header.Get("Accept"))
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		_, _ = w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchURL(t *testing.T) {
	srv := serveFile(t, "gateway-healthy.prom", "text/plain; version=0.0.4; charset=utf-8")
	f := &Fetcher{Timeout: time.Second}
	s, err := f.Fetch(context.Background(), srv.URL+"/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if s.Format != FormatText || !ExtractGateway(s).LookupsPresent || s.Time.IsZero() {
		t.Errorf("scrape %+v", s)
	}
}

func TestFetchURLOpenMetricsByContentType(t *testing.T) {
	srv := serveFile(t, "stargate-healthy.om", "application/openmetrics-text; version=1.0.0; charset=utf-8")
	s, err := (&Fetcher{}).Fetch(context.Background(), srv.URL, StargateFamilies("")...)
	if err != nil {
		t.Fatal(err)
	}
	if s.Format != FormatOpenMetrics || !ExtractStargate(s, "").Present {
		t.Errorf("format %s", s.Format)
	}
}

func TestFetchURLErrors(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "nope", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()

	f := &Fetcher{Timeout: 50 * time.Millisecond}
	for _, tc := range []struct{ url, want string }{
		{slow.URL, "no answer within 50ms"},
		{down.URL, "HTTP status 503"},
		{closedURL, "connect"},
	} {
		_, err := f.Fetch(context.Background(), tc.url)
		var fe *FetchError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want FetchError containing %q", tc.url, err, tc.want)
		}
	}
}

// TestFetchURLHalfAnswerAndHTML: a body that stops coming after the
// headers said "context deadline exceeded"; an HTML page (a login or proxy
// page) said only "invalid metric name" at line 1.
func TestFetchURLHalfAnswerAndHTML(t *testing.T) {
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte("# HELP x\n"))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer stalled.Close()
	login := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<html><body>Sign in</body></html>\n"))
	}))
	defer login.Close()

	f := &Fetcher{Timeout: 100 * time.Millisecond}
	_, err := f.Fetch(context.Background(), stalled.URL)
	var fe *FetchError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "the answer did not complete within 100ms") {
		t.Errorf("stalled body: %v", err)
	}
	_, err = f.Fetch(context.Background(), login.URL)
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), `the answer is an HTML page, Content-Type "text/html; charset=utf-8", not Prometheus metrics`) {
		t.Errorf("HTML page: %v", err)
	}
	page := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(page, []byte("<!DOCTYPE html>\n<html></html>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err = f.Fetch(context.Background(), page); !errors.As(err, &pe) || !strings.Contains(err.Error(), "this is an HTML page, not Prometheus metrics") {
		t.Errorf("HTML file: %v", err)
	}
}

func TestFetchFileAndStdin(t *testing.T) {
	f := &Fetcher{Stdin: strings.NewReader("llm_api_gateway_last_cluster_lookups_total{result=\"hit\"} 3\n")}
	s, err := f.Fetch(context.Background(), "-")
	if err != nil {
		t.Fatal(err)
	}
	if s.Source != "stdin" || ExtractGateway(s).Lookups["hit"] != 3 {
		t.Errorf("stdin scrape %+v", s)
	}
	if _, err := f.Fetch(context.Background(), "-"); err == nil || !strings.Contains(err.Error(), "only once") {
		t.Errorf("second stdin read: %v", err)
	}
	var re *ReadError
	if _, err := f.Fetch(context.Background(), filepath.Join("testdata", "missing.prom")); !errors.As(err, &re) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := (&Fetcher{}).Fetch(context.Background(), "-"); !errors.As(err, &re) {
		t.Errorf("no stdin: %v", err)
	}
	var pe *ParseError
	if _, err := f.Fetch(context.Background(), filepath.Join("testdata", "gateway-malformed.prom")); !errors.As(err, &pe) {
		t.Errorf("malformed file: %v", err)
	}
}

func TestDetectFormat(t *testing.T) {
	for _, tc := range []struct {
		data, ct string
		want     Format
	}{
		{"a 1\n", "", FormatText},
		{"a_total 1\n# EOF\n", "", FormatOpenMetrics},
		{"a_total 1\n# EOF", "", FormatOpenMetrics},
		{"a_total 1\n# EOF\n\n  \n", "", FormatOpenMetrics},
		{"# EOF\n", "", FormatOpenMetrics},
		{"a 1\n", "application/openmetrics-text; version=1.0.0", FormatOpenMetrics},
		{"a_total 1\n# EOF\n", "text/plain; version=0.0.4", FormatText},
		{"a 1\n", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited", FormatProtobuf},
		{"a_total 1\n# EOF\n", "text/html", FormatOpenMetrics},
	} {
		if got := DetectFormat([]byte(tc.data), tc.ct); got != tc.want {
			t.Errorf("DetectFormat(%q, %q) = %s, want %s", tc.data, tc.ct, got, tc.want)
		}
	}
}

// A YAML file given as a scrape keeps the parser's line and says it is not
// the text exposition format.
func TestParseYAMLSaysNotExpositionFormat(t *testing.T) {
	_, err := Parse("values.yaml", []byte("# comment\nllmApiGateway:\n  replicaCount: 3\n"), "")
	pe, ok := err.(*ParseError)
	if !ok {
		t.Fatalf("error %v, want *ParseError", err)
	}
	if pe.Line != 2 || !strings.Contains(err.Error(), "values.yaml:2: ") || !strings.Contains(err.Error(), "not in the Prometheus text exposition format") {
		t.Errorf("error %q (line %d)", err, pe.Line)
	}
}

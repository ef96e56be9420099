package metrics

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t testing.TB, name string) *Scrape {
	t.Helper()
	path := filepath.Join("testdata", name)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keep := append(append(append([]string(nil), GatewayFamilies...), StargateFamilies("")...), StargateFamilies("llm_request_router_")...)
	s, err := Parse(path, data, "", keep...)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return s
}

func TestFixturesParse(t *testing.T) {
	for _, tc := range []struct {
		file   string
		format Format
	}{
		{"gateway-healthy.prom", FormatText},
		{"gateway-healthy-2.prom", FormatText},
		{"gateway-olric-errors.prom", FormatText},
		{"gateway-store-off.prom", FormatText},
		{"gateway-all-skipped.prom", FormatText},
		{"gateway-healthy.om", FormatOpenMetrics},
		{"stargate-healthy.prom", FormatText},
		{"stargate-healthy-2.prom", FormatText},
		{"stargate-healthy.om", FormatOpenMetrics},
		{"stargate-step3-before-step2.prom", FormatText},
		{"stargate-flag-off.prom", FormatText},
		{"stargate-legacy-prefix.prom", FormatText},
		{"stargate-unsticky.prom", FormatText},
		{"empty.prom", FormatText},
	} {
		s := load(t, tc.file)
		if s.Format != tc.format {
			t.Errorf("%s: format %s, want %s", tc.file, s.Format, tc.format)
		}
	}
}

func TestMalformedFixturesReportLine(t *testing.T) {
	for _, tc := range []struct {
		file string
		line int
	}{
		{"gateway-malformed.prom", 3},
		{"stargate-malformed.prom", 3},
	} {
		path := filepath.Join("testdata", tc.file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Parse(path, data, "")
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: error %v, want *ParseError", tc.file, err)
		}
		if pe.Line != tc.line || pe.Source != path {
			t.Errorf("%s: got %s:%d, want %s:%d (%v)", tc.file, pe.Source, pe.Line, path, tc.line, err)
		}
	}
}

func TestOpenMetricsReduction(t *testing.T) {
	// The malformed sample is on line 4 of the file; the HELP line dropped
	// before parsing must not shift the reported line.
	path := filepath.Join("testdata", "gateway-malformed.om")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Parse(path, data, "", GatewayFamilies...)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 4 {
		t.Fatalf("got %v, want %s:4", err, path)
	}

	// Lines of other families are not parsed, however long or broken.
	long := "# TYPE other counter\nother_total{l=\"" + strings.Repeat("x", 5000) + "\"} 1\nbroken{ 1\n" +
		"# TYPE llm_api_gateway_last_cluster_lookups counter\nllm_api_gateway_last_cluster_lookups_total{result=\"hit\"} 7\n# EOF\n"
	s, err := Parse("long", []byte(long), "", GatewayFamilies...)
	if err != nil {
		t.Fatal(err)
	}
	if got := ExtractGateway(s).Lookups["hit"]; got != 7 {
		t.Errorf("hit = %v", got)
	}
	// Without keep, every line is parsed, and an over-long one is refused
	// with its position.
	_, err = Parse("long", []byte(long), "")
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Msg, "exceeds") {
		t.Fatalf("got %v, want long:2 line-length error", err)
	}
}

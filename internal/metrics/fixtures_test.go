package metrics

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
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

// TestDuplicateSeries: two samples of one series were summed (a hit count
// of 5 + 6 = 11 from a buggy exporter); they are a parse error in the
// families lcctl reads, in both formats, and ignored elsewhere.
func TestDuplicateSeries(t *testing.T) {
	dup := "llm_api_gateway_last_cluster_lookups_total{result=\"hit\",pod=\"a\"} 5\n" +
		"llm_api_gateway_last_cluster_lookups_total{pod=\"a\",result=\"hit\"} 6\n"
	for _, tc := range []struct{ name, data, ct string }{
		{"text", dup, ""},
		{"openmetrics", "# TYPE llm_api_gateway_last_cluster_lookups counter\n" + dup + "# EOF\n", "application/openmetrics-text; version=1.0.0"},
	} {
		_, err := Parse("s.prom", []byte(tc.data), tc.ct, GatewayFamilies...)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), `s.prom: duplicate series llm_api_gateway_last_cluster_lookups_total{pod="a",result="hit"}`) {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	// Distinct label sets are summed as before; a duplicate in a family
	// lcctl does not read is not its business.
	s, err := Parse("s.prom", []byte("llm_api_gateway_last_cluster_lookups_total{result=\"hit\",pod=\"a\"} 5\n"+
		"llm_api_gateway_last_cluster_lookups_total{result=\"hit\",pod=\"b\"} 6\nother_total 1\nother_total 2\n"), "", GatewayFamilies...)
	if err != nil || ExtractGateway(s).Lookups["hit"] != 11 {
		t.Fatalf("distinct pods: %v", err)
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
	// Without keep, every line is parsed: the broken one is reported at
	// its position.
	_, err = Parse("long", []byte(long), "")
	if !errors.As(err, &pe) || pe.Line != 3 || !strings.Contains(pe.Msg, "unterminated label set") {
		t.Fatalf("got %v, want long:3 unterminated label set", err)
	}
}

func TestOpenMetricsRewrite(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]float64 // lookups by result
		bad  []string           // undocumented result values, left out
		err  string
	}{
		{in: "# TYPE llm_api_gateway_last_cluster_lookups counter\n# UNIT llm_api_gateway_last_cluster_lookups x\n" +
			`llm_api_gateway_last_cluster_lookups_total{result="hit"} 3 1700000000.5 # {trace_id="a b}"} 1 1700000000` + "\n" +
			`llm_api_gateway_last_cluster_lookups_created{result="hit"} 1700000000` + "\n" +
			`llm_api_gateway_last_cluster_lookups_total{result="mi}s\"s"} 2` + "\n# EOF\n",
			want: map[string]float64{"hit": 3}, bad: []string{`mi}s"s`}},
		{in: "# TYPE llm_api_gateway_last_cluster_lookups unknown\n" + `llm_api_gateway_last_cluster_lookups_total{result="hit"} 1` + "\n# EOF\n", want: map[string]float64{"hit": 1}},
		{in: "# TYPE llm_api_gateway_last_cluster_lookups counter\n" + `llm_api_gateway_last_cluster_lookups_total{result="hit"} 1` + "\n", err: "does not end with # EOF"},
		{in: "# EOF\nllm_api_gateway_last_cluster_lookups_total 1\n", err: "x:2: unexpected data after # EOF"},
		{in: `llm_api_gateway_last_cluster_lookups_total{result="hit} 1` + "\n# EOF\n", err: "x:1: unterminated label set"},
		{in: `llm_api_gateway_last_cluster_lookups_total{result="hit"}1` + "\n# EOF\n", err: "x:1: expected a space"},
		{in: "llm_api_gateway_last_cluster_lookups_total \n# EOF\n", err: "x:1: missing sample value"},
		{in: "# TYPE llm_api_gateway_last_cluster_lookups counter\n" + `llm_api_gateway_last_cluster_lookups_total{result="hit"} many` + "\n# EOF\n", err: "x:2:"},
	} {
		s, err := Parse("x", []byte(tc.in), "application/openmetrics-text; version=1.0.0", GatewayFamilies...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		g := ExtractGateway(s)
		if !reflect.DeepEqual(g.Lookups, tc.want) {
			t.Errorf("%q: %v, want %v", tc.in, g.Lookups, tc.want)
		}
		var bad []string
		for _, e := range g.InvalidLabels.Examples {
			bad = append(bad, e.Value)
		}
		if !reflect.DeepEqual(bad, tc.bad) {
			t.Errorf("%q: undocumented values %q, want %q", tc.in, bad, tc.bad)
		}
	}
}

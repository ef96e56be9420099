// Package metrics reads Prometheus scrapes of the LLM API gateway and of
// Stargate and turns the last-cluster metrics into rollout facts and
// verdicts (gateway.md §10, §12; session.md §6).
//
// Input is the Prometheus text exposition format 0.0.4 or OpenMetrics 1.0
// text, or delimited protobuf when a server answers with it, all parsed by
// github.com/prometheus/common/expfmt (OpenMetrics after a line-level
// rewrite into the text format; see openMetricsToText for why). A scrape comes from an http(s)
// URL (with a timeout), a file, or standard input ("-").
//
// What is extracted:
//
//   - gateway: llm_api_gateway_last_cluster_lookups_total{result},
//     llm_api_gateway_last_cluster_writes_total{result} and the histogram
//     llm_api_gateway_last_cluster_lookup_duration_seconds{result}, summed
//     over any other labels (pods, instances);
//   - Stargate: <prefix>routing_session_selections_total{routing_key, model,
//     algorithm, session_state, selection}, prefix "stargate_" by default
//     (older charts used "llm_request_router_").
//
// One scrape gives totals since each process started; two scrapes give the
// increase over the interval (counter resets handled as Prometheus does)
// and per-second rates.
package metrics

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"slices"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metric names read from a gateway scrape (gateway.md §10.1). They have no
// function_id label; the only label read is "result".
const (
	// GatewayLookups counts last-cluster lookups by result: hit, miss,
	// error, timeout, skipped.
	GatewayLookups = "llm_api_gateway_last_cluster_lookups_total"
	// GatewayWrites counts last-cluster writes by result: ok, error.
	GatewayWrites = "llm_api_gateway_last_cluster_writes_total"
	// GatewayLookupDuration is the lookup duration histogram (seconds) by
	// result; skipped lookups are not timed. Bucket boundaries are read from
	// the scrape's "le" labels, never assumed (gateway.md §16).
	GatewayLookupDuration = "llm_api_gateway_last_cluster_lookup_duration_seconds"
)

// Stargate metric naming (gateway.md §10.2, session.md §6.1).
const (
	// DefaultStargatePrefix is Stargate's default --metrics-prefix.
	DefaultStargatePrefix = "stargate_"
	// SessionSelectionsSuffix follows the prefix to name the session
	// selections counter.
	SessionSelectionsSuffix = "routing_session_selections_total"
)

// Format is the exposition format a scrape was parsed as.
type Format string

// Supported formats.
const (
	// FormatText is the Prometheus text format 0.0.4.
	FormatText Format = "text"
	// FormatOpenMetrics is OpenMetrics 1.0 text (ends with "# EOF").
	FormatOpenMetrics Format = "openmetrics"
	// FormatProtobuf is length-delimited protobuf.
	FormatProtobuf Format = "protobuf"
)

// MaxScrapeBytes bounds how much of one scrape is read (64 MiB); a larger
// body is an error rather than an unbounded allocation.
const MaxScrapeBytes = 64 << 20

// Scrape is one parsed exposition.
type Scrape struct {
	// Source is the URL, file path or "-" it came from.
	Source string
	// Format is how it was parsed.
	Format Format
	// Time is when it was taken (read or fetched).
	Time time.Time
	// Families maps metric family names to families. Counter families keep
	// their "_total" name in both formats.
	Families map[string]*dto.MetricFamily
	// Empty reports that the input was empty or only whitespace: not "no
	// last-cluster series" but no scrape at all (EmptyError).
	Empty bool
}

// EmptyError returns the error for an empty scrape (Scrape.Empty) from
// source: a running exporter always serves some metrics, so an empty body
// is a wrong endpoint, a proxy or a broken exporter, never "0 families".
func EmptyError(source string) error {
	return fmt.Errorf("%s: the scrape is empty (no metrics, only whitespace or nothing): a running exporter always serves some; is this the metrics endpoint?", source)
}

// ParseError is a scrape that could not be parsed. Line is the 1-based
// line of the problem when the parser reported one, 0 otherwise.
type ParseError struct {
	Source string // the URL, file path or "stdin"
	Line   int    // 1-based line in the original input, 0 when unknown
	Msg    string // the parser's message
}

// Error renders "source:line: msg" (or "source: msg" without a line).
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Source, e.Msg)
}

// DetectFormat picks the format for data. A Content-Type naming a known
// format wins (an unknown or empty one is ignored); otherwise data whose
// last non-blank line is "# EOF" is OpenMetrics and anything else is the
// Prometheus text format.
func DetectFormat(data []byte, contentType string) Format {
	if contentType != "" {
		h := make(map[string][]string, 1)
		h["Content-Type"] = []string{contentType}
		switch expfmt.ResponseFormat(h).FormatType() {
		case expfmt.TypeOpenMetrics:
			return FormatOpenMetrics
		case expfmt.TypeProtoDelim:
			return FormatProtobuf
		case expfmt.TypeTextPlain:
			return FormatText
		}
	}
	trimmed := bytes.TrimRight(data, " \t\r\n")
	if i := bytes.LastIndexByte(trimmed, '\n'); i >= 0 {
		trimmed = trimmed[i+1:]
	}
	if string(bytes.TrimSpace(trimmed)) == "# EOF" {
		return FormatOpenMetrics
	}
	return FormatText
}

// GatewayFamilies are the family names ExtractGateway reads, for Parse's
// keep argument.
var GatewayFamilies = []string{GatewayLookups, GatewayWrites, GatewayLookupDuration}

// StargateFamilies returns the family names ExtractStargate reads with
// prefix (DefaultStargatePrefix when empty), for Parse's keep argument.
func StargateFamilies(prefix string) []string {
	if prefix == "" {
		prefix = DefaultStargatePrefix
	}
	return []string{prefix + SessionSelectionsSuffix}
}

// Parse parses data as one scrape from source. contentType may be empty
// (files, stdin); see DetectFormat. Text input is parsed whole by expfmt's
// text parser, protobuf by its delimited decoder. OpenMetrics input is
// first reduced to the TYPE/UNIT and sample lines of the families listed in
// keep (and "# EOF"; HELP lines are dropped; an empty keep keeps every
// family), then rewritten into the text format (openMetricsToText) and
// parsed by the same text parser. It returns a *ParseError for malformed
// input, naming source and the line in the original input (also for two
// samples of one series in the kept families); it never panics on any
// input.
func Parse(source string, data []byte, contentType string, keep ...string) (s *Scrape, err error) {
	format := DetectFormat(data, contentType)
	s = &Scrape{Source: source, Format: format, Families: map[string]*dto.MetricFamily{}, Empty: len(bytes.TrimSpace(data)) == 0}
	var lineMap []int
	if format == FormatOpenMetrics {
		data, lineMap = reduceOpenMetrics(data, keep)
		data, lineMap, err = openMetricsToText(source, data, lineMap)
		if err != nil {
			return nil, err
		}
	}
	defer func() {
		// The parsers are third-party code fed untrusted input; a panic
		// there must surface as a parse error, not crash lcctl.
		if r := recover(); r != nil {
			s, err = nil, &ParseError{Source: source, Msg: fmt.Sprintf("parser failure: %v", r)}
		}
	}()
	switch format {
	case FormatText, FormatOpenMetrics:
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, perr := p.TextToMetricFamilies(bytes.NewReader(data))
		if perr != nil {
			err := toParseError(source, perr)
			if pe, ok := err.(*ParseError); ok && format == FormatText {
				// A YAML, JSON or log file given as a scrape fails on
				// some line with a message about floats or label
				// names: say what the input should have been.
				pe.Msg += " (not in the Prometheus text exposition format: want a /metrics page or a saved scrape of one)"
			}
			if pe, ok := err.(*ParseError); ok && format == FormatOpenMetrics {
				if pe.Line > 0 && pe.Line <= len(lineMap) {
					pe.Line = lineMap[pe.Line-1]
				} else {
					pe.Line = 0
				}
			}
			return nil, err
		}
		s.Families = fams
	default:
		dec := expfmt.NewDecoder(bytes.NewReader(data), expfmt.FmtProtoDelim)
		for {
			mf := &dto.MetricFamily{}
			derr := dec.Decode(mf)
			if errors.Is(derr, io.EOF) {
				break
			}
			if derr != nil {
				return nil, toParseError(source, derr)
			}
			name := mf.GetName()
			if prev, ok := s.Families[name]; ok {
				prev.Metric = append(prev.Metric, mf.Metric...)
				continue
			}
			s.Families[name] = mf
		}
	}
	if err := checkDuplicateSeries(source, s.Families, keep); err != nil {
		return nil, err
	}
	return s, nil
}

// checkDuplicateSeries refuses a scrape with two samples of one series (the
// same name and label set) in the families of keep (every family when keep
// is empty): expfmt's text parser keeps both, and the extraction, which
// sums series over labels it does not read, would count them twice.
// Prometheus drops such samples and counts an error; for a checking tool
// it is an exporter bug to report.
func checkDuplicateSeries(source string, fams map[string]*dto.MetricFamily, keep []string) error {
	// A series is identified by its label pairs sorted by name, each
	// length-prefixed (unambiguous for any bytes: protobuf input is not
	// UTF-8-checked). The map holds a hash of that key and the metric's
	// index; keys are compared only when hashes meet, so 200,000 series
	// allocate no key strings.
	seed := maphash.MakeSeed()
	var buf, other []byte
	var sorted []*dto.LabelPair
	seriesKey := func(dst []byte, m *dto.Metric) []byte {
		pairs := m.GetLabel()
		less := func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) }
		if !slices.IsSortedFunc(pairs, less) {
			sorted = append(sorted[:0], pairs...)
			slices.SortFunc(sorted, less)
			pairs = sorted
		}
		dst = dst[:0]
		for _, lp := range pairs {
			dst = binary.AppendUvarint(dst, uint64(len(lp.GetName())))
			dst = append(dst, lp.GetName()...)
			dst = binary.AppendUvarint(dst, uint64(len(lp.GetValue())))
			dst = append(dst, lp.GetValue()...)
		}
		return dst
	}
	for name, mf := range fams {
		if len(keep) > 0 && !slices.Contains(keep, name) {
			continue
		}
		metrics := mf.GetMetric()
		seen := make(map[uint64]int, len(metrics))
		var collided map[string]bool // keys whose hash met another key's
		for i, m := range metrics {
			buf = seriesKey(buf, m)
			h := maphash.Bytes(seed, buf)
			j, hit := seen[h]
			if !hit {
				seen[h] = i
				continue
			}
			other = seriesKey(other, metrics[j])
			dup := string(buf) == string(other)
			if !dup {
				if collided == nil {
					collided = map[string]bool{}
				}
				dup = collided[string(buf)]
				collided[string(buf)] = true
			}
			if dup {
				return &ParseError{Source: source, Msg: fmt.Sprintf("duplicate series %s{%s}: the scrape has two samples of it (an exporter bug; lcctl would count it twice)",
					name, labelList(m))}
			}
		}
	}
	return nil
}

// labelList renders m's labels sorted by name as name="value" pairs
// separated by commas, for messages.
func labelList(m *dto.Metric) string {
	sorted := slices.Clone(m.GetLabel())
	slices.SortFunc(sorted, func(a, b *dto.LabelPair) int { return strings.Compare(a.GetName(), b.GetName()) })
	parts := make([]string, len(sorted))
	for i, lp := range sorted {
		parts[i] = fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue())
	}
	return strings.Join(parts, ",")
}

func toParseError(source string, err error) error {
	var pe expfmt.ParseError
	if errors.As(err, &pe) {
		return &ParseError{Source: source, Line: pe.Line, Msg: pe.Msg}
	}
	msg := err.Error()
	// The OpenMetrics grammar reports "line N: ..." in some messages.
	return &ParseError{Source: source, Msg: strings.TrimSpace(msg)}
}

// reduceOpenMetrics keeps the lines of the wanted families (see Parse) and
// returns them with, for each kept line, its 1-based line number in data.
func reduceOpenMetrics(data []byte, keep []string) ([]byte, []int) {
	want := make(map[string]bool, len(keep))
	for _, k := range keep {
		want[k] = true
	}
	wanted := func(name string) bool {
		if len(want) == 0 || want[name] || want[name+"_total"] {
			return true
		}
		for _, suf := range []string{"_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum"} {
			if base, ok := strings.CutSuffix(name, suf); ok && (want[base] || want[base+"_total"]) {
				return true
			}
		}
		return false
	}
	var out []byte
	var lineMap []int
	lineNo := 0
	for rest := data; len(rest) > 0; {
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i+1], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		lineNo++
		body := bytes.TrimRight(line, "\n")
		keepLine := true
		switch {
		case bytes.HasPrefix(body, []byte("#")):
			f := strings.Fields(string(body))
			switch {
			case string(body) == "# EOF":
			case len(f) >= 3 && (f[1] == "TYPE" || f[1] == "UNIT"):
				keepLine = wanted(f[2])
			case len(f) >= 2 && f[1] == "HELP":
				keepLine = false
			case len(want) > 0:
				keepLine = false
			}
		case len(body) > 0:
			end := bytes.IndexAny(body, "{ ")
			if end < 0 {
				end = len(body)
			}
			keepLine = wanted(string(body[:end]))
		}
		if !keepLine {
			continue
		}
		out = append(out, line...)
		lineMap = append(lineMap, lineNo)
	}
	return out, lineMap
}

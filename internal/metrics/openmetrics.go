package metrics

import (
	"bytes"
	"fmt"
	"strings"
)

// openMetricsToText rewrites reduced OpenMetrics 1.0 lines (see
// reduceOpenMetrics) into the Prometheus text format, so that expfmt's text
// parser — linear in the input — does the parsing. expfmt's own OpenMetrics
// parser (a grammar engine) needs about 8 ms and 4 MB per typical 210-byte
// sample line (BenchmarkParseOpenMetrics: 10 s and 5 GB for 1,200 series),
// which is unusable on a real scrape.
//
// The rewrite, line by line (lineMap gives each input line's number in the
// original data; the returned map does the same for the output):
//
//   - "# TYPE name counter" becomes "# TYPE name_total counter" (OpenMetrics
//     names the counter family without the suffix its samples carry);
//     "unknown" becomes "untyped"; gaugehistogram, stateset and info TYPE
//     lines are dropped (their samples then read as untyped);
//   - "# UNIT", other comments and blank lines are dropped; "# EOF" must be
//     the last line;
//   - a sample keeps its name, label set and value; its timestamp (seconds
//     in OpenMetrics, milliseconds in text) and exemplar are dropped, as are
//     "_created" samples of counter and histogram families.
//
// A sample line whose label set or value cannot be delimited is a
// *ParseError at its original line; everything else is left to the text
// parser. It never panics.
func openMetricsToText(source string, data []byte, lineMap []int) ([]byte, []int, error) {
	var out bytes.Buffer
	var outMap []int
	counters := map[string]bool{} // family names typed counter or histogram (for _created)
	sawEOF := false
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	for i, raw := range lines {
		orig := 0
		if i < len(lineMap) {
			orig = lineMap[i]
		}
		line := strings.TrimSuffix(string(raw), "\r")
		errAt := func(format string, args ...any) error {
			return &ParseError{Source: source, Line: orig, Msg: fmt.Sprintf(format, args...)}
		}
		if sawEOF {
			if strings.TrimSpace(line) == "" {
				continue
			}
			return nil, nil, errAt("unexpected data after # EOF")
		}
		emit := func(s string) {
			out.WriteString(s)
			out.WriteByte('\n')
			outMap = append(outMap, orig)
		}
		switch {
		case line == "# EOF":
			sawEOF = true
		case strings.TrimSpace(line) == "":
		case strings.HasPrefix(line, "#"):
			f := strings.Fields(line)
			if len(f) != 4 || f[1] != "TYPE" {
				continue
			}
			name, typ := f[2], f[3]
			switch typ {
			case "counter":
				counters[name] = true
				emit("# TYPE " + name + "_total counter")
			case "histogram":
				counters[name] = true
				emit(line)
			case "gauge", "summary":
				emit(line)
			case "unknown":
				emit("# TYPE " + name + " untyped")
			}
		default:
			name, rest, err := splitSample(line)
			if err != "" {
				return nil, nil, errAt("%s", err)
			}
			if base, ok := strings.CutSuffix(name, "_created"); ok && counters[base] {
				continue
			}
			emit(rest)
		}
	}
	if !sawEOF {
		return nil, nil, &ParseError{Source: source, Msg: "OpenMetrics data does not end with # EOF"}
	}
	return out.Bytes(), outMap, nil
}

// splitSample returns a sample line's metric name and the line cut after
// its value ("name{labels} value"), or a message saying what is wrong.
func splitSample(line string) (name, sample, problem string) {
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return "", "", "expected a sample: metric name, optional labels and a value"
	}
	name = line[:i]
	p := i
	if line[p] == '{' {
		inQuote := false
		for p++; p < len(line); p++ {
			c := line[p]
			switch {
			case inQuote && c == '\\':
				p++
			case c == '"':
				inQuote = !inQuote
			case !inQuote && c == '}':
				goto closed
			}
		}
		return "", "", "unterminated label set"
	closed:
		p++
	}
	if p >= len(line) || line[p] != ' ' {
		return "", "", "expected a space before the sample value"
	}
	v := p + 1
	end := strings.IndexByte(line[v:], ' ')
	if end < 0 {
		end = len(line) - v
	}
	if end == 0 {
		return "", "", "missing sample value"
	}
	return name, line[:v+end], ""
}

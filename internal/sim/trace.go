package sim

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/zeebo/xxh3"
)

// TraceRecord is one request of a trace file.
type TraceRecord struct {
	// TimeNs is the arrival time at the gateway (ns since the start).
	TimeNs int64
	// Session identifies the session: xxh3 of its name (the simulator
	// never needs the name itself).
	Session uint64
	// InputTokens is the request's whole input, context included (tokens);
	// OutputTokens its response length (tokens).
	InputTokens, OutputTokens int64
	// RoutingKey and Model are the optional columns ("" when absent).
	RoutingKey, Model string
	// Blocks are the prompt's block ids (Mooncake and Bailian hash_ids,
	// block_tokens tokens each, chained: an id stands for the prefix up to
	// and including its block); nil for CSV traces, whose blocks are
	// derived from the session. The slice is reused by the next record.
	Blocks []uint64
	// Link says how the record joined its session (trace_json.go).
	Link TraceLink
}

// TraceLink says how a trace request joined its session.
type TraceLink uint8

// Trace links.
const (
	// LinkRoot starts a session.
	LinkRoot TraceLink = iota
	// LinkFollowUp continues the latest request of its session.
	LinkFollowUp
	// LinkBranch continues an earlier request of its session that
	// another request had already continued (a regenerated or edited
	// turn).
	LinkBranch
)

// Trace formats (workload.trace_format).
const (
	TraceCSV      = "csv"
	TraceMooncake = "mooncake"
	TraceBailian  = "bailian"
)

// TraceStats describes a trace as read: its format, the tokens per block
// of its hash ids, and the sessions found (for Mooncake traces,
// reconstructed from the hash chains; docs/simulate.md "Trace formats").
type TraceStats struct {
	// Format is csv, mooncake or bailian (given or detected).
	Format string `json:"format"`
	// BlockTokens is the block size of the KV cache (tokens).
	BlockTokens int64 `json:"block_tokens"`
	// Records counts requests; Sessions the sessions they form;
	// FollowUps requests that continue their session's latest request;
	// Branches requests that continue an earlier one.
	Records   int64 `json:"records"`
	Sessions  int64 `json:"sessions"`
	FollowUps int64 `json:"follow_ups"`
	Branches  int64 `json:"branches"`
}

// Trace limits: a line (bytes; longer lines are refused without reading
// them whole), token counts and times.
const (
	maxTraceLine   = 1 << 20
	maxTraceTokens = 1 << 40
	maxTraceTimeMs = 1e12 // ≈ 31 years
)

// traceReader streams a trace file: one record per line,
// `time_ms,session,input_tokens,output_tokens[,routing_key[,model]]`,
// times non-decreasing; blank lines and lines starting with # are
// skipped, and so is a first line starting with "time_ms" (a header).
// Memory does not depend on the file's length.
type traceReader struct {
	file   string
	r      *bufio.Reader
	line   int
	last   int64
	seen   bool // a data line or the header was read
	parsed bool // a record was parsed
	intern map[string]string

	// format is the trace format, given or detected from the first data
	// line ("" until then); blockTokens the tokens per hash id (0 =
	// the format's default).
	format      string
	blockTokens int64
	stats       TraceStats
	js          jsonState
}

// newTraceReader reads a trace of the given format ("" = detect from the
// first data line) with blockTokens tokens per hash id (0 = the format's
// default: 512 Mooncake, 16 otherwise).
func newTraceReader(file string, r io.Reader, format string, blockTokens int64) *traceReader {
	t := &traceReader{file: file, r: bufio.NewReaderSize(r, maxTraceLine), intern: map[string]string{}, blockTokens: blockTokens}
	if format != "" {
		t.setFormat(format)
	}
	return t
}

func (t *traceReader) errAt(col int, field, format string, args ...any) error {
	e := &InputError{File: t.file, Line: t.line, Col: col, Path: field}
	e.Msg = fmt.Sprintf(format, args...)
	return e
}

// next returns the next record; ok is false at the end of the file.
func (t *traceReader) next() (rec TraceRecord, ok bool, err error) {
	for {
		raw, err := t.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// The rest of the line is never read: a huge line costs
			// the buffer, not its length.
			t.line++
			return rec, false, t.errAt(1, "", "line longer than %d bytes", maxTraceLine)
		}
		if len(raw) == 0 && err != nil {
			if err == io.EOF {
				return rec, false, nil
			}
			return rec, false, &InputError{File: t.file, Line: t.line, Msg: err.Error()}
		}
		t.line++
		line := bytes.TrimRight(raw, "\r\n")
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		if !t.seen && bytes.HasPrefix(trimmed, []byte("time_ms")) {
			if t.format == "" {
				t.setFormat(TraceCSV)
			}
			t.seen = true
			continue
		}
		t.seen = true
		if t.format == "" {
			f, err := t.detect(trimmed)
			if err != nil {
				return rec, false, err
			}
			t.setFormat(f)
		}
		isJSON := trimmed[0] == '{'
		if isJSON != (t.format != TraceCSV) {
			if isJSON {
				return rec, false, t.errAt(1, "", "a JSON line in a csv trace (workload.trace_format, or detected from the first data line): a trace has one format")
			}
			return rec, false, t.errAt(1, "", "want a JSON object, one per line, in a %s trace (workload.trace_format, or detected from the first data line); a CSV line or other text cannot be mixed in", t.format)
		}
		var perr error
		if isJSON {
			rec, perr = t.parseJSON(trimmed)
		} else {
			rec, perr = t.parse(line)
			if perr == nil {
				t.stats.Records++
			}
		}
		if perr == nil {
			t.parsed = true
		} else if !t.parsed {
			// The first request line does not parse: the file may be no
			// trace at all (workload.trace can name any file), so its
			// content is not quoted (see got).
			var ie *InputError
			if errors.As(perr, &ie) {
				ie.Msg += "; this is the first request line: is the file a trace? (its content is not shown)"
			}
		}
		return rec, perr == nil, perr
	}
}

// setFormat fixes the format and the block size.
func (t *traceReader) setFormat(f string) {
	t.format = f
	if t.blockTokens == 0 {
		t.blockTokens = 16
		if f == TraceMooncake {
			t.blockTokens = 512
		}
	}
	t.stats.Format, t.stats.BlockTokens = f, t.blockTokens
}

// detect tells the format from the first data line: a JSON object with
// chat_id is Bailian, one with hash_ids and no chat_id Mooncake, anything
// not starting with { CSV.
func (t *traceReader) detect(line []byte) (string, error) {
	if line[0] != '{' {
		return TraceCSV, nil
	}
	keys, err := t.topKeys(line)
	if err != nil {
		return "", err
	}
	switch {
	case keys["chat_id"]:
		return TraceBailian, nil
	case keys["hash_ids"]:
		return TraceMooncake, nil
	}
	return "", t.errAt(1, "", "cannot tell the trace format: a JSON line with neither chat_id (bailian) nor hash_ids (mooncake); set workload.trace_format")
}

var traceFields = [...]string{"time_ms", "session", "input_tokens", "output_tokens", "routing_key", "model"}

func (t *traceReader) parse(line []byte) (TraceRecord, error) {
	var rec TraceRecord
	var fields [6][]byte
	var cols [6]int
	n := 0
	start := 0
	for i := 0; i <= len(line); i++ {
		if i == len(line) || line[i] == ',' {
			if n == len(fields) {
				return rec, t.errAt(start+1, "", "too many fields (at most 6: %s)", joinFields())
			}
			fields[n], cols[n] = bytes.TrimSpace(line[start:i]), start+1
			n++
			start = i + 1
		}
	}
	if n < 4 {
		return rec, t.errAt(len(line)+1, traceFields[n], "missing field %s (want %s)", traceFields[n], joinFields())
	}
	for i, b := range line {
		if b < 0x20 && b != '\t' || b > 0x7e {
			return rec, t.errAt(i+1, "", "non-printable or non-ASCII byte 0x%02x", b)
		}
	}
	ms, err := strconv.ParseFloat(string(fields[0]), 64)
	if err != nil || math.IsNaN(ms) || ms < 0 || ms > maxTraceTimeMs {
		return rec, t.errAt(cols[0], "time_ms", "want a number of milliseconds 0–1e12%s", t.got(fields[0]))
	}
	rec.TimeNs = int64(math.Round(ms * 1e6))
	if rec.TimeNs < t.last {
		return rec, t.errAt(cols[0], "time_ms", "time goes backwards (%s ms after %g ms)", fields[0], float64(t.last)/1e6)
	}
	if len(fields[1]) == 0 {
		return rec, t.errAt(cols[1], "session", "empty session")
	}
	rec.Session = xxh3.Hash(fields[1]) &^ (1 << 63)
	for k, dst := range []*int64{&rec.InputTokens, &rec.OutputTokens} {
		v, ok := parseCount(fields[2+k])
		if !ok {
			return rec, t.errAt(cols[2+k], traceFields[2+k], "want a whole number of tokens 0–2^40%s", t.got(fields[2+k]))
		}
		*dst = v
	}
	if n > 4 {
		rec.RoutingKey = t.internBytes(fields[4])
	}
	if n > 5 {
		rec.Model = t.internBytes(fields[5])
	}
	t.last = rec.TimeNs
	return rec, nil
}

// got returns ", got "VALUE"" for an error message, or "" before the
// first record was parsed: a file that is not a trace is not quoted.
func (t *traceReader) got(b []byte) string {
	if !t.parsed {
		return ""
	}
	return fmt.Sprintf(", got %q", b)
}

func (t *traceReader) internBytes(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if s, ok := t.intern[string(b)]; ok {
		return s
	}
	if len(t.intern) > 1<<16 {
		return string(b) // bounded interning; beyond it, allocate
	}
	s := string(b)
	t.intern[s] = s
	return s
}

func parseCount(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 13 {
		return 0, false
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	return v, v <= maxTraceTokens
}

func joinFields() string {
	var b bytes.Buffer
	for i, f := range traceFields {
		if i > 0 {
			b.WriteByte(',')
		}
		if i >= 4 {
			b.WriteString("[" + f + "]")
		} else {
			b.WriteString(f)
		}
	}
	return b.String()
}

// ReadTrace reads a whole trace from r, calling fn for each record, and
// stops at the first error (an *InputError with line and column, or fn's
// error). It never panics and keeps no more than one line in memory.
//
// format is workload.trace_format ("" = detect) and blockTokens
// workload.block_tokens (0 = the format's default); the stats describe
// what was read.
func ReadTrace(name string, r io.Reader, format string, blockTokens int64, fn func(TraceRecord) error) (TraceStats, error) {
	t := newTraceReader(name, r, format, blockTokens)
	for {
		rec, ok, err := t.next()
		if err != nil {
			return t.stats, err
		}
		if !ok {
			return t.stats, nil
		}
		if fn != nil {
			if err := fn(rec); err != nil {
				return t.stats, err
			}
		}
	}
}

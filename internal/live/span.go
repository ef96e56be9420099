package live

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// SpanName is the name of Stargate's request span (live-snapshot.md §5,
// http_proxy/trace.rs).
const SpanName = "proxy_openai_request"

// MaxSpanFileBytes bounds a span file (256 MiB).
const MaxSpanFileBytes = 256 << 20

// Span is one proxy_openai_request span: what Stargate recorded at its last
// dispatch attempt for one request.
type Span struct {
	// File is the file it was read from; RequestID the --request-id that
	// selected it; MatchedBy says how (an attribute name, "event
	// request_id" or "trace id").
	File, RequestID, MatchedBy string
	// TraceID and SpanID are hex; Start is the span's start time.
	TraceID, SpanID string
	Start           time.Time
	// Matches is how many spans matched the request id (the newest is
	// used).
	Matches int
	// Attrs are the span's attributes, as strings (numbers in Go's
	// shortest form, booleans true/false); event attributes are not
	// included.
	Attrs map[string]string
	// SessionState is routing.session_state, or the session_state of the
	// "routing session classified" event ("" when neither is there).
	SessionState string
	// SessionStateFrom names where SessionState came from.
	SessionStateFrom string
}

// Attr returns an attribute and whether it is present.
func (s *Span) Attr(name string) (string, bool) {
	v, ok := s.Attrs[name]
	return v, ok
}

// Cluster is selected_cluster.id ("" when the request was not
// dispatched).
func (s *Span) Cluster() string { return s.Attrs["selected_cluster.id"] }

// Int returns an integer attribute (routing.rank_depth, ...).
func (s *Span) Int(name string) (int64, bool) {
	v, ok := s.Attrs[name]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(v, 64)
		if ferr != nil || f != math.Trunc(f) {
			return 0, false
		}
		n = int64(f)
	}
	return n, true
}

// requestIDAttrs are the span attributes compared with --request-id.
// Stargate's span declares none (trace.rs has request.* fields but no
// request id), so these are the names a collector or the gateway's
// propagation may add: OpenTelemetry's captured request header, and the
// common spellings. The session event's request_id and the trace id are
// also accepted (see ReadSpan).
var requestIDAttrs = []string{"http.request.header.x-request-id", "request.id", "request_id", "x-request-id", "http.request_id"}

// ReadSpan reads an OTLP/JSON export and returns the proxy_openai_request
// span of requestID. Accepted shapes (docs/snapshot.md "Spans"): the
// OpenTelemetry collector's file exporter (one ExportTraceServiceRequest
// {"resourceSpans": [...]} per line, or one document), Tempo's JSON
// ({"batches": [...]}), both with "scopeSpans" or the older
// "instrumentationLibrarySpans"; and Jaeger's JSON ({"data": [{"spans":
// [...]}]}, tags and logs). A span matches when one of requestIDAttrs, or
// the request_id of one of its events, equals requestID, or its trace id
// does (hex, any case). Errors name the file and line: not JSON, no span
// of that name, none for the request.
func ReadSpan(file string, data []byte, requestID string) (*Span, error) {
	if requestID == "" {
		return nil, usageErr("--span "+file, "", "", "--request-id is required with --span: the x-request-id of the request whose span to use")
	}
	if len(data) > MaxSpanFileBytes {
		return nil, usageErr("--span "+file, "", "", "larger than %d bytes", MaxSpanFileBytes)
	}
	var spans []*Span
	named := 0
	total := 0
	handle := func(s *rawSpan) {
		total++
		if s.name != SpanName {
			return
		}
		named++
		if sp := s.match(requestID); sp != nil {
			sp.File = file
			spans = append(spans, sp)
		}
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, usageErr("--span "+file, "", "", "empty file: want an OTLP/JSON export of spans")
	}
	docs := [][]byte{trimmed}
	lines := []int{1}
	var whole any
	if json.Unmarshal(trimmed, &whole) != nil {
		// JSON Lines: one export request per line.
		docs, lines = nil, nil
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64*1024), MaxSpanFileBytes)
		for n := 1; sc.Scan(); n++ {
			if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
				docs = append(docs, append([]byte(nil), l...))
				lines = append(lines, n)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, usageErr("--span "+file, "", "", "%v", err)
		}
	}
	for i, d := range docs {
		if err := walkSpans(d, handle); err != nil {
			return nil, usageErr(fmt.Sprintf("--span %s:%d", file, lines[i]), "", "", "%v", err)
		}
	}
	if total == 0 {
		return nil, usageErr("--span "+file, "", "", "no spans found: want the OTLP/JSON of the collector's file exporter ({\"resourceSpans\": ...}), Tempo ({\"batches\": ...}) or Jaeger ({\"data\": [{\"spans\": ...}]})")
	}
	if len(spans) == 0 {
		return nil, usageErr("--span "+file, "", "request_id", "no %s span for request %q (%d spans, %d named %s); a span matches by the attribute %s, an event's request_id, or its trace id",
			SpanName, requestID, total, named, SpanName, strings.Join(requestIDAttrs, ", "))
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
	s := spans[len(spans)-1]
	s.Matches = len(spans)
	return s, nil
}

// rawSpan is one span in any accepted shape, normalised.
type rawSpan struct {
	name, traceID, spanID string
	start                 time.Time
	attrs                 map[string]string
	events                []map[string]string
}

func (r *rawSpan) match(id string) *Span {
	sp := &Span{RequestID: id, TraceID: r.traceID, SpanID: r.spanID, Start: r.start, Attrs: r.attrs}
	for _, a := range requestIDAttrs {
		if r.attrs[a] == id {
			sp.MatchedBy = "attribute " + a
		}
	}
	for _, ev := range r.events {
		if ev["request_id"] == id && sp.MatchedBy == "" {
			sp.MatchedBy = "event request_id"
		}
	}
	if sp.MatchedBy == "" && r.traceID != "" && strings.EqualFold(r.traceID, id) {
		sp.MatchedBy = "trace id"
	}
	if sp.MatchedBy == "" {
		return nil
	}
	if v, ok := r.attrs["routing.session_state"]; ok {
		sp.SessionState, sp.SessionStateFrom = v, "attribute routing.session_state"
	}
	for _, ev := range r.events {
		if v, ok := ev["session_state"]; ok && sp.SessionState == "" {
			sp.SessionState, sp.SessionStateFrom = v, "event "+strconv.Quote(ev["\x00name"])
		}
	}
	return sp
}

// walkSpans calls fn for every span of one JSON document.
func walkSpans(doc []byte, fn func(*rawSpan)) error {
	var top struct {
		ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
		Batches       []otlpResourceSpans `json:"batches"`
		Data          []struct {
			TraceID string       `json:"traceID"`
			Spans   []jaegerSpan `json:"spans"`
		} `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("not JSON: %v (at byte %d)", se, se.Offset)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("not an OTLP/JSON span export: %s is a %s where %s was expected", te.Field, te.Value, te.Type)
		}
		return fmt.Errorf("not JSON: %v", err)
	}
	for _, rs := range append(top.ResourceSpans, top.Batches...) {
		for _, ss := range append(rs.ScopeSpans, rs.InstrumentationLibrarySpans...) {
			for _, s := range ss.Spans {
				attrs, err := otlpAttrs(s.Attributes)
				if err != nil {
					return fmt.Errorf("span %s (%s): %v", s.SpanID, s.Name, err)
				}
				r := &rawSpan{name: s.Name, traceID: s.TraceID, spanID: s.SpanID, attrs: attrs}
				if ns, err := strconv.ParseInt(s.StartTimeUnixNano.String(), 10, 64); err == nil {
					r.start = time.Unix(0, ns).UTC()
				}
				for _, e := range s.Events {
					m, err := otlpAttrs(e.Attributes)
					if err != nil {
						return fmt.Errorf("span %s (%s): event %q: %v", s.SpanID, s.Name, e.Name, err)
					}
					m["\x00name"] = e.Name
					r.events = append(r.events, m)
				}
				fn(r)
			}
		}
	}
	for _, d := range top.Data {
		for _, s := range d.Spans {
			attrs, err := jaegerTags(s.Tags)
			if err != nil {
				return fmt.Errorf("span %s (%s): %v", s.SpanID, s.OperationName, err)
			}
			r := &rawSpan{name: s.OperationName, traceID: s.TraceID, spanID: s.SpanID, attrs: attrs}
			if us, err := s.StartTime.Int64(); err == nil {
				r.start = time.UnixMicro(us).UTC()
			}
			for _, l := range s.Logs {
				m, err := jaegerTags(l.Fields)
				if err != nil {
					return fmt.Errorf("span %s (%s): log: %v", s.SpanID, s.OperationName, err)
				}
				m["\x00name"] = m["event"]
				r.events = append(r.events, m)
			}
			fn(r)
		}
	}
	return nil
}

type otlpResourceSpans struct {
	ScopeSpans                  []otlpScopeSpans `json:"scopeSpans"`
	InstrumentationLibrarySpans []otlpScopeSpans `json:"instrumentationLibrarySpans"`
}

type otlpScopeSpans struct {
	Spans []otlpSpan `json:"spans"`
}

type otlpSpan struct {
	TraceID           string      `json:"traceId"`
	SpanID            string      `json:"spanId"`
	Name              string      `json:"name"`
	StartTimeUnixNano json.Number `json:"startTimeUnixNano"`
	Attributes        []otlpKV    `json:"attributes"`
	Events            []struct {
		Name       string   `json:"name"`
		Attributes []otlpKV `json:"attributes"`
	} `json:"events"`
}

type otlpKV struct {
	Key   string         `json:"key"`
	Value map[string]any `json:"value"`
}

// otlpAttrs flattens OTLP AnyValues to strings: stringValue as is,
// intValue (a JSON string or number) and doubleValue in decimal,
// boolValue as true/false; an arrayValue with one string element (how
// captured HTTP headers are recorded) as that string. Other values are
// left out. A key given twice is an error naming it: which value
// Stargate meant cannot be told, so neither is picked.
func otlpAttrs(kvs []otlpKV) (map[string]string, error) {
	m := map[string]string{}
	seen := map[string]bool{}
	for _, kv := range kvs {
		if seen[kv.Key] {
			return nil, fmt.Errorf("attribute %q is given twice", kv.Key)
		}
		seen[kv.Key] = true
		if v, ok := anyValue(kv.Value); ok {
			m[kv.Key] = v
		}
	}
	return m, nil
}

func anyValue(v map[string]any) (string, bool) {
	for k, x := range v {
		switch k {
		case "stringValue":
			s, ok := x.(string)
			return s, ok
		case "intValue", "doubleValue":
			switch n := x.(type) {
			case string:
				return n, true
			case json.Number:
				return n.String(), true
			}
		case "boolValue":
			b, ok := x.(bool)
			return strconv.FormatBool(b), ok
		case "arrayValue":
			arr, _ := x.(map[string]any)
			vals, _ := arr["values"].([]any)
			if len(vals) == 1 {
				if e, ok := vals[0].(map[string]any); ok {
					return anyValue(e)
				}
			}
		}
	}
	return "", false
}

type jaegerSpan struct {
	TraceID       string      `json:"traceID"`
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	StartTime     json.Number `json:"startTime"`
	Tags          []jaegerTag `json:"tags"`
	Logs          []struct {
		Fields []jaegerTag `json:"fields"`
	} `json:"logs"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func jaegerTags(tags []jaegerTag) (map[string]string, error) {
	m := map[string]string{}
	seen := map[string]bool{}
	for _, t := range tags {
		if seen[t.Key] {
			return nil, fmt.Errorf("tag %q is given twice", t.Key)
		}
		seen[t.Key] = true
		switch v := t.Value.(type) {
		case string:
			m[t.Key] = v
		case json.Number:
			m[t.Key] = v.String()
		case bool:
			m[t.Key] = strconv.FormatBool(v)
		}
	}
	return m, nil
}

// spanFields maps selected_inst.* attributes to snapshot fields.
var spanFields = []struct{ attr, field string }{
	{"selected_inst.rtt_ms", "rtt_ms"},
	{"selected_inst.last_mean_input_tps", "last_mean_input_tps"},
	{"selected_inst.output_tps", "output_tps"},
	{"selected_inst.max_output_tps", "max_output_tps"},
	{"selected_inst.queue_size", "queue_size"},
	{"selected_inst.queued_input_size", "queued_input_size"},
	{"selected_inst.kv_cache_capacity_tokens", "kv_cache_capacity_tokens"},
	{"selected_inst.kv_cache_used_tokens", "kv_cache_used_tokens"},
	{"selected_inst.kv_cache_free_tokens", "kv_cache_free_tokens"},
	{"selected_inst.num_running_queries", "num_running_queries"},
	{"selected_inst.max_engine_concurrency", "max_engine_concurrency"},
	{"selected_inst.total_query_input_size", "total_query_input_size"},
}

// apply writes the span's selected_inst.* values into the chosen cluster
// of snap (span > overlay > metrics). The chosen cluster must be one of
// the snapshot's; a malformed value is an error naming the attribute.
func (s *Span) apply(snap *Snapshot) error {
	src := "--span " + s.File
	id := s.Cluster()
	if id == "" {
		return usageErr(src, "", "selected_cluster.id", "the span of request %q has no selected_cluster.id: the request was not dispatched, so the span holds no cluster's values", s.RequestID)
	}
	c := snap.Cluster(id)
	if c == nil {
		ids := make([]string, len(snap.Clusters))
		for i := range snap.Clusters {
			ids[i] = snap.Clusters[i].ID
		}
		return usageErr(src, id, "selected_cluster.id", "the span's chosen cluster is not among the live sources' clusters (%s)", strings.Join(ids, ", "))
	}
	age := snap.At.Sub(s.Start)
	if !s.Start.IsZero() && !snap.Past && age < -MaxClockSkew {
		// The snapshot instant is now: a span that starts later is from
		// a clock that is wrong, and its age would be negative.
		return usageErr(src, id, "startTimeUnixNano", "the span of request %q starts at %s, %s in the future (more than the %s of clock skew allowed): check the clock of the Stargate that recorded it",
			s.RequestID, fmtTime(s.Start), fmtAge(-age), MaxClockSkew)
	}
	snap.Span, snap.SpanRequestID = s.File, s.RequestID
	note := "exactly what the load balancer read, reservations included"
	if ms, ok := s.Attrs["selected_inst.snapshot_age_ms"]; ok {
		note += "; Stargate's view was " + ms + " ms old"
	}
	for _, sf := range spanFields {
		v, ok := s.Attrs[sf.attr]
		if !ok {
			continue
		}
		f := c.Get(sf.field)
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			return usageErr(src, id, sf.attr, "%q is not a finite number ≥ 0", v)
		}
		fnote := note
		if f.Origin != OriginUnknown && f.Origin != OriginDefault {
			// live-snapshot.md §4: show the span's value beside the
			// snapshot's.
			fnote += fmt.Sprintf("; the %s value was %s", f.Origin, f.valueString())
		}
		nf := Field{Name: f.Name, Kind: f.Kind, Stats: f.Stats, Origin: OriginSpan, Source: sf.attr, Age: age, HasAge: !s.Start.IsZero(), Note: fnote}
		if f.Kind == KindFloat {
			nf.Float = x
		} else {
			if x != math.Trunc(x) || x > math.MaxInt64 {
				return usageErr(src, id, sf.attr, "%q is not a whole number", v)
			}
			nf.Uint = uint64(x)
		}
		*f = nf
	}
	if !s.Start.IsZero() && age < -FastFieldHorizon {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("the span of request %s was recorded at %s, %s after the snapshot instant: cluster %s has the span's values, the others the metrics' (use --at %s to read them at the decision)",
			s.RequestID, fmtTime(s.Start), fmtAge(-age), id, s.Start.UTC().Format(time.RFC3339Nano)))
	} else if !s.Start.IsZero() && age > FastFieldHorizon {
		snap.Warnings = append(snap.Warnings, fmt.Sprintf("the span of request %s was recorded at %s, %s before the snapshot instant: cluster %s has the span's values, the others the metrics' (use --at %s to read them at the decision)",
			s.RequestID, fmtTime(s.Start), fmtAge(age), id, s.Start.UTC().Format(time.RFC3339Nano)))
	}
	return nil
}

// SpanValue is one selected_inst.* value of a span beside the
// snapshot's value of the same field.
type SpanValue struct {
	// Attr is the span attribute, Field the snapshot field.
	Attr, Field string
	// Span is the span's value (decimal).
	Span string
}

// Values returns the span's selected_inst.* values that map to snapshot
// fields, in formats.md order.
func (s *Span) Values() []SpanValue {
	var out []SpanValue
	for _, sf := range spanFields {
		if v, ok := s.Attrs[sf.attr]; ok {
			out = append(out, SpanValue{Attr: sf.attr, Field: sf.field, Span: v})
		}
	}
	return out
}

package live

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/ui"
)

// SnapshotSchema identifies the JSON form of a live snapshot.
const SnapshotSchema = "lcctl.snapshot/v1"

// timeLayout renders instants: RFC 3339 UTC with milliseconds.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

func fmtTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func fmtAge(d time.Duration) string {
	if d < 0 {
		return "-" + fmtAge(-d)
	}
	return d.Round(time.Millisecond).String()
}

func (f *Field) valueString() string {
	switch f.Kind {
	case KindFloat:
		return strconv.FormatFloat(f.Float, 'f', -1, 64)
	case KindUint:
		return strconv.FormatUint(f.Uint, 10)
	}
	return yamlString(f.Str)
}

// yamlString renders s as one YAML scalar (quoted when needed).
func yamlString(s string) string {
	b, err := yaml.Marshal(s)
	out := strings.TrimSuffix(string(b), "\n")
	if err != nil || strings.Contains(out, "\n") {
		// Never a block scalar: a JSON string is a YAML double-quoted
		// scalar on one line.
		j, _ := json.Marshal(s)
		return string(j)
	}
	return out
}

// oneLine makes s safe inside a YAML comment: control and bidirectional
// formatting characters are escaped as everywhere else (ui.Printable), and
// the line and paragraph separators, which YAML would read as line breaks,
// become spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, ui.Printable(s))
}

// annotation is "origin[ source][, age A][: note]".
func (f *Field) annotation() string {
	var b strings.Builder
	b.WriteString(string(f.Origin))
	if f.Source != "" {
		b.WriteString(" from " + f.Source)
	}
	if f.HasAge {
		b.WriteString(", age " + fmtAge(f.Age))
	}
	if f.Note != "" {
		b.WriteString(": " + f.Note)
	}
	return oneLine(b.String())
}

// WriteYAML writes the snapshot as a formats.md snapshot file, with the
// provenance as comments: a header (source, instant, aggregation, files,
// warnings, notes), one comment per cluster (its age and backends) and one
// per field (origin, source, age, note). Unknown fields appear only as
// comments. The result is a valid `lcctl explain --snapshot` input. The
// error is w's write error.
func WriteYAML(w io.Writer, s *Snapshot) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	p("# lcctl snapshot of model %s (docs/snapshot.md)\n", oneLine(s.Model))
	when := "now"
	if s.Past {
		when = "--at, a past instant"
	}
	p("# source: %s at %s (%s)\n", oneLine(s.Source), fmtTime(s.At), when)
	// The rule is live-snapshot.md §1.4; the header cites what an
	// installed lcctl carries: `lcctl docs snapshot`, Field mapping.
	p("# aggregation: %s (lcctl docs snapshot, \"Field mapping\")\n", s.Aggregation)
	if s.Overlay != "" {
		p("# overlay: %s\n", oneLine(s.Overlay))
	}
	if s.Span != "" {
		p("# span: %s, request %s\n", oneLine(s.Span), oneLine(s.SpanRequestID))
	}
	p("# each value: origin (metric, derived, overlay, span, default, unknown), source, age before the instant\n")
	for _, w := range s.Warnings {
		p("# warning: %s\n", oneLine(w))
	}
	for _, n := range s.Notes {
		p("# note: %s\n", oneLine(n))
	}
	p("model: %s\n", yamlString(s.Model))
	if len(s.Clusters) == 0 {
		p("clusters: []\n")
	} else {
		p("clusters:\n")
	}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		var bl []string
		for _, be := range c.Backends {
			src := ""
			if be.Source {
				src = ", source backend"
			}
			bl = append(bl, fmt.Sprintf("%s (sampled %s, age %s%s)", be.ID, fmtTime(be.SampleTime), fmtAge(be.Age), src))
		}
		p("  # %s: age %s; backends: %s\n", oneLine(c.ID), fmtAge(c.Age), oneLine(strings.Join(bl, "; ")))
		inStats := false
		for j := range c.Fields {
			f := &c.Fields[j]
			indent := "    "
			if f.Stats {
				if !inStats {
					p("    stats:\n")
					inStats = true
				}
				indent = "      "
			}
			lead := indent
			if f.Name == "cluster_id" {
				lead = "  - "
			}
			switch {
			case f.Origin == OriginUnknown:
				p("%s# %s: unknown, left out (%s)\n", indent, f.Name, oneLine(unknownMeaning[f.Name]))
			case f.Name == "queue_time_estimate_ms_by_priority":
				p("%s# %s: %s\n", indent, f.Name, f.annotation())
			default:
				p("%s%s: %s # %s\n", lead, f.Name, f.valueString(), f.annotation())
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON shapes (docs/snapshot.md "JSON"). clusters[] is the formats.md
// snapshot; provenance is ignored by the snapshot decoder.
type jsonDoc struct {
	Schema     string         `json:"schema"`
	Model      string         `json:"model"`
	Clusters   []jsonCluster  `json:"clusters"`
	Provenance jsonProvenance `json:"provenance"`
}

type jsonCluster struct {
	ClusterID          string         `json:"cluster_id"`
	RTTMs              *float64       `json:"rtt_ms,omitempty"`
	Status             string         `json:"status,omitempty"`
	ActiveBackendCount *uint64        `json:"active_backend_count,omitempty"`
	Stats              map[string]any `json:"stats"`
}

type jsonProvenance struct {
	Source      string       `json:"source"`
	At          string       `json:"at"`
	Past        bool         `json:"past"`
	Aggregation Aggregation  `json:"aggregation"`
	Overlay     string       `json:"overlay,omitempty"`
	Span        string       `json:"span,omitempty"`
	RequestID   string       `json:"request_id,omitempty"`
	Clusters    []jsonProvCl `json:"clusters"`
	Warnings    []string     `json:"warnings"`
	Notes       []string     `json:"notes"`
}

type jsonProvCl struct {
	ClusterID string        `json:"cluster_id"`
	AgeMs     float64       `json:"age_ms"`
	Backends  []jsonBackend `json:"backends"`
	Fields    []jsonField   `json:"fields"`
}

type jsonBackend struct {
	ID            string  `json:"id"`
	SampleTime    string  `json:"sample_time"`
	AgeMs         float64 `json:"age_ms"`
	SourceBackend bool    `json:"source_backend"`
}

type jsonField struct {
	Field  string   `json:"field"`
	Origin Origin   `json:"origin"`
	Source string   `json:"source,omitempty"`
	AgeMs  *float64 `json:"age_ms"`
	Note   string   `json:"note,omitempty"`
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// WriteJSON writes JSON(s) as one indented document; the error is the
// encoder's or w's.
func WriteJSON(w io.Writer, s *Snapshot) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(JSON(s))
}

// JSON returns the snapshot's JSON document: "schema" (SnapshotSchema),
// "model" and "clusters" in the formats.md snapshot shape (unknown fields
// left out), and "provenance" (docs/snapshot.md "JSON"). `lcctl explain
// --snapshot` accepts it unchanged.
func JSON(s *Snapshot) any {
	doc := jsonDoc{Schema: SnapshotSchema, Model: s.Model, Clusters: []jsonCluster{},
		Provenance: jsonProvenance{Source: s.Source, At: fmtTime(s.At), Past: s.Past, Aggregation: s.Aggregation,
			Overlay: s.Overlay, Span: s.Span, RequestID: s.SpanRequestID, Clusters: []jsonProvCl{},
			Warnings: append([]string{}, s.Warnings...), Notes: append([]string{}, s.Notes...)}}
	for i := range s.Clusters {
		c := &s.Clusters[i]
		jc := jsonCluster{ClusterID: c.ID, Stats: map[string]any{}}
		pc := jsonProvCl{ClusterID: c.ID, AgeMs: ms(c.Age), Backends: []jsonBackend{}, Fields: []jsonField{}}
		for _, b := range c.Backends {
			pc.Backends = append(pc.Backends, jsonBackend{ID: b.ID, SampleTime: fmtTime(b.SampleTime), AgeMs: ms(b.Age), SourceBackend: b.Source})
		}
		for j := range c.Fields {
			f := &c.Fields[j]
			name := f.Name
			if f.Stats {
				name = "stats." + name
			}
			jf := jsonField{Field: name, Origin: f.Origin, Source: f.Source, Note: f.Note}
			if f.HasAge {
				a := ms(f.Age)
				jf.AgeMs = &a
			}
			if f.Origin == OriginUnknown {
				jf.Note = unknownMeaning[f.Name]
			}
			pc.Fields = append(pc.Fields, jf)
			if !f.Known() || f.Name == "queue_time_estimate_ms_by_priority" || f.Name == "cluster_id" {
				continue
			}
			switch f.Name {
			case "rtt_ms":
				v := f.Float
				jc.RTTMs = &v
			case "status":
				jc.Status = f.Str
			case "active_backend_count":
				v := f.Uint
				jc.ActiveBackendCount = &v
			default:
				if f.Kind == KindFloat {
					jc.Stats[f.Name] = f.Float
				} else {
					jc.Stats[f.Name] = f.Uint
				}
			}
		}
		doc.Clusters = append(doc.Clusters, jc)
		doc.Provenance.Clusters = append(doc.Provenance.Clusters, pc)
	}
	return doc
}

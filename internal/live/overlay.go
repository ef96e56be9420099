package live

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/lcctl/lcctl/internal/lb"
	"github.com/lcctl/lcctl/internal/yamldoc"
)

// OverlayCluster is what the operator gives for one cluster: the values no
// Pylon metric carries (live-snapshot.md §2). A nil field is not given.
type OverlayCluster struct {
	// RTTMs is the forwarded health RTT (ms, ≥ 0).
	RTTMs *float64
	// MaxEngineConcurrency is the engine's concurrency limit (requests;
	// Pylon's --max-engine-concurrency).
	MaxEngineConcurrency *uint64
	// MaxInputTPS is the generation maximum input rate (tokens/s, ≥ 0).
	MaxInputTPS *float64
	// Status overrides the status derived from the registration gauges.
	Status *lb.Status
	// Line is the cluster's line in the file (for messages).
	Line int
}

// Overlay is a decoded --overlay file:
//
//	clusters:
//	  cluster-a: {rtt_ms: 5, max_engine_concurrency: 64, max_input_tps: 12000, status: active}
//
// Precedence (docs/snapshot.md): a span's value for the chosen cluster
// wins over the overlay, the overlay over the metrics.
type Overlay struct {
	// File is the file name as given.
	File string
	// Clusters maps cluster ids to their values.
	Clusters map[string]*OverlayCluster
}

// MaxOverlayBytes bounds an overlay file (1 MiB).
const MaxOverlayBytes = 1 << 20

// DecodeOverlay decodes an overlay file (YAML or JSON). Unknown fields,
// duplicate keys or clusters, negative or non-finite numbers and unknown
// statuses are errors "file:line:col: path: message"; it never panics.
func DecodeOverlay(file string, data []byte) (*Overlay, error) {
	if len(data) > MaxOverlayBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes; an overlay lists a few clusters", file, MaxOverlayBytes)
	}
	parsed, err := yamldoc.Parse(data)
	var ye *yamldoc.Error
	switch {
	case errors.As(err, &ye) && ye.Kind == yamldoc.Empty:
		parsed = &yaml.Node{Kind: yaml.DocumentNode}
	case ye != nil && ye.Line > 0 && ye.Col > 0:
		return nil, fmt.Errorf("%s:%d:%d: %s", file, ye.Line, ye.Col, ye.Msg)
	case ye != nil && ye.Line > 0:
		return nil, fmt.Errorf("%s:%d: %s", file, ye.Line, ye.Msg)
	case err != nil:
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	root := *parsed
	o := &Overlay{File: file, Clusters: map[string]*OverlayCluster{}}
	errf := func(n *yaml.Node, path, format string, args ...any) error {
		return fmt.Errorf("%s:%d:%d: %s: %s", file, n.Line, n.Column, path, fmt.Sprintf(format, args...))
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty overlay: want clusters: {CLUSTER: {rtt_ms: …}}", file)
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		return nil, errf(doc, "(top)", "want a mapping with clusters:")
	}
	var clusters *yaml.Node
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k := doc.Content[i]
		if k.Value != "clusters" {
			return nil, errf(k, k.Value, "unknown field (an overlay has only clusters:)")
		}
		if clusters != nil {
			return nil, errf(k, k.Value, "given twice")
		}
		clusters = doc.Content[i+1]
	}
	if clusters == nil {
		return nil, errf(doc, "clusters", "missing")
	}
	if clusters.Kind != yaml.MappingNode {
		return nil, errf(clusters, "clusters", "want a mapping of cluster id to values")
	}
	for i := 0; i+1 < len(clusters.Content); i += 2 {
		k, v := clusters.Content[i], clusters.Content[i+1]
		id := k.Value
		p := "clusters." + id
		if k.Kind != yaml.ScalarNode || id == "" {
			return nil, errf(k, "clusters", "a cluster id must be a non-empty string")
		}
		if _, dup := o.Clusters[id]; dup {
			return nil, errf(k, p, "cluster %q given twice", id)
		}
		if v.Kind != yaml.MappingNode {
			return nil, errf(v, p, "want a mapping such as {rtt_ms: 5, max_input_tps: 12000}")
		}
		oc := &OverlayCluster{Line: k.Line}
		seen := map[string]bool{}
		for j := 0; j+1 < len(v.Content); j += 2 {
			fk, fv := v.Content[j], v.Content[j+1]
			fp := p + "." + fk.Value
			if seen[fk.Value] {
				return nil, errf(fk, fp, "given twice")
			}
			seen[fk.Value] = true
			switch fk.Value {
			case "rtt_ms", "max_input_tps":
				f, err := overlayFloat(fv)
				if err != nil {
					return nil, errf(fv, fp, "%v", err)
				}
				if fk.Value == "rtt_ms" {
					oc.RTTMs = &f
				} else {
					oc.MaxInputTPS = &f
				}
			case "max_engine_concurrency":
				if fv.Kind != yaml.ScalarNode || fv.Tag != "!!int" {
					return nil, errf(fv, fp, "want a whole number of requests ≥ 0, got %q", fv.Value)
				}
				u, err := strconv.ParseUint(fv.Value, 0, 64)
				if err != nil {
					return nil, errf(fv, fp, "want a whole number of requests ≥ 0, got %q", fv.Value)
				}
				oc.MaxEngineConcurrency = &u
			case "status":
				st, ok := lb.ParseStatus(fv.Value)
				if fv.Kind != yaml.ScalarNode || !ok {
					return nil, errf(fv, fp, "want active, inactive or unknown, got %q", fv.Value)
				}
				oc.Status = &st
			default:
				return nil, errf(fk, fp, "unknown field: an overlay gives rtt_ms, max_engine_concurrency, max_input_tps and status (the values no Pylon metric carries)")
			}
		}
		o.Clusters[id] = oc
	}
	return o, nil
}

func overlayFloat(n *yaml.Node) (float64, error) {
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
		return 0, fmt.Errorf("want a number ≥ 0, got %q", n.Value)
	}
	f, err := strconv.ParseFloat(n.Value, 64)
	if err != nil {
		if u, uerr := strconv.ParseInt(n.Value, 0, 64); uerr == nil {
			f, err = float64(u), nil
		}
	}
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("want a finite number ≥ 0, got %q", n.Value)
	}
	return f, nil
}

// IDs returns the overlay's cluster ids, sorted.
func (o *Overlay) IDs() []string {
	ids := make([]string, 0, len(o.Clusters))
	for id := range o.Clusters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// apply writes the overlay's values into c.
func (oc *OverlayCluster) apply(c *Cluster, file string) {
	src := fmt.Sprintf("%s:%d", file, oc.Line)
	if oc.RTTMs != nil {
		f := c.Get("rtt_ms")
		*f = Field{Name: f.Name, Kind: f.Kind, Float: *oc.RTTMs, Origin: OriginOverlay, Source: src}
	}
	if oc.MaxInputTPS != nil {
		f := c.Get("max_input_tps")
		*f = Field{Name: f.Name, Kind: f.Kind, Stats: true, Float: *oc.MaxInputTPS, Origin: OriginOverlay, Source: src}
	}
	if oc.MaxEngineConcurrency != nil {
		f := c.Get("max_engine_concurrency")
		*f = Field{Name: f.Name, Kind: f.Kind, Stats: true, Uint: *oc.MaxEngineConcurrency, Origin: OriginOverlay, Source: src}
	}
	if oc.Status != nil {
		f := c.Get("status")
		note := ""
		if f.Origin == OriginDerived && f.Str != oc.Status.String() {
			note = "the registration gauges say " + f.Str
		}
		*f = Field{Name: f.Name, Kind: f.Kind, Str: oc.Status.String(), Origin: OriginOverlay, Source: src, Note: note}
	}
}

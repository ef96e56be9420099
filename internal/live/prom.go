package live

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/lcctl/lcctl/internal/metrics"
)

// Prometheus says how to read Pylon's gauges from a Prometheus server
// (live-snapshot.md §3.1–3.2).
type Prometheus struct {
	// URL is the server's base URL (http(s)://host:9090, with any path
	// prefix); queries go to <URL>/api/v1/query.
	URL string
	// ClusterLabel is the target label holding the cluster id (required;
	// no Pylon series names its cluster).
	ClusterLabel string
	// BackendLabel is the label telling a cluster's backends apart
	// (default "instance").
	BackendLabel string
	// Selector are extra matchers, e.g. `namespace="fn-1"`, added to
	// every query to limit it to the routing target's backends (there is
	// no routing-key label).
	Selector string
	// Client does the HTTP requests (nil: http.DefaultClient); Timeout
	// bounds each query (0: 10 s).
	Client  *http.Client
	Timeout time.Duration
}

// ParseTime parses --at: RFC 3339 (with a zone, fractions allowed) or Unix
// seconds (fractions allowed), as Prometheus's time parameter. Anything
// else (empty, negative, NaN, a date without a time) is an error.
func ParseTime(s string) (time.Time, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && f >= 0 && f < 1e11 {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1e9))).UTC(), nil
	}
	if tm, err := time.Parse(time.RFC3339Nano, t); err == nil {
		return tm, nil
	}
	return time.Time{}, fmt.Errorf("--at %q: want RFC 3339 (2026-12-01T20:15:00Z) or Unix seconds (1796242500)", s)
}

// checkSelector refuses selectors that would break out of the matcher
// list; Prometheus itself reports any other syntax error (as unusable
// input).
func checkSelector(sel string) error {
	if strings.ContainsAny(sel, "{}") {
		return fmt.Errorf("--selector %q: give matchers only, without braces, e.g. namespace=\"fn-1\",job=\"pylon\"", sel)
	}
	return nil
}

// queryPrometheus reads the backends of model at instant at with the
// queries Q1–Q4 of live-snapshot.md §3.2, grouping series by the cluster
// and backend labels.
func queryPrometheus(ctx context.Context, p Prometheus, n Names, modelName string, at time.Time) ([]*Backend, error) {
	src := "--prometheus " + metrics.RedactSource(p.URL)
	if p.ClusterLabel == "" {
		return nil, usageErr(src, "", "", "--cluster-label is required: name the target label that holds the cluster id (no Pylon series carries it)")
	}
	if p.BackendLabel == "" {
		p.BackendLabel = "instance"
	}
	if err := checkSelector(p.Selector); err != nil {
		return nil, usageErr(src, "", "", "%v", err)
	}
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageErr(src, "", "", "not an http(s) URL")
	}
	c, err := api.NewClient(api.Config{Address: p.URL, Client: p.Client})
	if err != nil {
		return nil, usageErr(src, "", "", "%v", err)
	}
	a := promv1.NewAPI(c)
	timeout := p.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	sel := ""
	if s := strings.TrimSpace(p.Selector); s != "" {
		sel = ", " + s
	}
	mq := fmt.Sprintf("model=%s", strconv.Quote(modelName))
	gauges := []string{"last_mean_input_tps", "output_tps", "max_output_tps", "queue_size", "queued_input_tokens",
		"kv_cache_capacity_tokens", "kv_cache_used_tokens", "kv_cache_free_tokens", "advertised_status"}
	queries := []string{
		fmt.Sprintf(`{__name__=~"%s(%s)", %s%s}`, regexpQuote(n.Prefix+"model_"), strings.Join(gauges, "|"), mq, sel),
		fmt.Sprintf(`{__name__=~"%s(inflight|state|state_input_tokens)", %s%s}`, regexpQuote(n.Prefix+"requests_"), mq, sel),
		fmt.Sprintf(`{__name__=~"%s(registration_stream|reverse_tunnel)_connected"%s}`, regexpQuote(n.Prefix), sel),
	}
	type key struct{ cluster, backend string }
	backends := map[key]*Backend{}
	clusterOf := map[string]string{}
	for qi, q := range queries {
		vec, err := instant(ctx, a, src, q, at, timeout)
		if err != nil {
			return nil, err
		}
		for _, s := range vec {
			name := string(s.Metric[model.MetricNameLabel])
			cl, ok := s.Metric[model.LabelName(p.ClusterLabel)]
			if !ok || cl == "" {
				if qi == 2 {
					// A registration gauge of some other exporter under
					// the same selector: no model label, cannot be told
					// apart; a Pylon series without the label is
					// reported by Q1/Q2.
					continue
				}
				return nil, usageErr(src, "", p.ClusterLabel, "series %s has no %q label, so its cluster is unknown (relabel the Pylon targets, or narrow --selector)", s.Metric, p.ClusterLabel)
			}
			be, ok := s.Metric[model.LabelName(p.BackendLabel)]
			if !ok {
				return nil, usageErr(src, string(cl), p.BackendLabel, "series %s has no %q label, so its backend is unknown (set --backend-label)", s.Metric, p.BackendLabel)
			}
			if prev, ok := clusterOf[string(be)]; ok && prev != string(cl) {
				return nil, usageErr(src, string(cl), p.ClusterLabel, "backend %s=%q is in two clusters, %q and %q: one Pylon serves one cluster (check the relabelling)", p.BackendLabel, be, prev, cl)
			}
			clusterOf[string(be)] = string(cl)
			k := key{string(cl), string(be)}
			b := backends[k]
			if b == nil {
				if qi == 2 {
					continue // registration gauges of a backend without the model
				}
				b = &Backend{Cluster: k.cluster, ID: k.backend, Source: src}
				backends[k] = b
			}
			labels := map[string]string{}
			for ln, lv := range s.Metric {
				switch string(ln) {
				case model.MetricNameLabel, p.ClusterLabel, p.BackendLabel, "job", "instance", "namespace", "pod", "container":
					continue
				}
				labels[string(ln)] = string(lv)
			}
			b.Samples = append(b.Samples, Sample{Metric: name, Labels: labels, Value: float64(s.Value)})
		}
	}
	if len(backends) == 0 {
		return nil, usageErr(src, "", "", "no Pylon series for model %q at %s (query %s): check --model, --selector and --metric-prefix, and that Prometheus scrapes the Pylons", modelName, at.UTC().Format(time.RFC3339), queries[0])
	}
	// Q4: each backend's sample time (one scrape shares it).
	missing := len(backends)
	for _, g := range []string{"queue_size", "last_mean_input_tps", "advertised_status"} {
		if missing == 0 {
			break
		}
		q := fmt.Sprintf(`timestamp(%smodel_%s{%s%s})`, n.Prefix, g, mq, sel)
		vec, err := instant(ctx, a, src, q, at, timeout)
		if err != nil {
			return nil, err
		}
		for _, s := range vec {
			b := backends[key{string(s.Metric[model.LabelName(p.ClusterLabel)]), string(s.Metric[model.LabelName(p.BackendLabel)])}]
			if b == nil || !b.Time.IsZero() {
				continue
			}
			ts := float64(s.Value)
			if math.IsNaN(ts) || math.IsInf(ts, 0) || ts < 0 || ts > 1e11 {
				return nil, usageErr(src, b.Cluster, "sample time", "backend %s: timestamp(%smodel_%s) is %v, not a usable Unix time", b.ID, n.Prefix, g, ts)
			}
			sec, frac := math.Modf(ts)
			b.Time = time.Unix(int64(sec), int64(math.Round(frac*1e3))*1e6).UTC()
			missing--
		}
	}
	out := make([]*Backend, 0, len(backends))
	for _, b := range backends {
		if b.Time.IsZero() {
			return nil, usageErr(src, b.Cluster, "", "backend %s: no sample time (none of queue_size, last_mean_input_tps, advertised_status has a sample)", b.ID)
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Cluster != out[j].Cluster {
			return out[i].Cluster < out[j].Cluster
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// instant runs one instant query and returns its vector. Transport
// failures and HTTP errors are failures (exit 1); a query Prometheus
// refuses as bad data (a malformed --selector) is unusable input.
func instant(ctx context.Context, a promv1.API, src, q string, at time.Time, timeout time.Duration) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, _, _, err := a.Query(ctx, q, at)
	if err != nil {
		var pe *promv1.Error
		if errors.As(err, &pe) {
			if pe.Type == promv1.ErrBadData {
				return nil, usageErr(src, "", "", "Prometheus refused the query %s: %s (check --selector, --cluster-label, --metric-prefix)", q, pe.Msg)
			}
			msg := pe.Msg
			if d := strings.TrimSpace(pe.Detail); d != "" && len(d) < 200 {
				msg += ": " + d
			}
			return nil, &Error{Source: src, Msg: fmt.Sprintf("query %s: %s", q, msg)}
		}
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, &Error{Source: src, Msg: fmt.Sprintf("no answer within %s", timeout)}
		}
		return nil, &Error{Source: src, Msg: metrics.RedactError(err).Error()}
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, &Error{Source: src, Msg: fmt.Sprintf("query %s: want an instant vector, got %s", q, v.Type())}
	}
	return vec, nil
}

// regexpQuote escapes RE2 metacharacters for a PromQL =~ string literal.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteString(`\\`)
		}
		b.WriteRune(r)
	}
	return b.String()
}

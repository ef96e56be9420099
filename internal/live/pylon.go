package live

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/lcctl/lcctl/internal/metrics"
)

// PylonTarget is one --pylon CLUSTER=URL: a Pylon's /metrics endpoint
// and the cluster it serves (its --cluster-id, else its
// --inference-server-id; live-snapshot.md §1.1). A cluster with several
// backends is given once per backend.
type PylonTarget struct {
	Cluster, URL string
}

// ParsePylonFlag parses "CLUSTER=URL". The cluster id must be non-empty
// and printable; the URL http(s) with a host. A URL without a path gets
// /metrics (Pylon's route, live-snapshot.md §3.1). A value breaking these
// rules is an error that names the flag's expected form.
func ParsePylonFlag(s string) (PylonTarget, error) {
	cluster, raw, ok := strings.Cut(s, "=")
	// shown is the flag as errors print it: credentials in the URL are
	// redacted (metrics.RedactSource).
	shown := s
	if ok {
		shown = cluster + "=" + metrics.RedactSource(raw)
	}
	cluster = strings.TrimSpace(cluster)
	if !ok || cluster == "" || raw == "" {
		return PylonTarget{}, fmt.Errorf("--pylon %q: want CLUSTER=URL, e.g. cluster-a=http://10.0.0.7:9089/metrics", shown)
	}
	if strings.IndexFunc(cluster, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return PylonTarget{}, fmt.Errorf("--pylon %q: the cluster id contains a control character", shown)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if strings.Contains(raw, "@") && !metrics.IsURL(raw) {
			// Not http(s), so RedactSource leaves it as is: name only
			// the cluster, the URL may carry credentials.
			return PylonTarget{}, fmt.Errorf("--pylon %s=…: the URL is not an http(s) URL with a host (not shown: it may contain credentials)", cluster)
		}
		return PylonTarget{}, fmt.Errorf("--pylon %q: %q is not an http(s) URL", shown, metrics.RedactSource(raw))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	return PylonTarget{Cluster: cluster, URL: u.String()}, nil
}

// scrapePylon fetches one Pylon page and returns it as a backend stamped
// with the fetch time (the text format carries no sample timestamps,
// live-snapshot.md §3.3). A page that cannot be fetched is a failure
// (Error.Usage false); a page that is not Prometheus text, or has no
// series of the model, is unusable input.
func scrapePylon(ctx context.Context, f *metrics.Fetcher, t PylonTarget, n Names, model string) (*Backend, error) {
	src := t.source()
	sc, err := f.Fetch(ctx, t.URL, n.Families()...)
	if err != nil {
		var fe *metrics.FetchError
		if errors.As(err, &fe) {
			return nil, &Error{Source: src, Cluster: t.Cluster, Msg: fe.Err.Error()}
		}
		var pe *metrics.ParseError
		if errors.As(err, &pe) {
			where := ""
			if pe.Line > 0 {
				where = fmt.Sprintf("line %d: ", pe.Line)
			}
			return nil, usageErr(src, t.Cluster, "", "not Prometheus text exposition: %s%s", where, pe.Msg)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &Error{Source: src, Cluster: t.Cluster, Msg: err.Error()}
	}
	return pageBackend(t, sc, n, model)
}

// source is the target as errors and provenance name it, with any
// password in the URL redacted.
func (t PylonTarget) source() string { return "--pylon " + metrics.RedactSource(t.URL) }

// ParsePylonPage parses one Pylon /metrics page (Prometheus text or
// OpenMetrics, as a scrape returns it) for target t and checks it the way
// a scrape is checked: it returns the backend, without a sample time, or
// an *Error (unusable input) naming the target, cluster and field.
func ParsePylonPage(t PylonTarget, data []byte, contentType, model, prefix string) (*Backend, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	n := Names{Prefix: prefix}
	sc, err := metrics.Parse(metrics.RedactSource(t.URL), data, contentType, n.Families()...)
	if err != nil {
		return nil, usageErr(t.source(), t.Cluster, "", "not Prometheus text exposition: %v", err)
	}
	b, err := pageBackend(t, sc, n, model)
	if err != nil {
		return nil, err
	}
	if _, err := readBackend(t.source(), b, n, model, ""); err != nil {
		return nil, err
	}
	return b, nil
}

func pageBackend(t PylonTarget, sc *metrics.Scrape, n Names, model string) (*Backend, error) {
	b := &Backend{Cluster: t.Cluster, ID: metrics.RedactSource(t.URL), Source: t.source(), Time: sc.Time}
	for _, name := range n.Families() {
		mf, ok := sc.Families[name]
		if !ok {
			continue
		}
		for _, m := range mf.GetMetric() {
			v, ok := gaugeValue(mf.GetType(), m)
			if !ok {
				return nil, usageErr(t.source(), t.Cluster, name, "is a %s; Pylon exports it as a gauge", strings.ToLower(mf.GetType().String()))
			}
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				labels[lp.GetName()] = lp.GetValue()
			}
			b.Samples = append(b.Samples, Sample{Metric: name, Labels: labels, Value: v})
		}
	}
	if err := checkModelSeries(t.source(), t.Cluster, b, n, model); err != nil {
		return nil, err
	}
	return b, nil
}

func gaugeValue(t dto.MetricType, m *dto.Metric) (float64, bool) {
	switch t {
	case dto.MetricType_GAUGE:
		return m.GetGauge().GetValue(), true
	case dto.MetricType_UNTYPED:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// checkModelSeries refuses a backend without any series of the model,
// naming the models it has.
func checkModelSeries(source, cluster string, b *Backend, n Names, model string) error {
	models := map[string]bool{}
	pylon := false
	for _, s := range b.Samples {
		if strings.HasPrefix(s.Metric, n.Prefix+"model_") || strings.HasPrefix(s.Metric, n.Prefix+"requests_") {
			pylon = true
			if s.Labels["model"] == model {
				return nil
			}
			models[s.Labels["model"]] = true
		}
	}
	if !pylon {
		return usageErr(source, cluster, "", "no %smodel_* or %srequests_* series: is this a Pylon /metrics page (port 9089)? For an older sidecar set --metric-prefix", n.Prefix, n.Prefix)
	}
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, fmt.Sprintf("%q", m))
	}
	sort.Strings(names)
	return usageErr(source, cluster, "model", "no series for model %q (the backend reports %s)", model, strings.Join(names, ", "))
}

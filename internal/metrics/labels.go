package metrics

import (
	"slices"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"

	"github.com/lcctl/lcctl/internal/ui"
)

// The documented values of the enumerated labels the checks read. A
// series with any other value (a differently cased "Returning", a label
// left out, a value of a newer build) is in no count: it is recorded in
// InvalidLabels and the *-metrics.labels check fails, since counting it
// under a total but under no state or result would skew every share
// without a word.
var (
	// LookupResults are the result values of GatewayLookups and
	// GatewayLookupDuration (gateway.md §10.1; skipped lookups are not
	// timed, but a skipped latency series is not malformed).
	LookupResults = []string{ResultHit, ResultMiss, ResultError, ResultTimeout, ResultSkipped}
	// WriteResults are the result values of GatewayWrites (gateway.md §10.1).
	WriteResults = []string{ResultOK, ResultError}
	// SessionStates are the session_state values of the session
	// selections counter (session.md §6.1, gateway.md §10.2).
	SessionStates = []string{StateNew, StateReturning, StateStale}
	// Selections are its selection values.
	Selections = []string{SelectionPrimary, SelectionFallback}
)

// MaxInvalidLabelExamples is how many series InvalidLabels.Examples keeps;
// Samples counts them all.
const MaxInvalidLabelExamples = 10

// InvalidLabel is one series left out because a label had a value outside
// its documented set.
type InvalidLabel struct {
	// Series is the series as written in a scrape: name{label="value",…},
	// its labels in scrape order, values quoted as Go strings.
	Series string `json:"series"`
	// Label is the label name (result, session_state or selection).
	Label string `json:"label"`
	// Value is its value; "" when the label is absent.
	Value string `json:"value"`
}

// InvalidLabels counts the samples left out for an undocumented label
// value and keeps the first MaxInvalidLabelExamples of them.
type InvalidLabels struct {
	// Samples is the number of samples left out (with --interval, in both
	// scrapes).
	Samples int `json:"samples"`
	// Examples are up to MaxInvalidLabelExamples of them, in scrape order
	// (the second scrape's first); [] when there are none.
	Examples []InvalidLabel `json:"examples"`
}

func (l *InvalidLabels) add(name string, m *dto.Metric, label, value string) {
	l.Samples++
	if len(l.Examples) < MaxInvalidLabelExamples {
		l.Examples = append(l.Examples, InvalidLabel{Series: seriesString(name, m), Label: label, Value: value})
	}
}

// merge returns l's count plus before's, with l's examples first and
// then before's series l does not already name.
func (l InvalidLabels) merge(before InvalidLabels) InvalidLabels {
	out := InvalidLabels{Samples: l.Samples + before.Samples, Examples: slices.Clone(l.Examples)}
	for _, e := range before.Examples {
		if len(out.Examples) >= MaxInvalidLabelExamples {
			break
		}
		if !slices.Contains(out.Examples, e) {
			out.Examples = append(out.Examples, e)
		}
	}
	return out
}

// orEmpty returns l with a non-nil Examples, for JSON.
func (l InvalidLabels) orEmpty() InvalidLabels {
	if l.Examples == nil {
		l.Examples = []InvalidLabel{}
	}
	return l
}

func seriesString(name string, m *dto.Metric) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, lp := range m.GetLabel() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(lp.GetName())
		b.WriteByte('=')
		b.WriteString(strconv.Quote(lp.GetValue()))
	}
	b.WriteByte('}')
	return b.String()
}

// echoSeries is series, a seriesString, as messages quote it: each label
// value shortened by ui.EchoLabel (a 3 MB result value is echoed as 200
// bytes and its size). Text that is not a seriesString is shortened
// whole.
func echoSeries(series string) string {
	open := strings.IndexByte(series, '{')
	if len(series) <= ui.MaxEchoedLabel || open < 0 {
		return ui.EchoLabel(series)
	}
	var b strings.Builder
	b.WriteString(series[:open+1])
	rest := series[open+1:]
	for {
		eq := strings.IndexByte(rest, '=')
		if eq < 0 {
			break
		}
		q, err := strconv.QuotedPrefix(rest[eq+1:])
		if err != nil {
			break
		}
		v, err := strconv.Unquote(q)
		if err != nil {
			break
		}
		b.WriteString(rest[:eq+1])
		b.WriteString(strconv.Quote(ui.EchoLabel(v)))
		rest = rest[eq+1+len(q):]
		if !strings.HasPrefix(rest, ",") {
			break
		}
		b.WriteByte(',')
		rest = rest[1:]
	}
	b.WriteString(ui.EchoLabel(rest))
	return b.String()
}

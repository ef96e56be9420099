package cli

import (
	"io"

	"github.com/lcctl/lcctl/internal/checks"
	"github.com/lcctl/lcctl/internal/metrics"
)

// writeMetricsJSON writes r exactly as writeJSON(w, "metrics", r) would,
// without ever holding the whole encoded document: on 200,000 models it
// is 305 MB indented (200,000 rows and models, 400,000 verdicts), and
// encoding it at once grew encoding/json's buffer to 512 MB (1 GB of
// RSS, 1.3–2.5 s of system time). The report is encoded without its
// Stargate rows, models and model list and without its verdict groups,
// and those are streamed in their places one element at a time
// (jsonPieces; docs/performance.md, "Many models").
func writeMetricsJSON(w io.Writer, r *MetricsReport) error {
	top := *r
	sg, groups := r.Stargate, r.Verdicts.Groups
	top.Stargate = nil
	top.Verdicts.Groups = nil
	return streamJSON(w, "metrics", func(put func([]byte) error) error {
		p := newJSONPieces(put)
		return p.object(&top,
			streamedMember{"stargate", func() error { return putStargateReport(p, sg) }},
			streamedMember{"verdicts", func() error { return putVerdicts(p, top.Verdicts, groups) }})
	})
}

// putStargateReport hands over sg (null when nil) with its long lists
// streamed.
func putStargateReport(p *jsonPieces, sg *metrics.StargateReport) error {
	if sg == nil {
		return p.raw("null")
	}
	head := *sg
	head.Rows, head.Models, head.ModelsInScrape = nil, nil, nil
	return p.object(&head,
		streamedMember{"rows", func() error { return putSlice(p, sg.Rows) }},
		streamedMember{"models", func() error { return putSlice(p, sg.Models) }},
		streamedMember{"models_in_scrape", func() error { return putSlice(p, sg.ModelsInScrape) }})
}

// putVerdicts hands over the checklist v whose groups are groups, each
// group's results streamed.
func putVerdicts(p *jsonPieces, v checks.JSONReport, groups []*checks.Group) error {
	return p.object(&v, streamedMember{"groups", func() error {
		if groups == nil {
			return p.raw("null")
		}
		return p.array(len(groups), func(i int) error {
			g := groups[i]
			if g == nil {
				return p.raw("null")
			}
			head := *g
			head.Checks = nil
			return p.object(&head, streamedMember{"checks", func() error { return putSlice(p, g.Checks) }})
		})
	}})
}

// putSlice hands over s as encoding/json encodes it (null when nil), one
// element at a time.
func putSlice[E any](p *jsonPieces, s []E) error {
	if s == nil {
		return p.raw("null")
	}
	return p.array(len(s), func(i int) error { return p.value(&s[i]) })
}

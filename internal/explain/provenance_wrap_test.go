package explain

import (
	"strings"
	"testing"
)

// TestProvenanceAgeIsNotSplit: the "oldest cluster N ms old" phrase stays
// on one line at the default width, however long the source line is.
func TestProvenanceAgeIsNotSplit(t *testing.T) {
	age := 1.33
	for _, src := range []string{"pylon scrape (3 endpoints)", "prometheus http://prometheus.monitoring.svc.cluster.local:9090", "pylon scrape (12 endpoints)"} {
		p := &printer{st: plain(), o: Options{Width: DefaultWidth}}
		p.provenance(&Provenance{Snapshot: SnapshotSource{Source: src, At: "2026-12-01T21:33:06.123Z", AgeMs: &age}})
		if !strings.Contains(p.b.String(), "oldest cluster 1.33 ms old") {
			t.Errorf("source %q: the age phrase is split:\n%s", src, p.b.String())
		}
	}
}

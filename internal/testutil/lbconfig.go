package testutil

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/lcctl/lcctl/internal/lb"
)

// GenerateLBConfig returns a valid Stargate lb-config (JSON, indented like
// a hand-written file) with the given number of models. The entries cycle
// through every algorithm in string and detailed form, with the fields an
// operator typically sets (queue SLO, affinity group, seeds, model-level
// request_algorithms), so validation exercises every code path that
// accepts. Field names come from the lb field registry (lb.Fields), so a
// renamed field needs no edit here. Used by benchmarks and size tests;
// deterministic (the bytes are those BenchmarkValidate's figures in
// docs/performance.md were measured on).
func GenerateLBConfig(models int) []byte {
	var b strings.Builder
	b.WriteString("{\n  \"default\": \"power-of-n\",\n  \"request_algorithms\": {\n")
	b.WriteString("    \"round-robin\": \"round-robin\",\n")
	b.WriteString("    \"pulsar\": " + entry("pulsar", lb.FieldSeed, `"fleet"`, lb.FieldRendezvousWeight, `"last-mean-input-tps"`) + "\n")
	b.WriteString("  },\n  \"models\": {")
	for i := 0; i < models; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "\n    \"org-%03d/model-%05d\": ", i%97, i)
		switch i % 8 {
		case 0:
			b.WriteString(`"pulsar"`)
		case 1:
			b.WriteString(entry("power-of-n", lb.FieldSampleCount, strconv.Itoa(2+i%30), lb.FieldComparator, `"queue-time"`))
		case 2:
			b.WriteString(entry("wait-and-widen", lb.FieldSeed, fmt.Sprintf(`"s-%d"`, i), lb.FieldN, "3", lb.FieldMaxQueued, "4",
				lb.FieldMaxQueueTimeFloorMs, "200", lb.FieldMaxQueueTimeCeilMs, "2000", lb.FieldCacheAffinityBackendSelectionCount, "2",
				lb.FieldCacheAffinityWaitMs, "300", lb.FieldCacheAffinityInputTokensScale, "0.25", lb.FieldLastClusterAffinity, "true",
				lb.FieldRequireCacheAffinityKey, "true"))
		case 3:
			b.WriteString(entry("pulsar-wait-and-widen", lb.FieldSeed, fmt.Sprintf(`"s-%d"`, i), lb.FieldMaxQueueTimeFloorMs, "100",
				lb.FieldMaxQueueTimeCeilMs, "1000", lb.FieldCacheAffinityWaitMs, "250", lb.FieldBandWidenIntervalMs, "50",
				lb.FieldFallbackMaxQueued, "1", lb.FieldConsiderKVFreeTokens, "true", lb.FieldRendezvousWeight, `"max-input-tps"`))
		case 4:
			b.WriteString(entry("random", lb.FieldMaxInputWorkSeconds, "12.5"))
		case 5:
			b.WriteString(`"round-robin"`)
		case 6:
			b.WriteString(entry("pulsar", lb.FieldSeed, fmt.Sprintf(`"p-%d"`, i), lb.FieldConsiderKVFreeTokens, "true",
				lb.FieldRendezvousWeight, `"last-mean-input-tps"`,
				lb.FieldRequestAlgorithms, `{"power-of-n": `+entry("power-of-n", lb.FieldSampleCount, "4")+`}`))
		default:
			b.WriteString(entry("wait-and-widen", lb.FieldComparator, `"ttft"`, lb.FieldTTFTBucketSizeMs, "25",
				lb.FieldNextBucketUnlockFactor, "0.5", lb.FieldIgnoreQueueTime, "false"))
		}
	}
	b.WriteString("\n  }\n}\n")
	return []byte(b.String())
}

// entry renders a detailed entry {"algorithm": alg, NAME: VALUE, ...} on
// one line; fields alternates registry rows and JSON value texts.
func entry(alg string, fields ...any) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"algorithm": %q`, alg)
	for i := 0; i+1 < len(fields); i += 2 {
		fmt.Fprintf(&b, `, %q: %s`, fields[i].(*lb.Field).Name, fields[i+1])
	}
	b.WriteString("}")
	return b.String()
}

package lb

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func roundTrip[T any](t *testing.T, v T) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal %v: %v", v, err)
	}
	var back T
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	if !reflect.DeepEqual(v, back) {
		t.Fatalf("round trip of %s: got %v, want %v", b, back, v)
	}
}

func TestEnumsRoundTrip(t *testing.T) {
	for k := KindUnavailable; k <= KindWait; k++ {
		roundTrip(t, k)
	}
	for r := ReasonNone; r <= ReasonNextBand; r++ {
		roundTrip(t, r)
	}
	for p := PhaseNone; p <= PhaseSample; p++ {
		roundTrip(t, p)
	}
	for f := Eligible; f <= InsufficientKVFreeTokens; f++ {
		roundTrip(t, f)
	}
	for s := StatusActive; s <= StatusUnknown; s++ {
		roundTrip(t, s)
	}
	for o := OutcomeDispatch; o <= OutcomeError; o++ {
		roundTrip(t, o)
	}
	for _, a := range Algorithms {
		roundTrip(t, a)
	}
	for c := CompareTTFT; c <= CompareNumRequestsQueued; c++ {
		roundTrip(t, c)
	}
	roundTrip(t, WeightMaxInputTPS)
	roundTrip(t, WeightLastMeanInputTPS)
	var k Kind
	if err := json.Unmarshal([]byte(`"selectd"`), &k); err == nil {
		t.Fatal("a misspelt kind must not decode")
	}
	var o Outcome
	if err := json.Unmarshal([]byte(`""`), &o); err == nil {
		t.Fatal("an empty outcome must not decode")
	}
}

func TestMillisJSON(t *testing.T) {
	for _, f := range []float64{0, 1.5, 123.75, math.Inf(1), math.Inf(-1), 1e300} {
		roundTrip(t, Millis(f))
	}
	var m Millis
	if err := json.Unmarshal([]byte(`"nan"`), &m); err != nil || !math.IsNaN(float64(m)) {
		t.Fatalf("nan: %v %v", m, err)
	}
	if err := json.Unmarshal([]byte(`"1"`), &m); err == nil {
		t.Fatal("a quoted number is not a Millis value")
	}
}

func TestTraceRoundTrip(t *testing.T) {
	snap := snapOf(cl("A", full), cl("B", free), cl("C", rttMs(500), free))
	cfg := DefaultAlgorithmConfig(PulsarWaitAndWiden)
	cfg.Seed = "model-a-v1"
	for i := range snap.Clusters {
		snap.Clusters[i].Stats.MaxInputTPS = 100
	}
	e := NewEngine(&cfg)
	d := e.Decide(snap, rq(), nil, Options{Trace: true})
	// Snapshot indices are not part of the JSON form (the ids are).
	for i := range d.Trace.Phases {
		for j := range d.Trace.Phases[i].Candidates {
			d.Trace.Phases[i].Candidates[j].Cluster = 0
		}
	}
	roundTrip(t, *d.Trace)
}

// TestPhaseTraceMaxQueuedKeepsItsPlace: MaxQueued, written under
// FieldMaxQueued's name by MarshalJSON, sits between clock_ms and the
// queue limit as its struct tag put it, with and without the omitted
// queue_limit_ms.
func TestPhaseTraceMaxQueuedKeepsItsPlace(t *testing.T) {
	for _, c := range []struct {
		pt   PhaseTrace
		want string
	}{
		{PhaseTrace{Phase: PhaseAffinity, Scale: 0.5, ClockMs: 300, MaxQueued: 4},
			`{"phase":"affinity","scale":0.5,"clock_ms":300,"max_queued":4,"has_queue_limit":false,"bucket_ms":0,`},
		{PhaseTrace{Phase: PhaseAffinity, Scale: 1, MaxQueued: 2, QueueLimitMs: 5, HasQueueLimit: true},
			`{"phase":"affinity","scale":1,"clock_ms":0,"max_queued":2,"queue_limit_ms":5,"has_queue_limit":true,`},
	} {
		b, err := json.Marshal(Trace{Phases: []PhaseTrace{c.pt}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"phases":[`+c.want) {
			t.Errorf("got %s\nwant the phase to start with %s", b, c.want)
		}
	}
}

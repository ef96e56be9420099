package checks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lcctl/lcctl/internal/ui"
)

func sample() *Report {
	r := &Report{}
	g := r.Group("gateway settings")
	g.Add(OK("gateway.settings-valid", "values are valid", "ttl 10m"),
		Fail("gateway.flag", "flag fits the stage", "STARGATE_LAST_CLUSTER_ENABLED=false", "set it to true").WithDetails("values.yaml:5:16"),
		Warn("gateway.olric-coherent", "olric is coherent", "1 warning", "enable Olric"),
		Skip("olric.reachable", "Olric is reachable", "no --olric addresses given"))
	r.Group("empty group")
	r.Group("stargate metrics").Add(OK("stargate-metrics.returning", "returning sessions", "58%").WithSubject("m"))
	return r
}

func TestRenderTextPlain(t *testing.T) {
	var buf bytes.Buffer
	if err := RenderText(&buf, ui.NewStyles(&buf, false), sample()); err != nil {
		t.Fatal(err)
	}
	want := `gateway settings
----------------
✔ values are valid
    ttl 10m
✖ flag fits the stage
    STARGATE_LAST_CLUSTER_ENABLED=false
    values.yaml:5:16
    hint: set it to true
‼ olric is coherent
    1 warning
    hint: enable Olric
○ Olric is reachable
    skipped: no --olric addresses given

stargate metrics
----------------
✔ returning sessions [m]
    58%

Status check results are ✖ (2 ok, 1 failed, 1 warning, 1 skipped)
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestRenderTextColour(t *testing.T) {
	var buf bytes.Buffer
	if err := RenderText(&buf, ui.NewStyles(&buf, true), sample()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\x1b[") {
		t.Error("colour output has no ANSI escape")
	}
	var plain bytes.Buffer
	_ = RenderText(&plain, nil, sample())
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("nil styles produced ANSI escapes")
	}
}

func TestJSONAndExit(t *testing.T) {
	r := sample()
	b, err := json.Marshal(ToJSON(r, "preflight", 2, false))
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Schema  string  `json:"schema"`
		Stage   int     `json:"stage"`
		Success bool    `json:"success"`
		Summary Summary `json:"summary"`
		Groups  []struct {
			Name   string   `json:"name"`
			Checks []Result `json:"checks"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Schema != JSONSchema || got.Stage != 2 || got.Success || got.Summary != (Summary{OK: 2, Warn: 1, Fail: 1, Skip: 1}) {
		t.Errorf("header %+v", got)
	}
	if len(got.Groups) != 3 || got.Groups[1].Checks == nil || len(got.Groups[1].Checks) != 0 {
		t.Errorf("groups %+v (empty groups stay, with an empty list)", got.Groups)
	}
	if c := got.Groups[0].Checks[1]; c.ID != "gateway.flag" || c.Status != StatusFail || c.Hint != "set it to true" || c.Details[0] != "values.yaml:5:16" {
		t.Errorf("check %+v", c)
	}
	if !r.Failed(false) {
		t.Error("a failed check must fail the report")
	}
	ok := &Report{}
	ok.Group("g").Add(OK("a", "a", ""), Warn("b", "b", "r", "h"), Skip("c", "c", "r"))
	if ok.Failed(false) || !ok.Failed(true) {
		t.Error("warnings fail only under strict")
	}
}

func TestValidate(t *testing.T) {
	if err := sample().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := &Report{}
	bad.Group("g").Add(Result{ID: "x", Title: "x", Status: StatusSkip}, Result{ID: "y", Title: "y", Status: StatusFail}, Result{ID: "z", Title: "z", Status: "maybe"}, Result{Title: "t", Status: StatusOK})
	err := bad.Validate()
	for _, want := range []string{"skip without a reason", "fail without a hint", `invalid status "maybe"`, "empty id"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate: %v, want %q", err, want)
		}
	}
}

// TestRenderTextFoldsManySubjects: more than MaxTextResults results of
// one check and status with a subject are printed check by check,
// failures and warnings first (the first MaxTextResults in full), the
// rest and every pass folded into one line; the summary counts every
// result and JSON keeps each.
func TestRenderTextFoldsManySubjects(t *testing.T) {
	r := &Report{}
	g := r.Group("stargate metrics")
	g.Add(OK("scrape", "can be scraped", "1 family"))
	const n = MaxTextResults + 5
	for i := range n {
		m := fmt.Sprintf("m%02d", i)
		g.Add(OK("sticky", "go back", "primary 100%").WithSubject(m))
		if i%2 == 0 {
			g.Add(Warn("returning", "reach Stargate", fmt.Sprintf("only %d requests", i), "more traffic").WithSubject(m))
		} else {
			g.Add(OK("returning", "reach Stargate", fmt.Sprintf("%d requests", i)).WithSubject(m))
		}
	}
	var buf bytes.Buffer
	if err := RenderText(&buf, nil, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"✔ can be scraped\n    1 family\n✔ go back [25 models: m00, m01, m02, …]\n    primary 100% (all 25)\n    25 passed results of this check folded into one line; -o json lists every result with its reason\n‼ reach Stargate [m00]\n    only 0 requests\n    hint: more traffic\n",
		// 12 passes of this check: not more than MaxTextResults, so each.
		"‼ reach Stargate [m24]\n    only 24 requests\n    hint: more traffic\n✔ reach Stargate [m01]\n    1 requests\n",
		"✔ reach Stargate [m23]\n    23 requests\n\nStatus check results are ‼ (38 ok, 0 failed, 13 warnings, 0 skipped)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing\n%s\nin\n%s", want, out)
		}
	}
	if c := strings.Count(out, "\n"); c != 72 {
		t.Errorf("%d lines, want 72:\n%s", c, out)
	}
	// 13 warnings, so none folded; 3 more would fold the last ones.
	for i := range MaxTextResults - 13 + 3 {
		g.Add(Warn("returning", "reach Stargate", "none", "more traffic").WithSubject(fmt.Sprintf("w%02d", i)))
	}
	buf.Reset()
	if err := RenderText(&buf, nil, r); err != nil {
		t.Fatal(err)
	}
	if want := "‼ reach Stargate [3 more models: w07, w08, w09]\n    none (all 3)\n    3 warned results of this check folded into one line (20 shown above); -o json lists every result with its reason\n    hint: more traffic\n"; !strings.Contains(buf.String(), want) {
		t.Errorf("missing\n%s\nin\n%s", want, buf.String())
	}
	if got := len(ToJSON(r, "check metrics", 0, false).Groups[0].Checks); got != 1+2*n+10 {
		t.Errorf("JSON has %d results, want every one (%d)", got, 1+2*n+10)
	}
}

package ui

import (
	"encoding/json"
	"testing"
)

func TestJSONSafe(t *testing.T) {
	in := map[string]string{"k\u202e": "gnp.exe\u202e \u0085 é 模型 \u2066x\u2069", "plain": "ok"}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	out := JSONSafe(b)
	for _, r := range string(out) {
		if isControl(r) {
			t.Fatalf("raw %U in %s", r, out)
		}
	}
	var back map[string]string
	if err := json.Unmarshal(out, &back); err != nil || back["k\u202e"] != in["k\u202e"] || back["plain"] != "ok" {
		t.Fatalf("%s decodes to %v (%v)", out, back, err)
	}
	plain := []byte(`{"a":"é"}`)
	if got := JSONSafe(plain); &got[0] != &plain[0] {
		t.Error("text without such characters was copied")
	}
}

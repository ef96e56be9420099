package migrate

import "testing"

// An input that is not an lb-config is not "nothing to migrate": 42, null,
// "string" and a duplicate top-level field exited 0 while validate exits 1
// on them.
func TestNotAnLBConfig(t *testing.T) {
	for _, in := range []string{`42`, `null`, `"string"`, `{"default":"pulsar","default":"random"}`, "default: pulsar\ndefault: random\n"} {
		name := "in.json"
		if in[0] != '{' && in[0] != '"' && in[0] != '4' && in[0] != 'n' {
			name = "in.yaml"
		}
		res, err := Migrate(name, []byte(in), Options{Strategy: Bounded})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != StatusNotLBConfig || len(res.Errors) == 0 || res.Changed() {
			t.Errorf("%q: status %s, %d errors; want %s with the errors", in, res.Status, len(res.Errors), StatusNotLBConfig)
		}
	}
	// An lb-config with other errors still migrates or says nothing to do.
	for _, in := range []string{`{}`, `[]`, `{"default":"power-of-m"}`} {
		res, err := Migrate("in.json", []byte(in), Options{Strategy: Bounded})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != StatusUnchanged {
			t.Errorf("%q: status %s, want %s", in, res.Status, StatusUnchanged)
		}
	}
}

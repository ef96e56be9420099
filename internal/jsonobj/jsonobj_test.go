package jsonobj

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
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

package yamldoc

import (
	"errors"
	"strings"
	"testing"
)

// "control characters are not allowed" came without a line; it names the
// character's line, column and code point.
func TestControlCharacterPosition(t *testing.T) {
	for in, want := range map[string][2]int{
		"a: b\nc: \"x\x01y\"\n": {2, 6},
		"\x1b[31m: 1\n":         {1, 1},
		"a: é\nb: \x7f\n":       {2, 4},
	} {
		_, err := Parse([]byte(in))
		var e *Error
		if !errors.As(err, &e) || e.Line != want[0] || e.Col != want[1] {
			t.Errorf("%q: %#v, want line %d column %d", in, err, want[0], want[1])
		}
	}
}

// Valid JSON with an object key over 1024 characters failed with
// yaml.v3's "did not find expected ',' or '}'"; it is named as such, at
// the key.
func TestJSONLongKey(t *testing.T) {
	long := strings.Repeat("k", 1100)
	for in, want := range map[string][2]int{
		`{"model": "m", "` + long + `": 1}`:                                    {1, 16},
		"{\n  \"labels\": {\"a\": \"" + long + "\",\n   \"" + long + "\": 2}}": {3, 4},
	} {
		_, err := Parse([]byte(in))
		var e *Error
		if !errors.As(err, &e) || e.Line != want[0] || e.Col != want[1] || !strings.Contains(e.Msg, "an object key of 1100 characters") {
			t.Errorf("%.40q…: %v, want line %d column %d naming the key", in, err, want[0], want[1])
		}
	}
	// A long string value is fine; so is a long key in YAML flow style
	// that is not JSON (yaml.v3's message stands).
	if _, err := Parse([]byte(`{"model": "` + long + `"}`)); err != nil {
		t.Errorf("long value: %v", err)
	}
}

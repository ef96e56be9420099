package yamldoc

import (
	"errors"
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

package cli

import "testing"

// TestStaySentence: the --keep banner's verb agrees with what stays.
func TestStaySentence(t *testing.T) {
	for _, tc := range []struct {
		kept []string
		want string
	}{
		{[]string{"the Olric member"}, "the Olric member stays"},
		{[]string{"the example copy", "the Olric member"}, "the example copy and the Olric member stay"},
	} {
		if got := staySentence(tc.kept); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.kept, got, tc.want)
		}
	}
}

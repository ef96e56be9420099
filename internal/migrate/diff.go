package migrate

import (
	"bytes"
	"unsafe"

	"github.com/rogpeppe/go-internal/diff"
)

// UnifiedDiff returns the differences between a and b as a unified diff
// (`--- oldName`, `+++ newName`, then `@@ -l,n +l,n @@` hunks with three
// lines of context, as `diff -u` and `git diff` print them, without
// timestamps). It returns "" when a and b are equal. A last line without
// a newline is marked "\ No newline at end of file". Line endings are
// compared as part of the line, so a CRLF/LF change shows. The diff is
// github.com/rogpeppe/go-internal/diff's anchored diff (O(n log n) on any
// input; unique lines anchor the matching regions, so unrelated blank
// lines and closing braces are not reused), without its leading
// "diff oldName newName" line.
func UnifiedDiff(oldName, newName string, a, b []byte) string {
	out := diff.Diff(oldName, a, newName, b)
	if out == nil {
		return ""
	}
	if i := bytes.IndexByte(out, '\n'); i >= 0 && bytes.HasPrefix(out, []byte("diff ")) {
		out = out[i+1:]
	}
	if len(out) == 0 {
		return ""
	}
	// Nothing writes to out after this: the string shares its bytes
	// rather than copying them (27 MB for 124,000 entries).
	return unsafe.String(&out[0], len(out))
}

package validate

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lcctl/lcctl/internal/lb"
)

// Paths name values the way operators read them (lb-config.md, issue 2):
// fields with a dot (`models["m"].max_queued`), map keys in brackets with a
// JSON-quoted key (`request_algorithms["pulsar"]`), array elements by index.

// fieldPath appends a field name.
func fieldPath(path, field string) string {
	if !isIdent(field) {
		return keyPath(path, field)
	}
	if path == "" {
		return field
	}
	return path + "." + field
}

// keyPath appends a map key.
func keyPath(path, key string) string {
	return path + "[" + strconv.Quote(key) + "]"
}

// joinPath appends key below path, as a map key when path names one of the
// lb-config maps (`models`, any `request_algorithms`) and as a field
// otherwise. Used where the structure is not known yet (YAML conversion).
func joinPath(path, key string) string {
	if path == lb.TopLevelModels || path == raKey || strings.HasSuffix(path, "."+raKey) {
		return keyPath(path, key)
	}
	return fieldPath(path, key)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9') {
			continue
		}
		return false
	}
	return true
}

// lastField returns the last component of a path: the field name, or the
// unquoted map key.
func lastField(path string) string {
	if strings.HasSuffix(path, "\"]") {
		if i := strings.LastIndex(path, "[\""); i >= 0 {
			if k, err := strconv.Unquote(path[i+1 : len(path)-1]); err == nil {
				return k
			}
		}
	}
	if i := strings.LastIndexAny(path, ".]"); i >= 0 {
		return path[i+1:]
	}
	return path
}

func decodeRuneAt(b []byte, off int) (rune, int) {
	r, n := utf8.DecodeRune(b[off:])
	if n == 0 {
		n = 1
	}
	return r, n
}

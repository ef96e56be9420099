// Package suggest finds the name a user probably meant ("did you mean")
// among a set of known names: model names in a scrape or an lb-config,
// gateway environment variables.
package suggest

import "strings"

// Closest returns the candidate nearest to name and true when it is close
// enough to be a likely typo: equal ignoring case, or within an edit
// distance (Levenshtein, in bytes) of max(2, len(name)/10), but at most
// half the length of name (so "ab" never suggests "xy"). An exact match
// is not a suggestion (false). Ties go to the earlier candidate.
func Closest(name string, candidates []string) (string, bool) {
	limit := min(max(2, len(name)/10), len(name)/2)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if c == name {
			return "", false
		}
		d := Distance(name, c)
		if strings.EqualFold(c, name) {
			d = 0
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// DidYouMean returns `; did you mean "X"?` for the closest candidate, or ""
// when none is close (see Closest).
func DidYouMean(name string, candidates []string) string {
	if c, ok := Closest(name, candidates); ok {
		return `; did you mean "` + c + `"?`
	}
	return ""
}

// Distance is the Levenshtein edit distance between a and b in bytes
// (insertions, deletions and substitutions each cost 1).
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Package plural writes counts with the right noun form ("1 warning",
// "2 warnings") for every command's text output.
package plural

import "fmt"

// Count returns n followed by the singular noun when n is 1 and the plural
// otherwise: Count(1, "warning", "warnings") is "1 warning",
// Count(0, "family", "families") is "0 families".
func Count[N ~int | ~int64 | ~uint64](n N, singular, plural string) string {
	return fmt.Sprintf("%d %s", n, Noun(n, singular, plural))
}

// Noun returns singular when n is 1, else plural.
func Noun[N ~int | ~int64 | ~uint64](n N, singular, plural string) string {
	if n == 1 {
		return singular
	}
	return plural
}

// Shown returns how many of total items a list that names at most limit
// of them, then "and N more", should name: all of them when that folds
// fewer than two ("and 1 more" would hide an item to save none), else
// limit. limit ≤ 0 names all.
func Shown(total, limit int) int {
	if limit <= 0 || total <= limit+1 {
		return total
	}
	return limit
}

package validate

import (
	"slices"

	"github.com/lcctl/lcctl/internal/lb"
)

// The applicability matrix of lb-config.md §6.7 is the field registry of
// internal/lb (lb.Fields): which algorithms parse a field, which routers
// refuse it (R: V20, V21), its serde type and its defaults. This file only
// answers validate's questions from it.

// AcceptedFields returns the detailed-entry keys the parser of a accepts
// (lb-config.md §6.7, ✓ and R), `algorithm` excluded, in byte order.
func AcceptedFields(a lb.Algorithm) []string {
	var out []string
	for _, f := range lb.Fields() {
		if f.Accepted(a) {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return out
}

// FieldAccepted reports whether a detailed entry of algorithm a may hold
// field (✓ in lb-config.md §6.7; R and P are false).
func FieldAccepted(a lb.Algorithm, field string) bool {
	f := lb.FieldByName(field)
	return f != nil && f.Accepted(a)
}

func algorithmsAccepting(field string) []string {
	f := lb.FieldByName(field)
	if f == nil {
		return nil
	}
	var out []string
	for _, a := range lb.Algorithms {
		if f.Accepted(a) {
			out = append(out, a.String())
		}
	}
	return out
}

// raKey is request_algorithms, the map of an entry and (the same serde
// type) of the top level.
var raKey = lb.FieldRequestAlgorithms.Name

// fieldNames are the registry's names and aliases in byte order: the
// candidates of the V18 "did you mean" hint.
var fieldNames = func() []string {
	var out []string
	for _, f := range lb.Fields() {
		out = append(out, f.Name)
		out = append(out, f.Aliases...)
	}
	slices.Sort(out)
	return out
}()

package lb

import (
	"fmt"
	"math"
	"strconv"
)

// Decoders for the enum types and Millis, so that every value lcctl prints
// with --output json (decisions, traces, configs) decodes back into the
// same Go value. Each UnmarshalText accepts exactly what MarshalText
// produces and returns an error naming the type and the bad text otherwise.

func unmarshalName[T ~uint8](dst *T, text []byte, what string, names []string, first int) error {
	s := string(text)
	for i := first; i < len(names); i++ {
		if names[i] == s {
			*dst = T(i)
			return nil
		}
	}
	return fmt.Errorf("invalid %s %q", what, s)
}

// UnmarshalText parses "selected", "wait" or "unavailable".
func (k *Kind) UnmarshalText(text []byte) error {
	return unmarshalName(k, text, "decision kind", kindNames[:], 0)
}

// UnmarshalText parses a reason name; "" is ReasonNone.
func (r *Reason) UnmarshalText(text []byte) error {
	return unmarshalName(r, text, "reason", reasonNames[:], 0)
}

// UnmarshalText parses a phase name; "" is PhaseNone.
func (p *Phase) UnmarshalText(text []byte) error {
	return unmarshalName(p, text, "phase", phaseNames[:], 0)
}

// UnmarshalText parses a feasibility name ("eligible", "retry_excluded", …).
func (f *Feasibility) UnmarshalText(text []byte) error {
	return unmarshalName(f, text, "feasibility", feasibilityNames[:], 0)
}

// UnmarshalText parses "active", "inactive" or "unknown".
func (s *Status) UnmarshalText(text []byte) error {
	return unmarshalName(s, text, "status", statusNames[:], 0)
}

// UnmarshalText parses "dispatch", "wait", "reject" or "error".
func (o *Outcome) UnmarshalText(text []byte) error {
	return unmarshalName(o, text, "outcome", outcomeNames[:], 1)
}

// UnmarshalText parses a canonical algorithm name or an accepted file
// spelling (lb-config.md §4).
func (a *Algorithm) UnmarshalText(text []byte) error {
	v, ok := ParseAlgorithmName(string(text))
	if !ok {
		return fmt.Errorf("invalid algorithm %q", text)
	}
	*a = v
	return nil
}

// UnmarshalText parses a comparator spelling.
func (c *Comparator) UnmarshalText(text []byte) error {
	v, ok := ParseComparator(string(text))
	if !ok {
		return fmt.Errorf("invalid comparator %q", text)
	}
	*c = v
	return nil
}

// UnmarshalText parses a rendezvous weight spelling.
func (w *RendezvousWeight) UnmarshalText(text []byte) error {
	v, ok := ParseRendezvousWeight(string(text))
	if !ok {
		return fmt.Errorf("invalid rendezvous_weight %q", text)
	}
	*w = v
	return nil
}

// UnmarshalJSON accepts a JSON number or the strings "inf", "-inf" and
// "nan" that MarshalJSON writes for non-finite values.
func (m *Millis) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"inf"`:
		*m = Millis(math.Inf(1))
		return nil
	case `"-inf"`:
		*m = Millis(math.Inf(-1))
		return nil
	case `"nan"`:
		*m = Millis(math.NaN())
		return nil
	case "null":
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("invalid millisecond value %s", b)
	}
	*m = Millis(f)
	return nil
}

package lb

// HeaderString applies the proxy's normalisation of an optional string
// header (lb-config.md H3, H8, H10; wait-and-widen.md §1.3): a value that
// is not visible ASCII (bytes 0x21–0x7E plus space and tab) is absent;
// otherwise leading and trailing spaces and tabs are trimmed and an empty
// result is absent. ok reports presence.
func HeaderString(raw string) (v string, ok bool) {
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if (b < 0x20 && b != '\t') || b > 0x7e {
			return "", false
		}
	}
	lo, hi := 0, len(raw)
	for lo < hi && (raw[lo] == ' ' || raw[lo] == '\t') {
		lo++
	}
	for hi > lo && (raw[hi-1] == ' ' || raw[hi-1] == '\t') {
		hi--
	}
	if lo == hi {
		return "", false
	}
	return raw[lo:hi], true
}

package store

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Gateway constants (NVIDIA/nvcf llm-api-gateway lastcluster/store.go and
// api/session_affinity.go; spec gateway.md §2-§5).
const (
	// DMapName is the Olric DMap holding last-cluster entries (the gateway's
	// lastcluster.DMapName). OLRIC_DMAP_NAME does not change it: in the
	// gateway that variable names only the rate-limit DMap (gateway.md §5.1).
	DMapName = "stargate-last-cluster"
	// KeyPrefix starts every store key.
	KeyPrefix = "lc:v1:"
	// KeyLen is the length in bytes of every store key: the prefix plus 64
	// lower-case hex digits of a SHA-256 digest.
	KeyLen = len(KeyPrefix) + 2*sha256.Size
	// MaxValueBytes bounds a stored cluster ID (the gateway's MaxValueBytes).
	MaxValueBytes = 256
	// MaxSessionIDBytes bounds a raw session ID (gateway sessionIDMaxLen).
	MaxSessionIDBytes = 256
	// AffinityKeyPrefix starts the cache affinity key the gateway derives
	// from a session ID ("mt:v1:session:" + hex SHA-256).
	AffinityKeyPrefix = "mt:v1:session:"
)

// Key returns the store key of a session exactly as the gateway's
// lastcluster.Key computes it (gateway.md §3): "lc:v1:" followed by the
// lower-case hex SHA-256 of, for each of routingKey, model and
// cacheAffinityKey in that order, the part's length in bytes as an 8-byte
// big-endian unsigned integer followed by the part's bytes. Empty parts are
// allowed. The result is always KeyLen (70) ASCII bytes and never contains
// the raw parts.
func Key(routingKey, model, cacheAffinityKey string) string {
	h := sha256.New()
	var n [8]byte
	for _, part := range [3]string{routingKey, model, cacheAffinityKey} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write([]byte(part))
	}
	var sum [sha256.Size]byte
	out := make([]byte, 0, KeyLen)
	out = append(out, KeyPrefix...)
	out = hex.AppendEncode(out, h.Sum(sum[:0]))
	return string(out)
}

// Source is where the gateway found a session ID (gateway.md §2.3). Only
// the three eligible sources can have store entries.
type Source string

// The eligible session sources, by the gateway's SessionSource label.
const (
	// SourcePromptCacheKey is the body field prompt_cache_key; the raw value
	// is hashed, never trimmed.
	SourcePromptCacheKey Source = "prompt_cache_key"
	// SourceConversationID is the body field conversation.id (/v1/responses);
	// hashed, never trimmed.
	SourceConversationID Source = "conversation_id"
	// SourceHeader is the x-multi-turn-session-id header: trimmed, passed
	// through when it already looks like an affinity key, hashed otherwise.
	SourceHeader Source = "header"
)

// Sources lists the eligible sources in documentation order.
var Sources = []Source{SourcePromptCacheKey, SourceConversationID, SourceHeader}

// ParseSource accepts one of "prompt_cache_key", "conversation_id" or
// "header". It refuses "payload" and anything else with an error naming the
// accepted values: payload-hash sessions are never eligible for hints, so
// they have no store entries (gateway.md §2.3).
func ParseSource(s string) (Source, error) {
	switch Source(s) {
	case SourcePromptCacheKey, SourceConversationID, SourceHeader:
		return Source(s), nil
	case "payload":
		return "", errors.New(`source "payload" is never eligible for last-cluster hints, so it has no store entries; want prompt_cache_key, conversation_id or header`)
	}
	return "", fmt.Errorf("unknown session source %q: want prompt_cache_key, conversation_id or header", s)
}

// ValidateSessionID applies the gateway's session ID rule (gateway.md §2.2,
// api/session_affinity.go validateSessionID) to a raw ID: non-empty, at
// most MaxSessionIDBytes bytes, and no code point below U+0020 nor U+007F.
// The error text repeats the gateway's reason and never the ID itself.
func ValidateSessionID(id string) error {
	if id == "" {
		return errors.New("must not be empty")
	}
	if len(id) > MaxSessionIDBytes {
		return fmt.Errorf("must be at most %d bytes (got %d)", MaxSessionIDBytes, len(id))
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return errors.New("must not contain control characters")
		}
	}
	return nil
}

// IsAffinityKey reports whether v has the shape the gateway passes through
// unchanged when it arrives in the x-multi-turn-session-id header
// (isAffinityKey): exactly four ':'-separated parts, "mt", "v1", anything,
// and 64 characters that decode as hex in either case.
func IsAffinityKey(v string) bool {
	parts := strings.Split(v, ":")
	if len(parts) != 4 || parts[0] != "mt" || parts[1] != "v1" || len(parts[3]) != 2*sha256.Size {
		return false
	}
	_, err := hex.DecodeString(parts[3])
	return err == nil
}

// AffinityKey derives the cache affinity key (X-Cache-Affinity-Key) from a
// raw session ID exactly as the gateway does (gateway.md §2.4):
//
//   - prompt_cache_key, conversation_id: "mt:v1:session:" + hex(sha256(id)),
//     with the ID neither trimmed nor passed through;
//   - header: the value is trimmed (strings.TrimSpace) first; a trimmed value
//     that already looks like an affinity key (IsAffinityKey) is returned
//     unchanged, any other is hashed as above.
//
// The ID (trimmed, for the header) must pass ValidateSessionID; a header
// value that is empty after trimming is an error because the gateway treats
// such a header as absent. Errors never contain the ID.
func AffinityKey(source Source, sessionID string) (string, error) {
	switch source {
	case SourcePromptCacheKey, SourceConversationID:
		if err := ValidateSessionID(sessionID); err != nil {
			return "", fmt.Errorf("session id from %s is invalid: %w", source, err)
		}
		return hashedAffinityKey(sessionID), nil
	case SourceHeader:
		v := strings.TrimSpace(sessionID)
		if v == "" {
			return "", errors.New("x-multi-turn-session-id is empty after trimming: the gateway treats the header as absent")
		}
		if err := ValidateSessionID(v); err != nil {
			return "", fmt.Errorf("x-multi-turn-session-id is invalid: %w", err)
		}
		if IsAffinityKey(v) {
			return v, nil
		}
		return hashedAffinityKey(v), nil
	}
	_, err := ParseSource(string(source))
	return "", err
}

func hashedAffinityKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return AffinityKeyPrefix + hex.EncodeToString(sum[:])
}

// SplitClientModel splits the model a client sends ("<routing key>/<model>")
// at the first '/', as the gateway does in NVCF mode (api/model_ids.go
// splitOpenAIModelID), and canonicalises a routing key written as a
// 36-character hyphenated UUID to lower case. It returns an error when
// there is no '/', or when either side is empty (the gateway answers 400);
// the error does not quote the value, whose routing key identifies the
// tenant's function.
func SplitClientModel(clientModel string) (routingKey, model string, err error) {
	rk, m, ok := strings.Cut(clientModel, "/")
	switch {
	case !ok:
		return "", "", fmt.Errorf("client model has no '/' (%d characters): the gateway expects <routing-key>/<model>", utf8.RuneCountInString(clientModel))
	case rk == "":
		return "", "", errors.New("client model starts with '/': a routing key is required before the '/'")
	case m == "":
		return "", "", errors.New("client model ends with '/': a model is required after the routing key")
	}
	return CanonicalRoutingKey(rk), m, nil
}

// CanonicalRoutingKey lower-cases a routing key that is a standard
// 36-character hyphenated UUID (8-4-4-4-12 hex digits, any case), as the
// gateway's canonicalizeRoutingKey does with google/uuid; any other routing
// key is returned unchanged.
func CanonicalRoutingKey(rk string) string {
	if len(rk) != 36 {
		return rk
	}
	for i := 0; i < len(rk); i++ {
		c := rk[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return rk
			}
		default:
			if !isHexDigit(c) {
				return rk
			}
		}
	}
	return strings.ToLower(rk)
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// ValidateKey checks that key is a store key the gateway can have written:
// KeyPrefix followed by exactly 64 lower-case hex digits (KeyLen bytes).
// lcctl refuses to read, write or delete anything else, so it can never
// touch foreign entries of a shared DMap. The error quotes at most the
// first 40 bytes of the key.
func ValidateKey(key string) error {
	if !strings.HasPrefix(key, KeyPrefix) {
		return fmt.Errorf("key %s is not a store key: it must start with %q", quoteShort(key), KeyPrefix)
	}
	if len(key) != KeyLen {
		return fmt.Errorf("key %s is not a store key: want %q followed by 64 hex digits (%d bytes), got %d bytes", quoteShort(key), KeyPrefix, KeyLen, len(key))
	}
	for i := len(KeyPrefix); i < len(key); i++ {
		c := key[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("key %s is not a store key: byte %d (%q) is not a lower-case hex digit", quoteShort(key), i+1, c)
		}
	}
	return nil
}

// ValidateValue applies the gateway's value rule (gateway.md §4,
// lastcluster validClusterID): 1 to MaxValueBytes bytes, each printable
// ASCII 0x20-0x7E. The gateway never stores anything else and treats such
// a stored value as a miss. The error gives the offending byte offset and
// never echoes more than 40 bytes of the value.
func ValidateValue(v string) error {
	if v == "" {
		return errors.New("cluster id must not be empty")
	}
	if len(v) > MaxValueBytes {
		return fmt.Errorf("cluster id is %d bytes: the gateway stores at most %d", len(v), MaxValueBytes)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("cluster id %s has a non-printable byte 0x%02x at offset %d: the gateway stores printable ASCII (0x20-0x7E) only", quoteShort(v), c, i)
		}
	}
	return nil
}

// quoteShort quotes s for an error message, cut to 40 bytes (at most
// about 200 bytes once quoted).
func quoteShort(s string) string {
	const limit = 40
	if len(s) > limit {
		return fmt.Sprintf("%q... (%d bytes)", s[:limit], len(s))
	}
	return fmt.Sprintf("%q", s)
}

package store

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/olric-data/olric/hasher"
)

// DefaultTTL is the gateway's default entry lifetime
// (STARGATE_LAST_CLUSTER_TTL, gateway.md §8.1).
const DefaultTTL = 10 * time.Minute

// DefaultPort is Olric's RESP port in the gateway chart (olric.bindPort).
const DefaultPort = 3320

// DefaultPartitionCount is Olric's and the chart's partition count.
const DefaultPartitionCount = 271

// ParseTTL parses an entry TTL in Go duration syntax ("10m", "90s",
// "1500ms"), as the gateway parses STARGATE_LAST_CLUSTER_TTL, and checks it
// with ValidateTTL. A bare number without a unit is an error.
func ParseTTL(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("invalid ttl %s: want a Go duration such as 10m or 1500ms: %w", quoteShort(s), unwrapParse(err))
	}
	if err := ValidateTTL(d); err != nil {
		return 0, err
	}
	return d, nil
}

// unwrapParse drops time.ParseDuration's "time: " prefix and its
// repetition of the input, keeping the reason.
func unwrapParse(err error) error {
	msg := strings.TrimPrefix(err.Error(), "time: ")
	if i := strings.Index(msg, " in duration "); i >= 0 {
		msg = msg[:i]
	} else if strings.HasPrefix(msg, "invalid duration") {
		msg = "invalid duration"
	}
	return errors.New(msg)
}

// MaxTTL is the longest TTL lcctl writes: 100 years (876000h). An Olric
// member turns PX into an expiry as (ttl + now) in int64 nanoseconds since
// 1970 (olric v0.7.4 internal/dmap/put.go), which wraps around for TTLs
// over about 236 years from today: the entry is then stored already
// expired, and a put that reports success leaves nothing behind.
const MaxTTL = 100 * 365 * 24 * time.Hour

// ValidateTTL refuses TTLs Olric would mishandle: Olric receives the TTL as
// whole milliseconds (PX), and a value under 1 ms becomes PX 0, which the
// client omits, so the entry would never expire (gateway.md §5.1 derived
// note, olric.md §4.2); a TTL over MaxTTL overflows the member's expiry.
// It therefore requires 1ms <= d <= MaxTTL and a whole number of
// milliseconds.
func ValidateTTL(d time.Duration) error {
	if d < time.Millisecond {
		return fmt.Errorf("ttl %v is under 1ms: Olric would store the entry without expiry", d)
	}
	if d > MaxTTL {
		return fmt.Errorf("ttl %v is over 100 years (%v): Olric computes the expiry as now + ttl in int64 nanoseconds, which overflows, and stores the entry already expired", d, MaxTTL)
	}
	if d%time.Millisecond != 0 {
		return fmt.Errorf("ttl %v is not a whole number of milliseconds: Olric stores TTLs in ms", d)
	}
	return nil
}

// MaxSeeds bounds the seed list: seeds are tried in order, each up to the
// dial and request timeouts, so a long list of unreachable addresses
// (every pod IP pasted in) would keep lcctl silent for minutes.
const MaxSeeds = 32

// ParseAddrs parses a comma-separated list of Olric member addresses
// ("host:port[,host:port]", as --olric and LCCTL_OLRIC_ADDRS take them).
// Spaces around items are ignored. Every item must be host:port with a
// non-empty host (IPv6 in brackets) and a decimal port 1-65535; URLs,
// empty items, duplicates and more than MaxSeeds items are errors that name
// the item's position.
func ParseAddrs(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no Olric address given: use --olric host:port[,host:port] or LCCTL_OLRIC_ADDRS")
	}
	items := strings.Split(s, ",")
	if len(items) > MaxSeeds {
		return nil, fmt.Errorf("%d addresses: give at most %d seeds; any one reachable member is enough, lcctl learns the others from it (seeds are tried one after the other, each up to the dial and request timeouts)", len(items), MaxSeeds)
	}
	out := make([]string, 0, len(items))
	seen := make(map[string]bool, len(items))
	for i, raw := range items {
		item := strings.TrimSpace(raw)
		if err := validateAddr(item); err != nil {
			return nil, fmt.Errorf("olric address %d of %d: %w", i+1, len(items), err)
		}
		if seen[item] {
			return nil, fmt.Errorf("olric address %d of %d: %s is listed twice", i+1, len(items), quoteShort(item))
		}
		seen[item] = true
		out = append(out, item)
	}
	return out, nil
}

func validateAddr(a string) error {
	if a == "" {
		return errors.New("empty address (stray comma?)")
	}
	if strings.Contains(a, "://") {
		return fmt.Errorf("%s is a URL: want host:port, e.g. 10.0.0.7:%d", quoteShort(a), DefaultPort)
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		msg := err.Error()
		if ae, ok := err.(*net.AddrError); ok {
			msg = ae.Err // without the repeated address
		}
		return fmt.Errorf("%s is not host:port: %s", quoteShort(a), msg)
	}
	if host == "" {
		return fmt.Errorf("%s has no host", quoteShort(a))
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; c <= ' ' || c >= 0x7f {
			return fmt.Errorf("%s: host has a space or non-ASCII byte at offset %d", quoteShort(a), i)
		}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("%s: port %s is not a number in 1-65535", quoteShort(a), quoteShort(port))
	}
	return nil
}

// ValidateDMapName checks a --dmap value: 1 to 128 bytes of printable
// ASCII without spaces. Olric creates a DMap on first use, so a typo would
// silently read an empty map; the CLI warns separately when the name is
// not DMapName.
func ValidateDMapName(name string) error {
	if name == "" {
		return errors.New("dmap name must not be empty")
	}
	if len(name) > 128 {
		return fmt.Errorf("dmap name is %d bytes: at most 128", len(name))
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c > 0x7e {
			return fmt.Errorf("dmap name %s has a space, control or non-ASCII byte at offset %d", quoteShort(name), i)
		}
	}
	return nil
}

// Partition returns the Olric partition that holds key in dmap with
// partitionCount partitions: XXH64 (seed 0, Olric's default hasher) of the
// DMap name and key concatenated, modulo the count (olric.md §6,
// internal/cluster/partitions.HKey). It returns 0 for a count of 0.
func Partition(dmap, key string, partitionCount uint64) uint64 {
	if partitionCount == 0 {
		return 0
	}
	return defaultHasher.Sum64([]byte(dmap+key)) % partitionCount
}

var defaultHasher = hasher.NewDefaultHasher()

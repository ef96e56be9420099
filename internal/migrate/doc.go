// Package migrate rewrites Stargate lb-config files ahead of the release
// that removes pulsar-wait-and-widen's eligible-primary shortcut
// (../shared/spec/lb-config.md §13, rules M1–M16; pulsar.md §7.8).
//
// A no-SLO pulsar-wait-and-widen entry (M1) keeps every request on its
// Pulsar rank-1 cluster today; after the upgrade it overflows as soon as
// rank 1 has no free engine slot. Migrate gives each such entry the
// operator's choice of target: Bounded (keep the algorithm, add max_queued
// and cache_affinity_wait_ms, M5) or Pulsar (unlimited stickiness, M6),
// with the placement rules for request_algorithms (M7), header
// availability (M8), `default` (M9) and string entries (M10).
//
// The package is pure: Migrate takes bytes and returns bytes plus the
// changes, notes and availability report; it never touches the file
// system. Writing is the job of package internal/migrate/safewrite.
// UnifiedDiff renders the change for review.
package migrate

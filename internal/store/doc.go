// Package store owns everything lcctl knows about the gateway's last-cluster
// store: the session key derivation (byte-identical to the LLM API gateway,
// spec gateway.md §2-§4) and every call to Olric (spec olric.md). It is the
// only package of lcctl that imports github.com/olric-data/olric.
//
// Talking to a live cluster goes through [Connect], which wraps olric's
// ClusterClient (v0.7.4). Every argument is validated before anything is
// sent: keys must be gateway store keys ("lc:v1:" + 64 lower-case hex
// digits), values must satisfy the gateway's value rule (1-256 printable
// ASCII bytes), TTLs must be whole milliseconds of at least 1 ms (a shorter
// TTL would reach Olric as "no expiry"), and scan patterns are built from
// escaped literals only. lcctl never sends raw protocol commands and never
// destroys a DMap.
//
// [StartNode] starts a real embedded Olric member in-process, for
// `lcctl store serve-dev` and for tests.
package store

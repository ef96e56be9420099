// Package validate decodes Stargate load-balancer configs (lb-config files,
// JSON or YAML) into a positioned document, applies every startup rule of
// ../shared/spec/lb-config.md (V1–V21, with the duplicate-key rules D1–D5
// and the value rules of §7) plus the operator warnings (W1–W20), and
// produces the typed, normalised lb.Config the decision engine consumes.
//
// Stargate (NVIDIA/nvcf, crates/stargate/src/load_balancer/config.rs)
// stops at the first error; this package reports every error of a file,
// each with a stable code (Registry, docs/diagnostics.md), file:line:col,
// the JSON path, the field and the algorithm, and a message that contains
// Stargate's own text for the rule.
//
// Entry points: File (bytes → Result), Decode + Check (for callers that
// edit the Document, such as migrate), Node and AlgorithmConfigFromNode
// (YAML nodes embedded in bigger files, such as conformance cases).
package validate

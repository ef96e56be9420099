// Package examples carries lcctl's shipped example files inside the binary,
// so that `lcctl demo` also runs outside a clone of the repository (after
// `go install`). The files themselves are documented in each folder's
// README and in the top-level README.
package examples

import "embed"

// FS holds the example files `lcctl demo` uses, under their paths relative
// to this folder: lb-config/*, explain/*.yaml, scenarios/*.yaml and
// gateway/*.yaml.
//
//go:embed lb-config/*.json lb-config/*.yaml explain/*.yaml scenarios/*.yaml gateway/*.yaml
var FS embed.FS

// Package lcctl carries lcctl's shipped example files (the examples
// folder) inside the binary, so that `lcctl demo` also runs outside a
// clone of the repository (after `go install`). The files are described
// in docs/examples.md. The command itself is cmd/lcctl.
package lcctl

import (
	"embed"
	"io/fs"
)

//go:embed examples/lb-config/*.json examples/lb-config/*.yaml examples/explain/*.yaml examples/scenarios/*.yaml examples/gateway/*.yaml
var embedded embed.FS

// Examples holds the example files `lcctl demo` uses, under their paths
// relative to the examples folder: lb-config/*, explain/*.yaml,
// scenarios/*.yaml and gateway/*.yaml. It is read-only.
var Examples = mustSub(embedded, "examples")

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		// fs.Sub fails only for an invalid path, and "examples" is valid.
		panic(err)
	}
	return sub
}

package lcctl

import "embed"

// Docs holds the reference documentation (the docs folder's *.md files:
// README.md is the index) inside the binary, for `lcctl docs TOPIC`, so
// an installed lcctl does not depend on a clone of the repository. The
// paths are "docs/NAME.md"; it is read-only.
//
//go:embed docs/*.md
var Docs embed.FS

package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/lcctl/lcctl/internal/ui"
)

// WriteManPages writes one section-1 man page per command (lcctl.1,
// lcctl-validate.1, lcctl-store-scan.1, ...) into dir, creating it, from
// the same help texts `lcctl COMMAND --help` prints (cobra/doc). The
// error names the directory or page that could not be written.
// cmd/lcctl-man calls it; goreleaser packs the pages (goreleaser.yaml).
func WriteManPages(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	root := NewRootCommand(&ui.Streams{In: eofReader{}, Out: io.Discard, Err: io.Discard})
	root.DisableAutoGenTag = true
	disableAutoGenTag(root)
	header := &doc.GenManHeader{Title: "LCCTL", Section: "1", Source: "lcctl " + versionInfo().Version,
		Manual: "lcctl manual"}
	return doc.GenManTree(root, header, dir)
}

// disableAutoGenTag sets DisableAutoGenTag on every command, so pages do not
// change with the generation date.
func disableAutoGenTag(c *cobra.Command) {
	c.DisableAutoGenTag = true
	for _, sub := range c.Commands() {
		disableAutoGenTag(sub)
	}
}

// eofReader is an empty standard input.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

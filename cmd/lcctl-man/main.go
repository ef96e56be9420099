// Command lcctl-man writes lcctl's man pages (section 1, one per command:
// lcctl.1, lcctl-validate.1, lcctl-store-scan.1, ...) into a directory,
// generated from the command tree's help texts with cobra/doc.
// goreleaser runs it before building (goreleaser.yaml) and packs the pages
// into every archive under man/:
//
//	go run ./cmd/lcctl-man man
package main

import (
	"fmt"
	"os"

	"github.com/lcctl/lcctl/internal/cli"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" || os.Args[1][0] == '-' {
		fmt.Fprintln(os.Stderr, "usage: lcctl-man DIR")
		os.Exit(2)
	}
	if err := cli.WriteManPages(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "lcctl-man:", err)
		os.Exit(1)
	}
}

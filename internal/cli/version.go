package cli

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Build information, set by goreleaser through -ldflags
// "-X github.com/lcctl/lcctl/internal/cli.version=... -X ...commit=... -X ...date=...".
// A plain `go build` leaves them empty and versionInfo falls back to the
// module and VCS data embedded by the Go toolchain.
var (
	version = ""
	commit  = ""
	date    = ""
)

// VersionInfo is the output of `lcctl version`. Every key is always
// present; Date is "" when the build records no date.
type VersionInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	Date      string `json:"date"`
	GoVersion string `json:"go_version"`
	Platform  string `json:"platform"`
}

func versionInfo() VersionInfo {
	v := VersionInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if v.Commit == "" {
					v.Commit = s.Value
				}
			case "vcs.time":
				if v.Date == "" {
					v.Date = s.Value
				}
			case "vcs.modified":
				if s.Value == "true" && commit == "" && v.Commit != "" {
					v.Commit += "-dirty"
				}
			}
		}
	}
	if v.Version == "" {
		v.Version = "dev"
	}
	if v.Commit == "" {
		v.Commit = "unknown"
	}
	return v
}

// versionOptions are the (no) arguments of `lcctl version`.
type versionOptions struct{ cmdInput }

// validate has nothing to check: cobra.NoArgs refuses arguments.
func (*versionOptions) validate(*Env) error { return nil }

func newVersionCommand(env *Env) *cobra.Command {
	return wireLeaf(&cobra.Command{
		Use:   "version",
		Short: "Print lcctl's version, commit and Go version",
		Example: `  lcctl version
  lcctl version -o json`,
		Args: cobra.NoArgs,
	}, env, &versionOptions{}, runVersion)
}

// runVersion prints versionInfo.
func runVersion(_ context.Context, env *Env, _ *versionOptions) error {
	v := versionInfo()
	if env.Global.JSON() {
		return writeJSON(env.Out, "version", v)
	}
	fmt.Fprintf(env.Out, "lcctl %s\ncommit: %s\n", v.Version, v.Commit)
	if v.Version == "dev" {
		// Neither release ldflags nor a module version: a
		// build from a checkout with VCS stamping off.
		fmt.Fprintln(env.Out, "note: this build records no version (a go build from a checkout with -buildvcs=false); releases stamp it through goreleaser's -ldflags, go install MODULE@VERSION through the module version ('lcctl docs cli')")
	}
	if v.Date != "" {
		fmt.Fprintf(env.Out, "built: %s\n", v.Date)
	}
	fmt.Fprintf(env.Out, "go: %s %s\n", v.GoVersion, v.Platform)
	return nil
}

package cli_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/lcctl/lcctl/internal/cli"
	"github.com/lcctl/lcctl/internal/testutil"
	"github.com/lcctl/lcctl/internal/ui"
)

// TestMain lets testscript run `lcctl` as a subprocess that is this test
// binary calling cli.Main.
//
// `want-exit CODE lcctl ARGS...` runs lcctl the same way and succeeds only
// when its exit status is exactly CODE, so scripts can tell 1 (findings)
// from 2 (usage or unreadable input); its output is lcctl's.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"lcctl": func() { os.Exit(cli.Main(context.Background(), os.Args[1:], ui.SystemStreams())) },
		"want-exit": func() {
			if len(os.Args) < 3 || os.Args[2] != "lcctl" {
				fmt.Fprintln(os.Stderr, "usage: want-exit CODE lcctl ARGS...")
				os.Exit(3)
			}
			want, err := strconv.Atoi(os.Args[1])
			if err != nil {
				fmt.Fprintln(os.Stderr, "want-exit: bad code:", err)
				os.Exit(3)
			}
			if got := cli.Main(context.Background(), os.Args[3:], ui.SystemStreams()); got != want {
				fmt.Fprintf(os.Stderr, "want-exit: lcctl exited %d, want %d\n", got, want)
				os.Exit(1)
			}
			os.Exit(0)
		},
	})
}

// TestScript runs every testdata/script/*.txtar. Scripts get NO_COLOR=1,
// $SHARED (the read-only shared folder: specs, conformance cases,
// upstream examples) and $REPO (the repository root).
func TestScript(t *testing.T) {
	shared := testutil.SharedDir(t)
	repo := testutil.RepoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("SHARED", shared)
			env.Setenv("REPO", repo)
			return nil
		},
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("LCCTL_UPDATE_SCRIPTS") == "1",
	})
}

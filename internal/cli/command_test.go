package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/lcctl/lcctl/internal/ui"
)

// runValidated does without cobra what a leaf command's PreRunE and RunE
// do: it validates o and, when that succeeds, runs it.
func runValidated[O leafOptions](ctx context.Context, env *Env, o O, run func(context.Context, *Env, O) error) error {
	if err := o.validate(env); err != nil {
		return err
	}
	return run(ctx, env, o)
}

// given is the cmdInput of a command run with the flags names given.
func given(names ...string) cmdInput {
	in := cmdInput{given: map[string]bool{}}
	for _, n := range names {
		in.given[n] = true
	}
	return in
}

// testEnv is an Env without cobra: stdin from in, empty environment
// (plus vars, NAME=VALUE), plain styles, output format output ("" is
// text). It returns the Env and its stdout and stderr.
func testEnv(in, output string, vars ...string) (*Env, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	envv := map[string]string{}
	for _, v := range vars {
		k, val, _ := strings.Cut(v, "=")
		envv[k] = val
	}
	if output == "" {
		output = OutputText
	}
	s := &ui.Streams{In: strings.NewReader(in), Out: &out, Err: &errb, Getenv: func(k string) string { return envv[k] }}
	return &Env{Streams: s, Global: &GlobalOptions{Output: output},
		Style: ui.NewStyles(&out, false), ErrStyle: ui.NewStyles(&errb, false)}, &out, &errb
}

// usageErr reports whether err is a usage error (exit 2) whose message
// contains want.
func usageErr(err error, want string) bool {
	var ee *ExitError
	return errors.As(err, &ee) && ee.Code == ExitUsage && ee.Err != nil && strings.Contains(ee.Err.Error(), want)
}

// version, docs, explain-code and help run from their options structs.
func TestReferenceCommandsWithoutCobra(t *testing.T) {
	ctx := context.Background()
	env, out, _ := testEnv("", OutputJSON)
	if err := runValidated(ctx, env, &versionOptions{}, runVersion); err != nil || !strings.Contains(out.String(), `"schema": "lcctl.version/v1"`) {
		t.Errorf("version: %v %q", err, out)
	}

	env, out, _ = testEnv("", OutputJSON)
	docs := &docsOptions{cmdInput: cmdInput{args: []string{"docs/README.md"}}}
	if err := runValidated(ctx, env, docs, runDocs); err != nil || !strings.Contains(out.String(), `"topic": "index"`) {
		t.Errorf("docs docs/README.md: %v %q", err, out.String()[:min(out.Len(), 200)])
	}
	if err := (&docsOptions{cmdInput: cmdInput{args: []string{"valdate"}}}).validate(env); !usageErr(err, `no documentation topic "valdate"; did you mean "validate"?`) {
		t.Errorf("docs valdate: %v", err)
	}

	env, out, _ = testEnv("", OutputJSON)
	if err := runValidated(ctx, env, &explainCodeOptions{cmdInput: cmdInput{args: []string{" lc2001"}}}, runExplainCode); err != nil || !strings.Contains(out.String(), `"code": "LC2001"`) {
		t.Errorf("explain-code lc2001: %v %q", err, out)
	}
	if err := (&explainCodeOptions{cmdInput: cmdInput{args: []string{"LC9999"}}}).validate(env); !usageErr(err, `"LC9999" is not a diagnostic code`) {
		t.Errorf("explain-code LC9999: %v", err)
	}

	env, out, _ = testEnv("", OutputText)
	root := NewRootCommand(env.Streams)
	h := &helpOptions{cmdInput: cmdInput{args: []string{"LC2001"}, root: root}}
	if err := runValidated(ctx, env, h, runHelp); err != nil || !strings.HasPrefix(out.String(), "LC2001 ") {
		t.Errorf("help LC2001: %v %q", err, out)
	}
	h = &helpOptions{cmdInput: cmdInput{args: []string{"store", "get"}, root: root}}
	if err := h.validate(env); err != nil || h.target.CommandPath() != "lcctl store get" {
		t.Errorf("help store get: %v %v", err, h.target)
	}
	h = &helpOptions{cmdInput: cmdInput{args: []string{"stroe"}, root: root}}
	if err := h.validate(env); !usageErr(err, `unknown command "stroe" for "lcctl"; did you mean "store"?`) {
		t.Errorf("help stroe: %v", err)
	}
}

// context list, use and show run from their options structs.
func TestContextCommandsWithoutCobra(t *testing.T) {
	ctx := context.Background()
	_, file := writeContexts(t, testContexts, 0o600)
	env, out, _ := testEnv("", OutputJSON, EnvConfigFile+"="+file)
	if err := runValidated(ctx, env, &contextListOptions{}, runContextList); err != nil || !strings.Contains(out.String(), `"selected_context": "local"`) {
		t.Errorf("context list: %v %q", err, out)
	}
	if err := (&contextUseOptions{cmdInput: cmdInput{args: []string{"stagin"}}}).validate(env); !usageErr(err, "stagin") {
		t.Errorf("context use stagin: %v", err)
	}
	env, out, _ = testEnv("", OutputText, EnvConfigFile+"="+file)
	if err := runValidated(ctx, env, &contextUseOptions{cmdInput: cmdInput{args: []string{"prod"}}}, runContextUse); err != nil || !strings.HasPrefix(out.String(), "current context: prod") {
		t.Errorf("context use prod: %v %q", err, out)
	}
	env, out, _ = testEnv("", OutputJSON, EnvConfigFile+"="+file)
	show := &contextShowOptions{cmdInput: cmdInput{root: NewRootCommand(env.Streams)}, resolved: true}
	if err := runValidated(ctx, env, show, runContextShow); err != nil ||
		!strings.Contains(out.String(), `"context": "prod"`) || !strings.Contains(out.String(), `"from": "default"`) {
		t.Errorf("context show --resolved: %v %q", err, out)
	}
}

// Every leaf command of the tree validates in PreRunE and runs in RunE
// (wireLeaf); cobra's own completion scripts are the exception.
func TestEveryLeafCommandIsWired(t *testing.T) {
	env, _, _ := testEnv("", OutputText)
	var walk func(c *cobra.Command)
	leaves := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.HasSubCommands() || c.Parent() != nil && c.Parent().Name() == "completion" {
			return
		}
		leaves++
		if c.PreRunE == nil || c.RunE == nil || c.Run != nil {
			t.Errorf("%s: not wired through wireLeaf (PreRunE %v, RunE %v, Run %v)", c.CommandPath(), c.PreRunE != nil, c.RunE != nil, c.Run != nil)
		}
	}
	walk(NewRootCommand(env.Streams))
	if leaves < 24 {
		t.Errorf("%d leaf commands, want at least 24", leaves)
	}
}

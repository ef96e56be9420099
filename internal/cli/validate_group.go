package cli

import (
	"fmt"
	"strings"

	"github.com/lcctl/lcctl/internal/validate"
)

// findingGroup is one line of validate's text output: diagnostics of one
// file with the same code, message and hint, printed once at the first
// one's position with the list of their paths. A config whose 1,000
// models entries share a finding (LC2001) prints its ~430-character text
// once instead of 1,000 times. The JSON output keeps one item per path.
type findingGroup struct {
	first validate.Diagnostic
	paths []string
}

// groupFindings groups the shown diagnostics (hidden ones left out) in
// order of their first appearance.
func groupFindings(ds []validate.Diagnostic, hidden func(validate.Diagnostic) bool) []*findingGroup {
	type key struct {
		code          validate.Code
		message, hint string
	}
	var groups []*findingGroup
	index := map[key]*findingGroup{}
	for _, d := range ds {
		if hidden(d) {
			continue
		}
		k := key{d.Code, d.Message, d.Hint}
		if g, ok := index[k]; ok && d.Path != "" && g.first.Path != "" {
			g.paths = append(g.paths, d.Path)
			continue
		}
		g := &findingGroup{first: d, paths: []string{d.Path}}
		if d.Path != "" {
			index[k] = g
		}
		groups = append(groups, g)
	}
	return groups
}

// pathList names the group's paths: all of them up to three
// (`a, b and c`), else the first two and how many more.
func (g *findingGroup) pathList() string {
	p := g.paths
	switch {
	case len(p) == 1:
		return p[0]
	case len(p) <= 3:
		return strings.Join(p[:len(p)-1], ", ") + " and " + p[len(p)-1]
	}
	return fmt.Sprintf("%s, %s and %d more", p[0], p[1], len(p)-2)
}

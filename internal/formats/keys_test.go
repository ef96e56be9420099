package formats

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestFieldKeysMatchDecoders reads this package's source: every
// d.fields(n, path, KEYS, func…) call names, in KEYS, exactly the string
// cases of the callback's switch, in order, so the names an unknown key is
// compared with ("did you mean …?") are the ones the decoder accepts.
func TestFieldKeysMatchDecoders(t *testing.T) {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]string{"caseKeys": caseKeys, "expectKeys": expectKeys, "requestKeys": requestKeys,
		"snapshotKeys": snapshotKeys, "clusterKeys": clusterKeys, "statsKeys": statsKeys}
	calls := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "fields" || len(call.Args) != 4 {
				return true
			}
			calls++
			id, ok := call.Args[2].(*ast.Ident)
			if !ok {
				t.Errorf("%s: fields is called with %T, want a package-level key list", fset.Position(call.Pos()), call.Args[2])
				return true
			}
			want, ok := lists[id.Name]
			if !ok {
				t.Errorf("%s: key list %s is not checked here: add it to lists", fset.Position(call.Pos()), id.Name)
				return true
			}
			fn, ok := call.Args[3].(*ast.FuncLit)
			if !ok {
				t.Errorf("%s: the callback is not a function literal", fset.Position(call.Pos()))
				return true
			}
			var got []string
			for _, st := range fn.Body.List {
				sw, ok := st.(*ast.SwitchStmt)
				if !ok {
					continue
				}
				for _, cc := range sw.Body.List {
					for _, e := range cc.(*ast.CaseClause).List {
						if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							s, _ := strconv.Unquote(lit.Value)
							got = append(got, s)
						}
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %s = %q, the switch accepts %q", fset.Position(call.Pos()), id.Name, want, got)
			}
			return true
		})
	}
	if calls != len(lists) {
		t.Errorf("%d fields calls, %d key lists", calls, len(lists))
	}
}

// An unknown key gets the closest known one.
func TestUnknownFieldSuggests(t *testing.T) {
	_, err := DecodeSnapshot("s.yaml", []byte("clusters:\n  - cluster_id: a\n    stats: {num_running_querys: 1}\n  - clustr_id: b\n"))
	if err == nil {
		t.Fatal("accepted")
	}
	for _, want := range []string{`s.yaml:3:13: clusters[0].stats.num_running_querys: unknown field "num_running_querys"; did you mean "num_running_queries"?`,
		`clusters[1].clustr_id: unknown field "clustr_id"; did you mean "cluster_id"?`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
}

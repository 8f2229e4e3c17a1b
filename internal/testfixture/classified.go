package testfixture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// CheckClassified fails unless every Test function in this package's test files (whatever
// their build tags) is in exactly one of lists, and every name listed is such a function.
func CheckClassified(t testing.TB, lists ...[]string) {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("the test files: %v", err)
	}
	tests := map[string]bool{}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") && fn.Name.Name != "TestMain" {
				tests[fn.Name.Name] = true
			}
		}
	}
	listed := map[string]int{}
	for _, list := range lists {
		for _, name := range list {
			listed[name]++
			if !tests[name] {
				t.Errorf("%s is listed in standin_test.go but is no test of this package", name)
			}
		}
	}
	for name := range tests {
		if listed[name] != 1 {
			t.Errorf("%s is in %d of standin_test.go's lists, want exactly 1: does the stand-in GPU change what it runs?", name, listed[name])
		}
	}
}

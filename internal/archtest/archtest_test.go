package archtest

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// rule is one line of the page's block: the packages it covers and what they may import.
type rule struct {
	line     int
	packages []string // patterns: "engine/cpu", or "engine/model/..." (the folder and below)
	allowed  []string // patterns likewise; "*" anything
}

// match says whether pattern (relative to the module) names pkg.
func match(pattern, pkg string) bool {
	if pattern == "*" {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == base || strings.HasPrefix(pkg, base+"/")
	}
	return pkg == pattern
}

func matchAny(patterns []string, pkg string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return match(p, pkg) })
}

// readRules reads the fenced block after the heading "## Import rules": lines "PKGS: ALLOWED"
// (space-separated patterns; ALLOWED may be "-": only the standard library and modules
// outside this one).
func readRules(path string) ([]rule, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rules []rule
	sc := bufio.NewScanner(f)
	section, fenced, n := false, false, 0
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = strings.HasPrefix(line, "## Import rules")
		case section && strings.HasPrefix(line, "```"):
			if fenced {
				return rules, nil
			}
			fenced = true
		case section && fenced && strings.TrimSpace(line) != "":
			pkgs, allowed, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("%s:%d: want PACKAGES: ALLOWED", path, n)
			}
			r := rule{line: n, packages: strings.Fields(pkgs)}
			if a := strings.Fields(allowed); !(len(a) == 1 && a[0] == "-") {
				r.allowed = a
			}
			rules = append(rules, r)
		}
	}
	return nil, fmt.Errorf("%s: no fenced block after \"## Import rules\"", path)
}

// moduleImports is every package of the module and the module packages its non-test code
// imports (with the tests' hooks built in: -tags inspectortest), both relative to the module.
func moduleImports(t *testing.T, root string) map[string][]string {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "list", "-tags", "inspectortest", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = root
	// The module's packages as this machine builds them: not as a cross build asks (the arm64
	// pass under qemu sets GOARCH=arm64 and CGO_ENABLED=0, which some packages need on).
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "GOARCH" && k != "GOOS" && k != "CGO_ENABLED" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	mod := "github.com/turbospark/inspector"
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := rel(mod, fields[0])
		got[pkg] = nil
		for _, imp := range fields[1:] {
			if r := rel(mod, imp); r != "" && r != pkg && !strings.HasPrefix(imp, "third_party") && strings.HasPrefix(imp, mod+"/") && !slices.Contains(got[pkg], r) {
				got[pkg] = append(got[pkg], r)
			}
		}
	}
	return got
}

func rel(mod, path string) string {
	if r, ok := strings.CutPrefix(path, mod+"/"); ok {
		return r
	}
	return ""
}

// Every package of the module is covered by a rule of docs/ARCHITECTURE.md and its code
// imports only what its rule allows.
func TestImportRules(t *testing.T) {
	root := filepath.Join("..", "..")
	rules, err := readRules(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	for pkg, imports := range moduleImports(t, root) {
		if strings.HasPrefix(pkg, "third_party/") {
			continue
		}
		i := slices.IndexFunc(rules, func(r rule) bool { return matchAny(r.packages, pkg) })
		if i < 0 {
			t.Errorf("%s: no rule of docs/ARCHITECTURE.md names it (place it on the page)", pkg)
			continue
		}
		for _, imp := range imports {
			if strings.HasPrefix(imp, "third_party/") {
				continue
			}
			if !matchAny(rules[i].allowed, imp) {
				t.Errorf("%s imports %s: docs/ARCHITECTURE.md line %d allows %v", pkg, imp, rules[i].line, rules[i].allowed)
			}
		}
	}
}

// The patterns mean what they say: "a/..." is a and below, nothing that merely starts alike.
func TestRulePatterns(t *testing.T) {
	for _, c := range []struct {
		pattern, pkg string
		want         bool
	}{
		{"engine", "engine", true}, {"engine", "engine/cpu", false}, {"engine/...", "engine/cpu", true},
		{"engine/...", "enginex", false}, {"engine/...", "engine", true}, {"*", "ui", true}, {"ui/...", "uix/a", false},
	} {
		if got := match(c.pattern, c.pkg); got != c.want {
			t.Errorf("match(%q, %q) = %v", c.pattern, c.pkg, got)
		}
	}
}

// pathRef is a file path the page names in backquotes, from the module's root.
var pathRef = regexp.MustCompile("`((?:[a-zA-Z0-9_.-]+/)+[a-zA-Z0-9_.-]+\\.(?:go|md|sh|py|metal|m))`")

// Every file docs/ARCHITECTURE.md names by its path from the module's root exists: the page
// moves when the code does.
func TestNamedPathsExist(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	refs := pathRef.FindAllStringSubmatch(string(page), -1)
	if len(refs) < 10 {
		t.Fatalf("the page names %d paths: the pattern reads it wrong", len(refs))
	}
	for _, m := range refs {
		p := m[1]
		if strings.HasPrefix(p, "../") {
			continue // outside the module (../shared)
		}
		if _, err := os.Stat(filepath.Join(root, p)); err != nil {
			t.Errorf("docs/ARCHITECTURE.md names %s: %v", p, err)
		}
	}
}

//go:build !darwin

package metal

// typecheck_test.go: the macOS build of this package — its calls of darwinkit's objc
// package, the cgo device shim, metal_darwin_test.go — type-checked from Linux, where it cannot be compiled (no
// macOS SDK for cgo). `go list` (GOOS=darwin GOARCH=arm64 CGO_ENABLED=1, which never runs
// cgo without -compiled/-export) gives every package of the build in dependency order;
// go/types checks their GoFiles+CgoFiles with FakeImportC, an importer that follows each
// package's ImportMap, arm64 sizes, and function bodies skipped for the standard library.
//
// Invariant: any type error in any package of the darwin build (or its test) fails the
// test. Mutation that would silently break it: checking only the files without a darwin
// build tag (what a plain Linux build sees) — gpu_darwin.go would never be looked at; the
// tests below assert it and metal_darwin_test.go are among the files checked, and that a
// wrong call in gpu_darwin.go is reported.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

type listedPackage struct {
	ImportPath string
	Name       string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	ImportMap  map[string]string
	Standard   bool
	Module     *struct{ GoVersion string }
	Error      *struct{ Err string }
}

func (p *listedPackage) files() []string { return append(slices.Clone(p.GoFiles), p.CgoFiles...) }

// darwinBuild is the list and the checked packages, made once per test binary.
type darwinBuild struct {
	fset     *token.FileSet
	list     []*listedPackage
	checked  map[string]*types.Package // by ImportPath (test variants included)
	files    map[string][]*ast.File    // parsed files of non-standard packages
	infos    map[string]*types.Info    // type information of non-standard packages
	errs     []error
	listTime time.Duration
	typeTime time.Duration
}

var darwin = sync.OnceValues(checkDarwinBuild)

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

func listDarwin() ([]*listedPackage, error) {
	cmd := exec.Command(goTool(), "list", "-e", "-deps", "-test",
		"-json=ImportPath,Name,Dir,GoFiles,CgoFiles,ImportMap,Standard,Module,Error", ".")
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list for darwin/arm64: %v\n%s", err, stderr.String())
	}
	var list []*listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(listedPackage)
		if err := dec.Decode(p); err == io.EOF {
			return list, nil
		} else if err != nil {
			return nil, err
		}
		list = append(list, p)
	}
}

func checkDarwinBuild() (*darwinBuild, error) {
	start := time.Now()
	list, err := listDarwin()
	if err != nil {
		return nil, err
	}
	b := &darwinBuild{fset: token.NewFileSet(), list: list, checked: map[string]*types.Package{},
		files: map[string][]*ast.File{}, infos: map[string]*types.Info{}, listTime: time.Since(start)}
	start = time.Now()
	for _, p := range list {
		if p.Name == "main" && strings.HasSuffix(p.ImportPath, ".test") {
			continue // the generated test main: its source exists only in a build
		}
		if p.Error != nil {
			b.errs = append(b.errs, fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err))
			continue
		}
		files, err := b.parse(p, nil)
		if err != nil {
			b.errs = append(b.errs, err)
			continue
		}
		pkg, info, errs := b.check(p, files)
		b.checked[p.ImportPath] = pkg
		b.errs = append(b.errs, errs...)
		if !p.Standard {
			b.files[p.ImportPath] = files
			b.infos[p.ImportPath] = info
		}
	}
	b.typeTime = time.Since(start)
	return b, nil
}

// parse reads a package's files; replace maps a file name to a source to use instead.
func (b *darwinBuild) parse(p *listedPackage, replace map[string]string) ([]*ast.File, error) {
	var files []*ast.File
	for _, name := range p.files() {
		var src any
		if s, ok := replace[name]; ok {
			src = s
		}
		f, err := parser.ParseFile(b.fset, filepath.Join(p.Dir, name), src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// check type-checks one package against the packages checked before it; the Info (uses,
// types, instances, selections) is kept for packages outside the standard library.
func (b *darwinBuild) check(p *listedPackage, files []*ast.File) (*types.Package, *types.Info, []error) {
	var errs []error
	var info *types.Info
	if !p.Standard {
		info = &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{},
			Uses: map[*ast.Ident]types.Object{}, Instances: map[*ast.Ident]types.Instance{},
			Selections: map[*ast.SelectorExpr]*types.Selection{}}
	}
	conf := types.Config{
		FakeImportC:      true,
		IgnoreFuncBodies: p.Standard,
		Sizes:            types.SizesFor("gc", "arm64"),
		Importer:         importerFor(p, b.checked),
		Error:            func(err error) { errs = append(errs, err) },
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		conf.GoVersion = "go" + p.Module.GoVersion
	}
	pkg, _ := conf.Check(p.ImportPath, b.fset, files, info)
	return pkg, info, errs
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// importerFor resolves p's imports through its ImportMap (vendoring, test variants).
func importerFor(p *listedPackage, checked map[string]*types.Package) types.Importer {
	return importerFunc(func(path string) (*types.Package, error) {
		if path == "unsafe" {
			return types.Unsafe, nil
		}
		if mapped, ok := p.ImportMap[path]; ok {
			path = mapped
		}
		if pkg := checked[path]; pkg != nil {
			return pkg, nil
		}
		return nil, fmt.Errorf("%s imports %s, which is not checked before it", p.ImportPath, path)
	})
}

func darwinOrFatal(t *testing.T) *darwinBuild {
	t.Helper()
	b, err := darwin()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDarwinBuildTypeChecks(t *testing.T) {
	b := darwinOrFatal(t)
	t.Logf("go list %v, type-check of %d packages %v", b.listTime.Round(time.Millisecond), len(b.checked), b.typeTime.Round(time.Millisecond))
	for _, err := range b.errs {
		t.Error(err)
	}
	// The files that matter must be among those checked.
	want := map[string]bool{"gpu_darwin.go": false, "device_darwin.go": false, "new_darwin.go": false, "metal_darwin_test.go": false}
	for path, files := range b.files {
		if !strings.HasPrefix(path, "github.com/turbospark/inspector/metal") {
			continue
		}
		for _, f := range files {
			name := filepath.Base(b.fset.File(f.Pos()).Name())
			if _, ok := want[name]; ok {
				want[name] = true
			}
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("%s was not type-checked", name)
		}
	}
}

// metalPackage returns the listed darwin build of this package (not its test variant).
func (b *darwinBuild) metalPackage() (*listedPackage, error) {
	for _, p := range b.list {
		if p.ImportPath == "github.com/turbospark/inspector/metal" {
			return p, nil
		}
	}
	return nil, errors.New("the metal package is not in the darwin list")
}

// TestTypeCheckCatchesWrongCalls re-checks the package with one call of gpu_darwin.go broken
// at a time; each must be reported. (A message's argument and result kinds, which objc.Call
// takes as ...any and a type argument, are the darwinkit audit's to check.)
func TestTypeCheckCatchesWrongCalls(t *testing.T) {
	b := darwinOrFatal(t)
	p, err := b.metalPackage()
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(p.Dir, "gpu_darwin.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ name, from, to string }{
		{"a [3]int where an MTLSize is made", "return mtlSize{Width: uint64(v[0]), Height: uint64(v[1]), Depth: uint64(v[2])}", "return v"},
		{"a Go string for a selector", `objc.Call[objc.Void](g.cmd, objc.Sel("commit"))`, `objc.Call[objc.Void](g.cmd, "commit")`},
		{"a message sent without its result type", `objc.Call[objc.Void](g.cmd, objc.Sel("commit"))`, `objc.Call(g.cmd, objc.Sel("commit"))`},
		{"newCommandQueue's result taken as a buffer", "g.queue = objc.Call[mtlCommandQueue](", "g.queue = objc.Call[mtlBuffer]("},
		{"an NSUInteger compared with an int", `maxThreads := int(objc.Call[uint](ps, objc.Sel("maxTotalThreadsPerThreadgroup")))`, `maxThreads := objc.Call[uint](ps, objc.Sel("maxTotalThreadsPerThreadgroup"))`},
	} {
		t.Run(m.name, func(t *testing.T) {
			if !bytes.Contains(src, []byte(m.from)) {
				t.Fatalf("gpu_darwin.go no longer contains %q: update the mutation", m.from)
			}
			broken := strings.Replace(string(src), m.from, m.to, 1)
			files, err := b.parse(p, map[string]string{"gpu_darwin.go": broken})
			if err != nil {
				t.Fatal(err)
			}
			_, _, errs := b.check(p, files)
			if len(errs) == 0 {
				t.Fatalf("%s: the type-check reported nothing", m.name)
			}
			t.Logf("reported: %v", errs[0])
		})
	}
}

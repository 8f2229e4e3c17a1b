//go:build !darwin

package metal

// ffi_calllayer_test.go: darwinkit's own call layer (objc.Call and objc/ffi, as built from
// third_party/darwinkit) compiled on Linux against Debian's libffi and run for every message
// this backend sends, natively and as linux/arm64 under qemu-user. The messages come from the
// darwinkit audit (every objc.Call site of this package's darwin build, and any in darwinkit
// functions it reaches); each is replayed with Go values of the same kinds and sizes as the
// real ones, on a stand-in Objective-C runtime whose IMPs record what they receive
// (testdata/calllayer). While each call is inside C, between ffi_prep_cif and ffi_call, a
// helper goroutine allocates guard bytes and runs a garbage collection, as other goroutines
// and the collector may on a Mac, and in every other call the caller's stack is moved, as it
// may be between darwinkit taking the uintptrs it gives C and the call (driver.go says how).
// The stack moves there and nowhere else, and what libffi would read is judged by address
// against the stack's bounds, never by reading the stack left behind: the counts, and that
// the unpatched layer runs to the end, do not depend on the machine's load (an earlier driver,
// whose stack also moved wherever a preemption did a shrink the collector left pending,
// crashed in its own check on a loaded 2-core machine).
//
// Three contracts are checked, which darwinkit v0.5.0 breaks under Go 1.26:
//   - ffi_call stores a whole ffi_arg (8 bytes) at the result address for an integer result
//     narrower than that (aarch64 sysv.S: "uxtb w0, w0; str x0, [x3]"; x86-64 unix64.S:
//     "movzbl %al, %eax; movq %rax, (%rdi)"), and v0.5.0 gives it the address of a 1-byte Go
//     bool for BOOL results (supportsFamily:, hasUnifiedMemory): the other 7 bytes belong to
//     whatever Go's tiny allocator put next. Guard bytes there must survive.
//   - ffi_prep_cif keeps the argument-type array in the cif and ffi_call reads it, and the
//     types it points to, again. Go 1.25+ put v0.5.0's small make([]*ffi.Type, argc+2) on
//     Call's stack, where the heap cif's pointer keeps nothing alive: a struct type made per
//     call (MTLSize, every dispatchThreadgroups:threadsPerThreadgroup:) is freed by a
//     collection during the call. The types libffi reads must be the ones it was prepared
//     with.
//   - What C gets as a uintptr (the type array, the argument array make([]unsafe.Pointer,
//     argc+2), the arguments, the result slot) must not be on the goroutine stack: a stack
//     moved after the uintptr was taken leaves libffi reading freed memory.
//
// The same replays run on the unpatched v0.5.0 source, rebuilt from the copy by reverting
// darwinkitPatch (its two files then hash to v0.5.0's): there each contract must be seen
// broken, so the check is known to catch what it is for.
//
// Invariant: a message this backend sends that darwinkit's call layer delivers wrongly
// (arguments, result, self, _cmd), a guard byte overwritten, a type changed before libffi
// reads it, or a read of the stack left behind fails the test, on either architecture.
// Mutation that would silently break it: replaying a hand-written list instead of the
// audit's (a new message would go unchecked); the test requires the backend's raw sends and
// the BOOL and MTLSize messages among them.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// darwinkitPatch is third_party/darwinkit's patch: in each file, upstream v0.5.0's text and
// the patched text. The test rebuilds the unpatched source by putting upstream's back.
var darwinkitPatch = []struct{ file, upstream, patched string }{
	{"objc/call.go", `	rt := reflect.TypeOf(ret)
	if directPointer(rt) {
		retPtr = unsafe.Pointer(&ret)
	} else {
		var i uintptr
		retPtr = unsafe.Pointer(&i)
	}`, `	rt := reflect.TypeOf(ret)
	// Patched (third_party/darwinkit/README.md): libffi stores an integer result narrower
	// than ffi_arg as a whole ffi_arg (aarch64 sysv.S: "uxtb w0, w0; str x0, [x3]"), so a
	// smaller result (a BOOL) gets an ffi_arg slot, read from its first bytes (little-endian).
	if directPointer(rt) && rt.Size() >= unsafe.Sizeof(ffi.Arg(0)) {
		retPtr = unsafe.Pointer(&ret)
	} else {
		var i ffi.Arg
		retPtr = unsafe.Pointer(&i)
	}`},
	{"objc/ffi/ffi.go", `func PrepCIF(rtype *Type, argtypes []*Type) (*CIF, Status) {
	var cif CIF
	s := C.ffi_prep_cif0(toUintptrT(&cif), DEFAULT_ABI, C.uint(len(argtypes)), toUintptrT(rtype), toUintptrT(&argtypes[0]))
	runtime.KeepAlive(rtype)
	runtime.KeepAlive(argtypes)
	return &cif, s
}`, `// Patched (third_party/darwinkit/README.md): libffi keeps atypes in the cif and reads the
// array, and the types in it, again in every ffi_call, so the cif holds on to them. Kept in
// a heap object, the array escapes: Go 1.25+ would otherwise put a small make of it on the
// caller's stack, where the cif's pointer keeps nothing alive (a struct type made for the
// call could be collected before ffi_call reads it) and a moved stack leaves it behind.
type cifWithTypes struct {
	cif      CIF // first: a *CIF points at the whole object, which keeps argtypes
	argtypes []*Type
}

func PrepCIF(rtype *Type, argtypes []*Type) (*CIF, Status) {
	c := &cifWithTypes{argtypes: argtypes}
	s := C.ffi_prep_cif0(toUintptrT(&c.cif), DEFAULT_ABI, C.uint(len(argtypes)), toUintptrT(rtype), toUintptrT(&argtypes[0]))
	runtime.KeepAlive(rtype)
	runtime.KeepAlive(argtypes)
	return &c.cif, s
}`},
	{"objc/ffi/ffi.go", `func Call(cif *CIF, fn unsafe.Pointer, rvalue unsafe.Pointer, avalues []unsafe.Pointer) {
	C.ffi_call0(`, `func Call(cif *CIF, fn unsafe.Pointer, rvalue unsafe.Pointer, avalues []unsafe.Pointer) {
	// Patched (third_party/darwinkit/README.md): C gets rvalue and avalues as uintptrs, taken
	// before _cgoCheckPointer and the _Cfunc_ prologue, where the stack may still move (grow,
	// or shrink for the GC): they must not be on it. Go 1.25+ puts a small make of avalues
	// on the caller's stack unless it escapes.
	escapeToHeap(rvalue)
	escapeToHeap(avalues)
	C.ffi_call0(`},
	{"objc/ffi/ffi.go", `func toUintptrT[T any](p *T) C.uintptr_t {`, `var heapSink any
var heapSinkOn bool // never set

// escapeToHeap makes the compiler keep x (what it points to) off the stack; it does nothing.
func escapeToHeap[T any](x T) {
	if heapSinkOn {
		heapSink = x
	}
}

func toUintptrT[T any](p *T) C.uintptr_t {`},
}

// v050Sums are the SHA-256 of v0.5.0's objc/call.go and objc/ffi/ffi.go (the module zip's).
var v050Sums = map[string]string{
	"objc/call.go":    "10c823eeafbe596b054be075d8f95dfaf91446507d7a16db8d8f4d42a0999bfc",
	"objc/ffi/ffi.go": "2a6c5bc3dd9af8a83fa4cef1b452afe80210743fd7ff5cb65f5c0d1be94b0b24",
}

// callLayerCalls is how many times each message is sent per run.
const callLayerCalls = 32

// sendSite is one objc.Call the darwin build makes: selector, result and argument types.
type sendSite struct {
	sel   string
	shape string
	ret   types.Type
	args  []types.Type
	nil_  []bool // the argument is nil (untyped or a typed nil pointer)
	at    string
}

func (s sendSite) goSig() string {
	var a []string
	for i, t := range s.args {
		if s.nil_[i] {
			a = append(a, "nil")
		} else {
			a = append(a, types.TypeString(t, shortQualifier))
		}
	}
	return "(" + strings.Join(a, ", ") + ") -> " + types.TypeString(s.ret, shortQualifier)
}

func shortQualifier(p *types.Package) string { return p.Name() }

// backendSends lists every objc.Call reached from this package's darwin build (its tests
// included): in our functions and in each darwinkit function the audit followed.
func backendSends(t *testing.T) []sendSite {
	t.Helper()
	a := auditPackage(t, nil)
	root := map[*ast.FuncDecl]bool{}
	for _, f := range a.rootFiles {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok {
				root[fd] = true
			}
		}
	}
	seen := map[string]bool{}
	var sites []sendSite
	for fn, site := range a.decls {
		if !a.visited[fn] && !root[site.decl] {
			continue
		}
		ast.Inspect(site.decl.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			callee, id := calleeOf(site.info, call)
			if callee == nil || !isObjc(callee.Origin(), "Call") {
				return true
			}
			at := a.b.fset.Position(call.Pos())
			where := filepath.Base(at.Filename) + fmt.Sprintf(":%d", at.Line)
			sel, shape, ok := a.sendShape(site.info, call)
			if !ok {
				t.Errorf("%s: an objc.Call without a constant selector or type argument cannot be replayed", at)
				return true
			}
			s := sendSite{sel: sel, shape: shape.String(), ret: site.info.Instances[id].TypeArgs.At(0), at: where}
			for _, arg := range call.Args[2:] {
				s.args = append(s.args, site.info.Types[arg].Type)
				s.nil_ = append(s.nil_, isNil(site.info, arg))
			}
			if key := s.sel + " " + s.goSig(); !seen[key] {
				seen[key] = true
				sites = append(sites, s)
			}
			return true
		})
	}
	sort.Slice(sites, func(i, j int) bool {
		if sites[i].sel != sites[j].sel {
			return sites[i].sel < sites[j].sel
		}
		return sites[i].goSig() < sites[j].goSig()
	})
	return sites
}

// replayType is how a Go type of the darwin build is replayed: a Go type of the same kind
// and size (what objc.Call looks at) and the C type of the IMP's parameter or result.
type replayType struct {
	kind   string // bool int uint float string unsafeptr ptr obj struct void nil
	goType string
	cType  string
	size   int
	fields []replayType
}

type replayGen struct {
	handle  *types.Interface
	structs []string // Go declarations of the struct types used
	cstruct []string // their C declarations
}

func (g *replayGen) typ(t types.Type) (replayType, error) {
	if b, ok := t.(*types.Basic); ok && b.Kind() == types.UntypedNil {
		return replayType{kind: "nil", cType: "void *", size: 8}, nil
	}
	if types.Implements(t, g.handle) {
		return replayType{kind: "obj", goType: "objc.Object", cType: "void *", size: 8}, nil
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch u.Kind() {
		case types.Bool:
			return replayType{kind: "bool", goType: "bool", cType: "bool", size: 1}, nil
		case types.Int8, types.Int16, types.Int32, types.Int64, types.Int:
			size := map[types.BasicKind]int{types.Int8: 1, types.Int16: 2, types.Int32: 4, types.Int64: 8, types.Int: 8}[u.Kind()]
			return replayType{kind: "int", goType: u.Name(), cType: fmt.Sprintf("int%d_t", size*8), size: size}, nil
		case types.Uint8, types.Uint16, types.Uint32, types.Uint64, types.Uint, types.Uintptr:
			size := map[types.BasicKind]int{types.Uint8: 1, types.Uint16: 2, types.Uint32: 4, types.Uint64: 8, types.Uint: 8, types.Uintptr: 8}[u.Kind()]
			return replayType{kind: "uint", goType: u.Name(), cType: fmt.Sprintf("uint%d_t", size*8), size: size}, nil
		case types.Float32:
			return replayType{kind: "float", goType: "float32", cType: "float", size: 4}, nil
		case types.Float64:
			return replayType{kind: "float", goType: "float64", cType: "double", size: 8}, nil
		case types.String:
			return replayType{kind: "string", goType: "string", cType: "void *", size: 8}, nil
		case types.UnsafePointer:
			return replayType{kind: "unsafeptr", goType: "unsafe.Pointer", cType: "void *", size: 8}, nil
		}
	case *types.Pointer:
		return replayType{kind: "ptr", goType: "*byte", cType: "void *", size: 8}, nil
	case *types.Struct:
		if u.NumFields() == 0 {
			return replayType{kind: "void", goType: "objc.Void", cType: "void"}, nil
		}
		rt := replayType{kind: "struct"}
		var gof, cf []string
		for i := range u.NumFields() {
			f, err := g.typ(u.Field(i).Type())
			if err != nil || (f.kind != "int" && f.kind != "uint" && f.kind != "float" && f.kind != "bool") {
				return replayType{}, fmt.Errorf("struct field %s: only numbers are replayed", u.Field(i).Type())
			}
			rt.fields = append(rt.fields, f)
			rt.size += f.size // fields of one size in practice (MTLSize); checked against C below
			gof = append(gof, fmt.Sprintf("F%d %s", i, f.goType))
			cf = append(cf, fmt.Sprintf("%s f%d;", f.cType, i))
		}
		n := len(g.structs)
		rt.goType = fmt.Sprintf("s%d", n)
		rt.cType = fmt.Sprintf("struct standin_s%d", n)
		g.structs = append(g.structs, fmt.Sprintf("type s%d struct{ %s }", n, strings.Join(gof, "; ")))
		g.cstruct = append(g.cstruct, fmt.Sprintf("struct standin_s%d { %s };\n_Static_assert(sizeof(struct standin_s%d) == %d, \"layout\");", n, strings.Join(cf, " "), n, rt.size))
		return rt, nil
	}
	return replayType{}, fmt.Errorf("no replay for %s", t)
}

// value is a distinct value of rt for seed, as a Go expression and a C expression.
func value(rt replayType, seed int) (goExpr, cExpr string) {
	switch rt.kind {
	case "bool":
		return "true", "true"
	case "int":
		v := map[int]int64{1: -int64(seed%100 + 3), 2: -int64(seed*7 + 300), 4: -int64(seed*0x10001 + 0x12345), 8: -(int64(seed)<<32 | 0x789abcde)}[rt.size]
		return fmt.Sprintf("%s(%d)", rt.goType, v), fmt.Sprintf("(%s)(%dLL)", rt.cType, v)
	case "uint":
		v := map[int]uint64{1: uint64(0x80 | seed%0x7f), 2: uint64(0xbe00 | seed%256), 4: uint64(0xc0de0000 | seed), 8: 0xa5a5000000000000 | uint64(seed)<<8 | 0x3c}[rt.size]
		return fmt.Sprintf("%s(%#x)", rt.goType, v), fmt.Sprintf("(%s)(%#xULL)", rt.cType, v)
	case "float":
		v := float64(seed) + 0.375
		return fmt.Sprintf("%s(%g)", rt.goType, v), fmt.Sprintf("(%s)(%g)", rt.cType, v)
	case "string":
		return fmt.Sprintf("%q", fmt.Sprintf("standin-%d", seed)), fmt.Sprintf("(void *)\"standin-%d\"", seed)
	case "obj":
		return fmt.Sprintf("objc.ObjectFrom(C.standin_object(%d))", seed), fmt.Sprintf("standin_object(%d)", seed)
	case "unsafeptr":
		return fmt.Sprintf("unsafe.Pointer(C.standin_object(%d))", seed), fmt.Sprintf("standin_object(%d)", seed)
	case "ptr":
		return fmt.Sprintf("(*byte)(C.standin_object(%d))", seed), fmt.Sprintf("standin_object(%d)", seed)
	case "struct":
		var gf, cf []string
		for i, f := range rt.fields {
			gv, cv := value(f, seed*8+i)
			gf = append(gf, gv)
			cf = append(cf, cv)
		}
		return rt.goType + "{" + strings.Join(gf, ", ") + "}", "(" + rt.cType + "){" + strings.Join(cf, ", ") + "}"
	case "void":
		return "objc.Void{}", ""
	}
	return "nil", "NULL"
}

// replaySources writes sigs.go and sigs.c: one replay and one IMP per message.
func replaySources(handle *types.Interface, sites []sendSite) (goSrc, cSrc string, err error) {
	g := &replayGen{handle: handle}
	var gb, cb, imps, sels strings.Builder
	for i, s := range sites {
		ret, err := g.typ(s.ret)
		if err != nil {
			return "", "", fmt.Errorf("%s (%s): result: %v", s.sel, s.at, err)
		}
		if ret.kind == "struct" || ret.kind == "nil" {
			return "", "", fmt.Errorf("%s (%s): a %s result is not replayed", s.sel, s.at, ret.kind)
		}
		var params, goArgs, names, record []string
		var decls []string
		for j, at := range s.args {
			rt, err := g.typ(at)
			if err != nil {
				return "", "", fmt.Errorf("%s (%s): argument %d: %v", s.sel, s.at, j, err)
			}
			params = append(params, fmt.Sprintf("%s a%d", rt.cType, j))
			record = append(record, fmt.Sprintf("\tstandin_arg(%d, &a%d, sizeof a%d);\n", j, j, j))
			switch {
			case rt.kind == "nil":
				goArgs = append(goArgs, "nil")
				names = append(names, "nil")
			case s.nil_[j]:
				decls = append(decls, fmt.Sprintf("\t\tvar a%d %s\n", j, rt.goType))
				goArgs = append(goArgs, fmt.Sprintf("a%d", j))
				names = append(names, fmt.Sprintf("a%d", j))
			default:
				gv, _ := value(rt, (i+1)*16+j)
				decls = append(decls, fmt.Sprintf("\t\ta%d := %s\n", j, gv))
				goArgs = append(goArgs, fmt.Sprintf("a%d", j))
				names = append(names, fmt.Sprintf("a%d", j))
			}
		}
		retGo, retC := value(ret, 1000+i)
		fmt.Fprintf(&gb, "\t{imp: %d, sel: %q, shape: %q, goSig: %q, at: %q,\n\t\tsend: func(recv objc.Object) sent {\n%s", i, s.sel, s.shape, s.goSig(), s.at, strings.Join(decls, ""))
		fmt.Fprintf(&gb, "\t\t\tr := objc.Call[%s](%s)\n", ret.goType, strings.Join(append([]string{"recv", fmt.Sprintf("objc.Sel(%q)", s.sel)}, goArgs...), ", "))
		fmt.Fprintf(&gb, "\t\t\treturn sent{args: []any{%s}, got: r, want: %s}\n\t\t}},\n", strings.Join(names, ", "), retGo)
		fmt.Fprintf(&cb, "static %s imp_%d(%s) {\n\tstandin_enter(%d, self, cmd, %d);\n%s", ret.cType, i,
			strings.Join(append([]string{"void *self", "void *cmd"}, params...), ", "), i, len(s.args), strings.Join(record, ""))
		if ret.kind != "void" {
			fmt.Fprintf(&cb, "\treturn %s;\n", retC)
		}
		cb.WriteString("}\n\n")
		fmt.Fprintf(&imps, "(void *)imp_%d, ", i)
		fmt.Fprintf(&sels, "%q, ", s.sel)
	}
	goSrc = "// Generated by ffi_calllayer_test.go: one replay per message the Metal backend sends.\n\npackage main\n\n" +
		"// #include \"standin.h\"\nimport \"C\"\n\nimport (\n\t\"unsafe\"\n\n\t\"github.com/progrium/darwinkit/objc\"\n)\n\n" +
		"var _ unsafe.Pointer\n\n" + strings.Join(g.structs, "\n") + "\n\nvar sigs = []sig{\n" + gb.String() + "}\n"
	cSrc = "// Generated by ffi_calllayer_test.go: one stand-in IMP per message.\n#include \"standin.h\"\n\n" +
		strings.Join(g.cstruct, "\n") + "\n\n" + cb.String() +
		"void *standin_imps[] = {" + imps.String() + "};\nconst char *standin_sels[] = {" + sels.String() + "};\n" +
		fmt.Sprintf("const int standin_nimps = %d;\n", len(sites))
	return goSrc, cSrc, nil
}

// standinDefined are the runtime functions standin.c defines; stubs.c aborts in the rest.
var standinDefined = map[string]bool{
	"Object_GetClass": true, "Objc_GetClass": true, "Class_GetMethodImplementation": true,
	"Class_GetMethodImplementationStret": true, "Selector_SEL_RegisterName": true,
	"Selector_SEL_GetName": true, "to_ns_string": true, "to_c_string": true,
}

var cPrototype = regexp.MustCompile(`^\s*([A-Za-z_][\w\s\*]*?)\b(\w+)\s*\((.*)\)\s*;\s*$`)

// runtimeStubs writes a definition that aborts for every C function the objc package's
// preambles declare (implemented in its .m files on a Mac) that standin.c does not define.
func runtimeStubs(objcDir string) (string, error) {
	var b strings.Builder
	b.WriteString("// Generated by ffi_calllayer_test.go: the Objective-C runtime functions darwinkit's\n" +
		"// objc package declares that objc.Call does not reach. Each aborts.\n" +
		"#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n" +
		"#include <objc/runtime.h>\n#include \"darwinkit/objc/type_convertion.h\"\n\n" +
		"__attribute__((noreturn)) static void stub(const char *name) {\n\tfprintf(stderr, \"standin: %s has no stand-in\\n\", name);\n\tabort();\n}\n\n")
	files, err := filepath.Glob(filepath.Join(objcDir, "*.go"))
	if err != nil {
		return "", err
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return "", err
		}
		pre, _, ok := strings.Cut(string(src), "\nimport \"C\"")
		if !ok {
			continue
		}
		for _, line := range strings.Split(pre, "\n") {
			line, ok := strings.CutPrefix(line, "//")
			if !ok {
				continue
			}
			m := cPrototype.FindStringSubmatch(line)
			if m == nil || standinDefined[m[2]] || strings.HasPrefix(strings.TrimSpace(line), "#") {
				continue
			}
			fmt.Fprintf(&b, "%s%s(%s) { stub(%q); }\n", m[1], m[2], m[3], m[2])
			n++
		}
	}
	if n < 50 {
		return "", fmt.Errorf("only %d C prototypes found in %s's preambles", n, objcDir)
	}
	return b.String(), nil
}

// callLayerModule lays out the replay program in dir: darwinkit's objc and objc/ffi packages
// from srcDir (darwinkit's module root), with upstream's text put back when original, and the
// driver, stand-ins and generated sources.
func callLayerModule(dir, srcDir string, original bool, sigsGo, sigsC string) error {
	copyFile := func(from, to string, edit func(string) (string, error)) error {
		src, err := os.ReadFile(from)
		if err != nil {
			return err
		}
		s := string(src)
		if edit != nil {
			if s, err = edit(s); err != nil {
				return fmt.Errorf("%s: %v", from, err)
			}
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, []byte(s), 0o644)
	}
	dk := filepath.Join(dir, "darwinkit")
	revert := func(rel string) func(string) (string, error) {
		return func(s string) (string, error) {
			if !original {
				return s, nil
			}
			for _, p := range darwinkitPatch {
				if p.file != rel {
					continue
				}
				if strings.Count(s, p.patched) != 1 {
					return "", fmt.Errorf("the patched text is not there once (update darwinkitPatch):\n%s", p.patched)
				}
				s = strings.Replace(s, p.patched, p.upstream, 1)
			}
			if want, ok := v050Sums[rel]; ok {
				sum := sha256.Sum256([]byte(s))
				if got := hex.EncodeToString(sum[:]); got != want {
					return "", fmt.Errorf("with darwinkitPatch reverted, %s is not v0.5.0's (sha256 %s, want %s)", rel, got, want)
				}
			}
			return s, nil
		}
	}
	objcFiles, err := filepath.Glob(filepath.Join(srcDir, "objc", "*"))
	if err != nil {
		return err
	}
	copied := 0
	for _, f := range objcFiles {
		name := filepath.Base(f)
		// objc_cgo.go holds only the Mac's build flags (-x objective-c, the frameworks); the .m
		// files are the Objective-C runtime glue, stood in for by standin.c and stubs.c.
		if name == "objc_cgo.go" || strings.HasSuffix(name, "_test.go") || (!strings.HasSuffix(name, ".go") && name != "type_convertion.h") {
			continue
		}
		if err := copyFile(f, filepath.Join(dk, "objc", name), revert("objc/"+name)); err != nil {
			return err
		}
		copied++
	}
	if copied < 10 {
		return fmt.Errorf("only %d files of darwinkit's objc package in %s", copied, srcDir)
	}
	// objc/ffi: ffi.go as it is but for "-x objective-c" (its preamble is plain C), and
	// ffi.m, which is plain C too, as ffi_m.c.
	err = copyFile(filepath.Join(srcDir, "objc", "ffi", "ffi.go"), filepath.Join(dk, "objc", "ffi", "ffi.go"), func(s string) (string, error) {
		s, err := revert("objc/ffi/ffi.go")(s)
		if err != nil {
			return "", err
		}
		const flags = "// #cgo CFLAGS: -x objective-c -Wno-unguarded-availability-new\n"
		if strings.Count(s, flags) != 1 {
			return "", fmt.Errorf("no %q line", strings.TrimSpace(flags))
		}
		return strings.Replace(s, flags, "// #cgo CFLAGS: -Wno-unguarded-availability-new\n", 1), nil
	})
	if err != nil {
		return err
	}
	if err := copyFile(filepath.Join(srcDir, "objc", "ffi", "ffi.m"), filepath.Join(dk, "objc", "ffi", "ffi_m.c"), nil); err != nil {
		return err
	}
	stubs, err := runtimeStubs(filepath.Join(dk, "objc"))
	if err != nil {
		return err
	}
	files := map[string]string{
		"darwinkit/go.mod": "module github.com/progrium/darwinkit\n\ngo 1.18\n",
		"go.mod":           "module calllayer\n\ngo 1.22\n\nrequire github.com/progrium/darwinkit v0.5.0\n\nreplace github.com/progrium/darwinkit => ./darwinkit\n",
		"sigs.go":          sigsGo,
		"sigs.c":           sigsC,
		"stubs.c":          stubs,
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, name := range []string{"driver.go", "standin.c", "standin.h", "gstack/gstack.go", "gstack/gstack_amd64.s", "gstack/gstack_arm64.s"} {
		if err := copyFile(filepath.Join("testdata", "calllayer", name), filepath.Join(dir, name), nil); err != nil {
			return err
		}
	}
	return nil
}

// callLayerArch is one way to build and run the replays.
type callLayerArch struct {
	goarch string
	cc     string
	cflags string   // besides -I include
	ldflag string   // besides the --wrap flags
	run    []string // the command that runs the binary (its path appended)
	need   []string // programs that must be on $PATH, and the files that must exist
	hint   string
}

func callLayerArches() []callLayerArch {
	native := callLayerArch{goarch: runtime.GOARCH, cc: "gcc", need: []string{"gcc"},
		hint: "apt-get install gcc libffi-dev"}
	switch runtime.GOARCH {
	case "amd64":
		return []callLayerArch{native, {goarch: "arm64", cc: "aarch64-linux-gnu-gcc",
			cflags: "-idirafter /usr/include/aarch64-linux-gnu", ldflag: "-L/usr/lib/aarch64-linux-gnu",
			run:  []string{"qemu-aarch64-static"},
			need: []string{"aarch64-linux-gnu-gcc", "qemu-aarch64-static", "/usr/include/aarch64-linux-gnu/ffi.h", "/usr/lib/aarch64-linux-gnu/libffi.so", "/lib/ld-linux-aarch64.so.1"},
			hint: "dpkg --add-architecture arm64 && apt-get update && apt-get install gcc-aarch64-linux-gnu libffi-dev:arm64 qemu-user-static"}}
	case "arm64":
		return []callLayerArch{native}
	}
	return nil
}

// callLayerResult is one line of the driver's output.
type callLayerResult struct {
	Sel          string `json:"sel"`
	Shape        string `json:"shape"`
	GoSig        string `json:"go"`
	At           string `json:"at"`
	Calls        int    `json:"calls"`
	Windows      int    `json:"windows"`
	GuardsNear   int    `json:"guards_near"`
	GuardsHit    int    `json:"guards_hit"`
	CallsClobber int    `json:"calls_clobbered"`
	TypesDead    int    `json:"types_dead"`
	NoIMP        int    `json:"imp_not_run"`
	WrongSelfCmd int    `json:"wrong_self_or_cmd"`
	WrongArgs    int    `json:"wrong_args"`
	WrongResult  int    `json:"wrong_result"`
	Unexpected   int    `json:"unexpected"`
	Moved        int    `json:"calls_moved"`
	Moves        int    `json:"stack_moves"`
	Unplanned    int    `json:"unplanned_moves"`
	Stale        int    `json:"stale_reads"`
	RNarrow      bool   `json:"result_narrower_than_ffi_arg"`
	FirstProblem string `json:"first_problem"`
	TypesWhat    string `json:"types_what"`
	StaleWhat    string `json:"stale_what"`
}

func (r callLayerResult) clean() bool {
	return r.Windows == r.Calls && r.GuardsNear == 0 && r.GuardsHit == 0 && r.TypesDead == 0 && r.Stale == 0 &&
		r.NoIMP == 0 && r.WrongSelfCmd == 0 && r.WrongArgs == 0 && r.WrongResult == 0 && r.Unexpected == 0 &&
		r.Moved > 0 && r.Moves == r.Moved && r.Unplanned == 0
}

func (r callLayerResult) String() string {
	s := fmt.Sprintf("%-45s %-32s %d calls, %d windows, %d with %d stack moves (%d elsewhere); guards in the ffi_arg %d, overwritten %d (in %d calls); types changed before ffi_call %d; reads of the left stack %d",
		r.Sel, r.Shape, r.Calls, r.Windows, r.Moved, r.Moves, r.Unplanned, r.GuardsNear, r.GuardsHit, r.CallsClobber, r.TypesDead, r.Stale)
	if n := r.NoIMP + r.WrongSelfCmd + r.WrongArgs + r.WrongResult + r.Unexpected; n > 0 {
		s += fmt.Sprintf("; wrong: IMP %d, self/_cmd %d, args %d, result %d, unexpected %d (%s)", r.NoIMP, r.WrongSelfCmd, r.WrongArgs, r.WrongResult, r.Unexpected, r.FirstProblem)
	}
	for _, what := range []string{r.TypesWhat, r.StaleWhat} {
		if what != "" {
			s += " (" + what + ")"
		}
	}
	return s
}

// runCallLayer builds the replays in dir for arch and runs them.
func runCallLayer(t *testing.T, dir string, arch callLayerArch) ([]callLayerResult, error) {
	t.Helper()
	bin := filepath.Join(dir, "calllayer")
	// The include directory is this package's testdata, not dir: with -trimpath and flags that
	// name no temporary directory, go build's cache holds the packages from one run to the next
	// (runtime/cgo and the two darwinkit builds: 10-40 s a run saved on a loaded 2-core machine).
	include, err := filepath.Abs(filepath.Join("testdata", "calllayer", "include"))
	if err != nil {
		return nil, err
	}
	build := exec.Command(goTool(), "build", "-trimpath", "-ldflags=-linkmode=external", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch.goarch, "CGO_ENABLED=1", "CC="+arch.cc,
		"GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local",
		"CGO_CFLAGS=-O2 -g -I"+include+" "+arch.cflags,
		"CGO_LDFLAGS=-O2 -g -Wl,--wrap=ffi_prep_cif -Wl,--wrap=ffi_call "+arch.ldflag)
	start := time.Now()
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("building the replays for %s: %v\n%s", arch.goarch, err, out)
	}
	built := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	argv := append(append([]string{}, arch.run...), bin, fmt.Sprintf("-n=%d", callLayerCalls))
	run := exec.CommandContext(ctx, argv[0], argv[1:]...)
	// clobberfree: what a collection frees is filled with 0xdeadbeef. gcshrinkstackoff and
	// adaptivestackstart: the stack moves only where the driver moves it (driver.go).
	run.Env = append(os.Environ(), "GODEBUG=clobberfree=1,gcshrinkstackoff=1,adaptivestackstart=0")
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	start = time.Now()
	err = run.Run()
	t.Logf("%s: built in %v, ran in %v", arch.goarch, built.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	var res []callLayerResult
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var r callLayerResult
		if derr := dec.Decode(&r); derr != nil {
			return res, fmt.Errorf("reading the replays' output: %v", derr)
		}
		res = append(res, r)
	}
	if err != nil {
		return res, fmt.Errorf("the replays on %s failed after %d messages: %v\n%s", arch.goarch, len(res), err, tail(stderr.String(), 3000))
	}
	return res, nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

func TestDarwinkitCallLayer(t *testing.T) {
	if os.Getenv("TS_EMULATED") != "" {
		// make test-arm64: this binary is emulated and the host's gcc builds amd64; the native
		// pass of make test has run both architectures, arm64 under qemu.
		t.Skip("the call layer runs in the native pass (both architectures)")
	}
	sites := backendSends(t)
	if t.Failed() {
		return
	}
	want := map[string]bool{ // the raw sends, the BOOL results, MTLSize by value
		"newComputePipelineStateWithFunction:error:": false, "newBufferWithBytesNoCopy:length:options:deallocator:": false,
		"setComputePipelineState:": false, "setBuffer:offset:atIndex:": false, "supportsFamily:": false,
		"hasUnifiedMemory": false, "dispatchThreadgroups:threadsPerThreadgroup:": false,
	}
	for _, s := range sites {
		if _, ok := want[s.sel]; ok {
			want[s.sel] = true
		}
	}
	for sel, found := range want {
		if !found {
			t.Errorf("%s is not among the %d messages the audit found: the replay list is not the backend's", sel, len(sites))
		}
	}
	b := darwinOrFatal(t)
	var srcDir string
	for _, p := range b.list {
		if p.ImportPath == objcPath {
			srcDir = filepath.Dir(p.Dir)
		}
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if rel, err := filepath.Rel(repo, srcDir); err != nil || rel != filepath.Join("third_party", "darwinkit") {
		t.Fatalf("the darwin build reads darwinkit from %s, not from third_party/darwinkit (the replace in go.mod)", srcDir)
	}
	audit, err := newDarwinkitAudit(b)
	if err != nil {
		t.Fatal(err)
	}
	sigsGo, sigsC, err := replaySources(audit.handle, sites)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d messages to replay, from the audit", len(sites))

	arches := callLayerArches()
	if len(arches) == 0 {
		t.Fatalf("no way to run the call layer on %s", runtime.GOARCH)
	}
	for _, arch := range arches {
		t.Run(arch.goarch, func(t *testing.T) {
			for _, need := range arch.need {
				if strings.HasPrefix(need, "/") {
					if _, err := os.Stat(need); err != nil {
						t.Fatalf("%s is missing: %s", need, arch.hint)
					}
				} else if _, err := exec.LookPath(need); err != nil {
					t.Fatalf("%s is not on $PATH: %s", need, arch.hint)
				}
			}
			if _, err := os.Stat("/usr/include/x86_64-linux-gnu/ffi.h"); err != nil && arch.goarch == "amd64" {
				t.Fatalf("no libffi headers: %s", arch.hint)
			}
			results := map[bool][]callLayerResult{}
			for _, original := range []bool{false, true} {
				name := map[bool]string{false: "third_party/darwinkit", true: "v0.5.0 (darwinkitPatch reverted)"}[original]
				dir := t.TempDir()
				if err := callLayerModule(dir, srcDir, original, sigsGo, sigsC); err != nil {
					t.Fatal(err)
				}
				// One run each, to the end: the driver moves the stack only where it checks what
				// libffi would read, and skips the call then (driver.go), so the unpatched layer
				// is caught, not crashed, whatever the machine's load.
				res, err := runCallLayer(t, dir, arch)
				if err != nil {
					t.Errorf("%s: %v", name, err)
				}
				if len(res) != len(sites) && err == nil {
					t.Errorf("%s: %d results for %d messages", name, len(res), len(sites))
				}
				t.Logf("%s on %s:", name, arch.goarch)
				for _, r := range res {
					t.Logf("  %s", r)
				}
				results[original] = res
			}
			for _, r := range results[false] {
				if !r.clean() || r.Calls != callLayerCalls {
					t.Errorf("third_party/darwinkit: %s", r)
				}
			}
			// The unpatched source must be caught breaking each contract.
			var boolCalls, clobbered, structCalls, dead, moved, stale int
			for _, r := range results[true] {
				if r.Unplanned != 0 || r.Moves != r.Moved || r.Windows != r.Calls {
					t.Errorf("v0.5.0: %s: the stack moved other than where the driver moves it, or a window was missed", r)
				}
				if r.RNarrow {
					boolCalls += r.Calls - r.Moved
					clobbered += r.CallsClobber
				}
				if strings.Contains(r.Shape, "{") {
					structCalls += r.Calls - r.Moved
					dead += r.TypesDead
				}
				moved += r.Moved
				stale += r.Stale
			}
			t.Logf("v0.5.0 on %s: %d of %d calls with a narrow integer result overwrote guard bytes past the result; %d of %d calls with a struct argument had its type freed before libffi read it; %d of %d calls whose stack moved would have had libffi read the old stack",
				arch.goarch, clobbered, boolCalls, dead, structCalls, stale, moved)
			if boolCalls == 0 || clobbered == 0 {
				t.Errorf("v0.5.0: no guard byte past a BOOL result was overwritten (%d calls): the check does not catch the 1-byte result slot", boolCalls)
			}
			if structCalls == 0 || dead == 0 {
				t.Errorf("v0.5.0: no struct argument type changed before ffi_call (%d calls): the check does not catch the collected type", structCalls)
			}
			if moved == 0 || stale == 0 {
				t.Errorf("v0.5.0: libffi never read the stack left behind (%d calls moved): the check does not catch the stack-allocated arrays", moved)
			}
		})
	}
}

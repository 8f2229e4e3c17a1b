//go:build !darwin

package metal

// darwinkit_audit_test.go: what the type-check cannot see. darwinkit's generated wrappers
// are well typed and still fail at run time: a protocol-typed argument goes through
// objc.WrapAsProtocol[T], which panics unless T is an interface (and with an interface T it
// hands Metal a Go-backed stand-in, not the object), and a Go func argument becomes a heap
// block whose dispose path frees and then reads its descriptor, called back on whatever
// thread Metal releases the object. So this audit follows every darwinkit function the
// darwin build of this package reaches — through darwinkit's own source, to a fixed point —
// and reports each path from our code to objc.WrapAsProtocol or to a Go func handed to
// objc's message-sending functions. The messages we send ourselves with objc.Call on raw
// selectors are held to darwinkit's generated bindings: the selector must exist there, with
// the same number of arguments and the same C kinds (pointer, NSUInteger, struct, ...) for
// every argument and the result. A few messages Apple declares are missing from darwinkit
// v0.5.0's bindings (appleOnlySelectors: the macOS 15 math options); those are held to Apple's
// declaration instead, and may be sent only inside an `if x.RespondsToSelector(objc.Sel(s))`
// for the same selector (an older macOS would otherwise raise "unrecognized selector").
//
// Invariant: any reachable WrapAsProtocol, Go-func-to-block conversion or raw send that
// matches no binding fails TestDarwinkitAudit. Mutation that would silently break it:
// following only the functions this package calls directly — the WrapAsProtocol calls sit
// one level down, inside the generated methods, and nothing would be reported; the mutants
// below put darwinkit's own wrappers back and must be caught.

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const (
	darwinkitPath = "github.com/progrium/darwinkit"
	objcPath      = darwinkitPath + "/objc"
	metalPkgPath  = "github.com/turbospark/inspector/metal"
)

// declSite is a function declared outside the standard library, with its package's types.
type declSite struct {
	decl *ast.FuncDecl
	info *types.Info
}

// callShape is the C signature a message is sent with: result kind and argument kinds.
type callShape struct {
	ret  string
	args []string
	at   string // where darwinkit sends it
}

func (s callShape) String() string {
	return fmt.Sprintf("(%s) -> %s", strings.Join(s.args, ", "), s.ret)
}

type auditFinding struct {
	what  string
	where string
	chain []string // from a function of this package down to the call
}

func (f auditFinding) String() string {
	return fmt.Sprintf("%s at %s\n\treached by %s", f.what, f.where, strings.Join(f.chain, " -> "))
}

type darwinkitAudit struct {
	b         *darwinBuild
	decls     map[*types.Func]declSite
	handle    *types.Interface // objc.Handle: what darwinkit passes as a raw pointer
	objcDir   string           // objc's source directory
	shapes    map[string][]callShape
	visited   map[*types.Func]bool
	findings  []auditFinding
	followed  int            // darwinkit functions walked
	rawSends  int            // objc.Call sites of this package checked against the bindings
	dynamic   map[string]int // interface methods called inside darwinkit (not followed; see the test)
	rootFiles []*ast.File
	guarded   map[*ast.CallExpr]map[string]bool // calls inside if x.RespondsToSelector(objc.Sel(s)) { ... }: s
}

// appleOnlySelectors are messages Apple's headers declare that darwinkit v0.5.0's bindings
// lack, with the C shape of Apple's declaration.
var appleOnlySelectors = map[string]callShape{
	// MTLCompileOptions (macOS 15): @property MTLMathMode mathMode; NS_ENUM(NSInteger, MTLMathMode)
	"setMathMode:": {ret: "void", args: []string{"s64"}, at: "Metal/MTLLibrary.h (macOS 15)"},
	// @property MTLMathFloatingPointFunctions mathFloatingPointFunctions; NS_ENUM(NSInteger, ...)
	"setMathFloatingPointFunctions:": {ret: "void", args: []string{"s64"}, at: "Metal/MTLLibrary.h (macOS 15)"},
}

// indexGuards records, for every call of files inside the body of an if whose condition asks
// RespondsToSelector(objc.Sel(s)), that it is guarded for s.
func (a *darwinkitAudit) indexGuards(files []*ast.File, info *types.Info) {
	a.guarded = map[*ast.CallExpr]map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ifs, ok := n.(*ast.IfStmt)
			if !ok {
				return true
			}
			var sels []string
			ast.Inspect(ifs.Cond, func(n ast.Node) bool {
				if u, ok := n.(*ast.UnaryExpr); ok && u.Op == token.NOT {
					return false // "if !x.RespondsToSelector(...)" guards nothing
				}
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 1 {
					return true
				}
				if fn, _ := calleeOf(info, call); fn != nil && fn.Name() == "RespondsToSelector" && inDarwinkit(fn) {
					if sel, ok := selectorOf(info, call.Args[0]); ok {
						sels = append(sels, sel)
					}
				}
				return true
			})
			ast.Inspect(ifs.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok {
					for _, sel := range sels {
						if a.guarded[call] == nil {
							a.guarded[call] = map[string]bool{}
						}
						a.guarded[call][sel] = true
					}
				}
				return true
			})
			return true
		})
	}
}

// newDarwinkitAudit indexes every non-standard function of the build and darwinkit's own
// objc.Call sites (selector -> shapes).
func newDarwinkitAudit(b *darwinBuild) (*darwinkitAudit, error) {
	a := &darwinkitAudit{b: b, decls: map[*types.Func]declSite{}, shapes: map[string][]callShape{}, visited: map[*types.Func]bool{}, dynamic: map[string]int{}}
	objc := b.checked[objcPath]
	if objc == nil {
		return nil, fmt.Errorf("%s was not type-checked", objcPath)
	}
	a.handle = objc.Scope().Lookup("Handle").Type().Underlying().(*types.Interface)
	for _, p := range b.list {
		if p.ImportPath == objcPath {
			a.objcDir = p.Dir + string(filepath.Separator)
		}
	}
	if a.objcDir == "" {
		return nil, fmt.Errorf("%s is not in the darwin list", objcPath)
	}
	for path, files := range b.files {
		info := b.infos[path]
		for _, f := range files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					if fn, ok := info.Defs[fd.Name].(*types.Func); ok {
						a.decls[fn] = declSite{fd, info}
					}
				}
			}
			if strings.HasPrefix(path, darwinkitPath+"/macos/") {
				a.indexSends(f, info)
			}
		}
	}
	if len(a.shapes) == 0 {
		return nil, fmt.Errorf("no objc.Call sites found in darwinkit's bindings")
	}
	return a, nil
}

// indexSends records the shape of every objc.Call[T](recv, objc.Sel("..."), args...) in f.
func (a *darwinkitAudit) indexSends(f *ast.File, info *types.Info) {
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, shape, ok := a.sendShape(info, call); ok {
			shape.at = a.b.fset.Position(call.Pos()).String()
			a.shapes[sel] = append(a.shapes[sel], shape)
		}
		return true
	})
}

// sendShape reads an objc.Call site: its selector (a constant) and C shape.
func (a *darwinkitAudit) sendShape(info *types.Info, call *ast.CallExpr) (string, callShape, bool) {
	fn, id := calleeOf(info, call)
	if fn == nil || !isObjc(fn, "Call") || len(call.Args) < 2 {
		return "", callShape{}, false
	}
	sel, ok := selectorOf(info, call.Args[1])
	if !ok {
		return "", callShape{}, false
	}
	inst, ok := info.Instances[id]
	if !ok || inst.TypeArgs.Len() != 1 {
		return "", callShape{}, false
	}
	shape := callShape{ret: a.kind(inst.TypeArgs.At(0))}
	for _, arg := range call.Args[2:] {
		k := a.kind(info.Types[arg].Type)
		if isNil(info, arg) {
			k = "nil" // a null pointer: fits a pointer or a block parameter
		}
		shape.args = append(shape.args, k)
	}
	return sel, shape, true
}

// isNil says whether e is nil or unsafe.Pointer(nil).
func isNil(info *types.Info, e ast.Expr) bool {
	if info.Types[e].IsNil() {
		return true
	}
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	return ok && len(call.Args) == 1 && info.Types[call.Fun].IsType() &&
		types.Identical(info.Types[call.Fun].Type, types.Typ[types.UnsafePointer]) && info.Types[call.Args[0]].IsNil()
}

// fits says whether our argument kinds match a binding's ("nil" fits a pointer or block).
func fits(ours, binding []string) bool {
	if len(ours) != len(binding) {
		return false
	}
	for i := range ours {
		if ours[i] != binding[i] && !(ours[i] == "nil" && (binding[i] == "ptr" || binding[i] == "block")) {
			return false
		}
	}
	return true
}

// selectorOf returns s for an expression objc.Sel("s") with a constant s.
func selectorOf(info *types.Info, e ast.Expr) (string, bool) {
	call, ok := ast.Unparen(e).(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	if fn, _ := calleeOf(info, call); fn == nil || !isObjc(fn, "Sel") {
		return "", false
	}
	tv := info.Types[call.Args[0]]
	if tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// calleeOf resolves a call's static callee (functions and concrete methods; generic ones
// through their instantiation) and the identifier that names it.
func calleeOf(info *types.Info, call *ast.CallExpr) (*types.Func, *ast.Ident) {
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	default:
		return nil, nil
	}
	fn, _ := info.Uses[id].(*types.Func)
	return fn, id
}

func isObjc(fn *types.Func, name string) bool {
	return fn.Pkg() != nil && fn.Pkg().Path() == objcPath && fn.Name() == name && fn.Type().(*types.Signature).Recv() == nil
}

func inDarwinkit(fn *types.Func) bool {
	return fn.Pkg() != nil && strings.HasPrefix(fn.Pkg().Path(), darwinkitPath+"/")
}

// kind is the C kind objc passes a Go value of type t as (objc's toFFIType, written out).
func (a *darwinkitAudit) kind(t types.Type) string {
	if t == nil {
		return "invalid"
	}
	if b, ok := t.(*types.Basic); ok && b.Kind() == types.UntypedNil {
		return "ptr"
	}
	if types.Implements(t, a.handle) {
		return "ptr" // a struct or interface holding an object is passed as its pointer
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch u.Kind() {
		case types.Bool, types.Uint8:
			return "u8"
		case types.Int8:
			return "s8"
		case types.Int16:
			return "s16"
		case types.Int32:
			return "s32"
		case types.Int, types.Int64:
			return "s64"
		case types.Uint16:
			return "u16"
		case types.Uint32:
			return "u32"
		case types.Uint, types.Uint64, types.Uintptr:
			return "u64"
		case types.Float32:
			return "f32"
		case types.Float64:
			return "f64"
		case types.String, types.UnsafePointer:
			return "ptr"
		}
	case *types.Pointer, *types.Slice, *types.Map:
		return "ptr"
	case *types.Signature:
		return "block"
	case *types.Struct:
		if u.NumFields() == 0 {
			return "void"
		}
		var fields []string
		for i := range u.NumFields() {
			ft := u.Field(i).Type()
			if arr, ok := ft.Underlying().(*types.Array); ok {
				for range arr.Len() {
					fields = append(fields, a.kind(arr.Elem()))
				}
				continue
			}
			fields = append(fields, a.kind(ft))
		}
		return "{" + strings.Join(fields, ",") + "}"
	}
	return "invalid(" + t.String() + ")"
}

// run walks every function of the root files and, from them, every darwinkit function
// reached.
func (a *darwinkitAudit) run(files []*ast.File, info *types.Info) {
	a.rootFiles = files
	a.indexGuards(files, info)
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			a.walk(declSite{fd, info}, []string{"metal." + funcName(fd)}, true)
		}
	}
}

func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	recv := fd.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	switch r := recv.(type) {
	case *ast.Ident:
		return r.Name + "." + fd.Name.Name
	case *ast.IndexExpr:
		if id, ok := r.X.(*ast.Ident); ok {
			return id.Name + "." + fd.Name.Name
		}
	}
	return fd.Name.Name
}

// walk checks every call in site's body and follows the darwinkit ones.
func (a *darwinkitAudit) walk(site declSite, chain []string, ours bool) {
	ast.Inspect(site.decl.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		fn, id := calleeOf(site.info, call)
		if fn == nil {
			return true
		}
		a.checkCall(site, call, fn, id, chain, ours)
		if !inDarwinkit(fn) {
			return true
		}
		if sig := fn.Type().(*types.Signature); sig.Recv() != nil && types.IsInterface(sig.Recv().Type()) {
			a.dynamic[shortName(fn)]++
			return true
		}
		origin := fn.Origin()
		if a.visited[origin] {
			return true
		}
		a.visited[origin] = true
		if next, ok := a.decls[origin]; ok {
			a.followed++
			a.walk(next, append(chain[:len(chain):len(chain)], shortName(origin)), false)
		}
		return true
	})
}

func shortName(fn *types.Func) string {
	name := fn.Name()
	if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
		t := recv.Type()
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok {
			name = n.Obj().Name() + "." + name
		}
	}
	path := fn.Pkg().Path()
	if rest, ok := strings.CutPrefix(path, darwinkitPath+"/"); ok {
		return "darwinkit/" + rest + "." + name
	}
	return filepath.Base(path) + "." + name
}

// checkCall reports the calls that fail at run time, and holds our raw sends to the
// bindings.
func (a *darwinkitAudit) checkCall(site declSite, call *ast.CallExpr, fn *types.Func, id *ast.Ident, chain []string, ours bool) {
	info := site.info
	where := a.b.fset.Position(call.Pos()).String()
	report := func(format string, args ...any) {
		a.findings = append(a.findings, auditFinding{what: fmt.Sprintf(format, args...), where: where, chain: chain})
	}
	origin := fn.Origin()
	if origin.Pkg() != nil && origin.Pkg().Path() == objcPath && origin.Name() == "WrapAsProtocol" {
		targ := "?"
		if inst, ok := info.Instances[id]; ok && inst.TypeArgs.Len() == 1 {
			targ = inst.TypeArgs.At(0).String()
			if !types.IsInterface(inst.TypeArgs.At(0)) {
				report("objc.WrapAsProtocol[%s] panics (\"generic type T should be interface type\")", targ)
				return
			}
		}
		report("objc.WrapAsProtocol[%s] sends a Go-backed stand-in, not the object itself", targ)
		return
	}
	if origin.Pkg() != nil && origin.Pkg().Path() == objcPath {
		// objc's own argument conversion makes blocks only from func values it is given;
		// those are reported where they are given. Outside objc, making one is the finding.
		inObjc := strings.HasPrefix(a.b.fset.Position(site.decl.Pos()).Filename, a.objcDir)
		if (origin.Name() == "CreateMallocBlock" || origin.Name() == "CreateGlobalBlock") && !inObjc {
			report("objc.%s turns a Go func into an Objective-C block", origin.Name())
			return
		}
		sig := fn.Type().(*types.Signature)
		for i, arg := range call.Args {
			at := info.Types[arg].Type
			if at == nil {
				continue
			}
			if _, isFunc := at.Underlying().(*types.Signature); !isFunc {
				continue
			}
			if types.IsInterface(paramType(sig, i)) {
				report("a Go func (%s) passed to objc.%s becomes an Objective-C block (freed, then read, on Metal's thread); pass nil or a C function", info.Types[arg].Type, origin.Name())
			}
		}
	}
	if ours && isObjc(origin, "Call") {
		a.checkRawSend(info, call, report)
	}
}

// paramType is the type of the parameter argument i binds to (variadic included).
func paramType(sig *types.Signature, i int) types.Type {
	params := sig.Params()
	if sig.Variadic() && i >= params.Len()-1 {
		return params.At(params.Len() - 1).Type().(*types.Slice).Elem()
	}
	if i < params.Len() {
		return params.At(i).Type()
	}
	return types.Typ[types.Invalid]
}

// checkRawSend holds one of our objc.Call sites to darwinkit's bindings of the selector.
func (a *darwinkitAudit) checkRawSend(info *types.Info, call *ast.CallExpr, report func(string, ...any)) {
	a.rawSends++
	sel, shape, ok := a.sendShape(info, call)
	if !ok {
		report("objc.Call without a constant selector objc.Sel(\"...\") and one type argument: cannot be checked")
		return
	}
	if want := strings.Count(sel, ":"); want != len(shape.args) {
		report("%q takes %d arguments, objc.Call passes %d", sel, want, len(shape.args))
		return
	}
	known := a.shapes[sel]
	if apple, ok := appleOnlySelectors[sel]; ok && len(known) == 0 {
		if !a.guarded[call][sel] {
			report("%q (not in darwinkit's bindings) sent without a respondsToSelector: guard for it", sel)
		}
		if shape.ret != apple.ret || !fits(shape.args, apple.args) {
			report("%q sent as %v; Apple declares it as %v (%s)", sel, shape, apple, apple.at)
		}
		return
	}
	if len(known) == 0 {
		report("%q is not sent anywhere in darwinkit's bindings (misspelt?)", sel)
		return
	}
	for _, k := range known {
		if k.ret == shape.ret && fits(shape.args, k.args) {
			return
		}
	}
	report("%q sent as %v; darwinkit's bindings send it as %v (%s)", sel, shape, known[0], known[0].at)
}

// auditPackage audits the darwin build of this package (its test variant, which includes
// metal_darwin_test.go), optionally with one file's source replaced.
func auditPackage(t *testing.T, replace map[string]string) *darwinkitAudit {
	t.Helper()
	b := darwinOrFatal(t)
	a, err := newDarwinkitAudit(b)
	if err != nil {
		t.Fatal(err)
	}
	var p *listedPackage
	for _, q := range b.list {
		if q.ImportPath == metalPkgPath || (p == nil || p.ImportPath == metalPkgPath) && strings.HasPrefix(q.ImportPath, metalPkgPath+" [") {
			p = q
		}
	}
	if p == nil {
		t.Fatal("the metal package is not in the darwin list")
	}
	files, info := b.files[p.ImportPath], b.infos[p.ImportPath]
	if replace != nil {
		var err error
		if files, err = b.parse(p, replace); err != nil {
			t.Fatal(err)
		}
		var errs []error
		if _, info, errs = b.check(p, files); len(errs) > 0 {
			t.Fatalf("the mutant does not type-check: %v", errs[0])
		}
	}
	a.run(files, info)
	return a
}

func TestDarwinkitAudit(t *testing.T) {
	a := auditPackage(t, nil)
	t.Logf("followed %d darwinkit functions from this package (interface calls inside darwinkit, not followed: %v); %d raw sends checked against %d selectors of darwinkit's bindings",
		a.followed, a.dynamic, a.rawSends, len(a.shapes))
	for _, f := range a.findings {
		t.Error(f)
	}
	// Interface calls are not followed: only the Ptr accessor of objc.Handle may be among
	// them (it reads a field); anything else could hide a path and must be looked at.
	for name := range a.dynamic {
		if name != "darwinkit/objc.Handle.Ptr" {
			t.Errorf("an interface call inside darwinkit the audit does not follow: %s", name)
		}
	}
	if a.followed < 20 {
		t.Errorf("only %d darwinkit functions followed: the walk does not reach into darwinkit", a.followed)
	}
}

// TestDarwinkitAuditCatches puts back each call that fails at run time on a Mac, one at a
// time, and the audit must report it.
func TestDarwinkitAuditCatches(t *testing.T) {
	src, err := os.ReadFile("gpu_darwin.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct{ name, from, to, want string }{
		{"darwinkit's newComputePipelineState wrapper",
			`objc.Call[mtl.ComputePipelineStateObject](dev, objc.Sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(errOut))`,
			`dev.NewComputePipelineStateWithFunctionError(fn, unsafe.Pointer(errOut))`,
			"WrapAsProtocol[github.com/progrium/darwinkit/macos/metal.FunctionObject] panics"},
		{"darwinkit's setComputePipelineState wrapper",
			`objc.Call[objc.Void](g.enc, objc.Sel("setComputePipelineState:"), p.state)`,
			`g.enc.SetComputePipelineState(p.state)`,
			"WrapAsProtocol[github.com/progrium/darwinkit/macos/metal.ComputePipelineStateObject] panics"},
		{"darwinkit's setBuffer:offset:atIndex: wrapper",
			`objc.Call[objc.Void](g.enc, objc.Sel("setBuffer:offset:atIndex:"), b.Handle.(mtl.BufferObject), uint(b.Offset), uint(i))`,
			`g.enc.SetBufferOffsetAtIndex_(b.Handle.(mtl.BufferObject), uint(b.Offset), uint(i))`,
			"WrapAsProtocol[github.com/progrium/darwinkit/macos/metal.BufferObject] panics"},
		{"a Go func as the no-copy deallocator",
			`objc.Call[mtl.BufferObject](g.ctx.device, objc.Sel("newBufferWithBytesNoCopy:length:options:deallocator:"), unsafe.Pointer(&mem[0]), uint(n), mtl.ResourceStorageModeShared, unsafe.Pointer(nil))`,
			`g.ctx.device.NewBufferWithBytesNoCopyLengthOptionsDeallocator(unsafe.Pointer(&mem[0]), uint(n), mtl.ResourceStorageModeShared, func(unsafe.Pointer, uint) {})`,
			"becomes an Objective-C block"},
		{"a misspelt selector",
			`objc.Sel("setComputePipelineState:")`, `objc.Sel("setComputePipeline:")`,
			`"setComputePipeline:" is not sent anywhere in darwinkit's bindings`},
		{"an offset passed as a 32-bit int",
			`uint(b.Offset), uint(i))`, `int32(b.Offset), uint(i))`,
			`"setBuffer:offset:atIndex:" sent as (ptr, s32, u64) -> void`},
		{"setBufferOffset:atIndex: for setBuffer:offset:atIndex:",
			`objc.Sel("setBuffer:offset:atIndex:")`, `objc.Sel("setBufferOffset:atIndex:")`,
			`"setBufferOffset:atIndex:" takes 2 arguments, objc.Call passes 3`},
		{"a Go func for the nil deallocator in a raw send",
			`mtl.ResourceStorageModeShared, unsafe.Pointer(nil))`, `mtl.ResourceStorageModeShared, func(unsafe.Pointer, uint) {})`,
			"passed to objc.Call becomes an Objective-C block"},
		{"setMathFloatingPointFunctions: guarded by another selector",
			`if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {`,
			`if opts.RespondsToSelector(objc.Sel("setMathMode:")) {`,
			`"setMathFloatingPointFunctions:" (not in darwinkit's bindings) sent without a respondsToSelector: guard`},
		{"setMathMode: sent unguarded",
			`	if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), int(mathModeSafe))
	} else {
		opts.SetFastMathEnabled(false)
	}`,
			`	objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), int(mathModeSafe))`,
			`"setMathMode:" (not in darwinkit's bindings) sent without a respondsToSelector: guard`},
		{"setMathFloatingPointFunctions: under a negated guard",
			`if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {`,
			`if !opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {`,
			`"setMathFloatingPointFunctions:" (not in darwinkit's bindings) sent without a respondsToSelector: guard`},
		{"mathMode as a 32-bit value",
			`objc.Sel("setMathMode:"), int(mathModeSafe))`, `objc.Sel("setMathMode:"), uint32(mathModeSafe))`,
			`"setMathMode:" sent as (u32) -> void; Apple declares it as (s64) -> void`},
		{"an argument too few",
			`mtl.ResourceStorageModeShared, unsafe.Pointer(nil))`, `mtl.ResourceStorageModeShared)`,
			`takes 4 arguments, objc.Call passes 3`},
	} {
		t.Run(m.name, func(t *testing.T) {
			if !strings.Contains(string(src), m.from) {
				t.Fatalf("gpu_darwin.go no longer contains %q: update the mutant", m.from)
			}
			a := auditPackage(t, map[string]string{"gpu_darwin.go": strings.Replace(string(src), m.from, m.to, 1)})
			var got []string
			for _, f := range a.findings {
				got = append(got, f.String())
			}
			sort.Strings(got)
			for _, g := range got {
				if strings.Contains(g, m.want) {
					t.Logf("reported: %s", g)
					return
				}
			}
			t.Errorf("the audit did not report %q; it reported %d findings: %v", m.want, len(got), got)
		})
	}
}

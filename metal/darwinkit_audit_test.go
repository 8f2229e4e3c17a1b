//go:build !darwin

package metal

// darwinkit_audit_test.go: what the type-check cannot see. objc.Call takes its arguments as
// ...any and its result type as a type argument, so a message sent with the wrong C types
// type-checks; and darwinkit's objc package has calls that are well typed and still fail at
// run time: objc.WrapAsProtocol[T] panics unless T is an interface (and with an interface T
// it hands Metal a Go-backed stand-in, not the object), and a Go func argument becomes a heap
// block whose dispose path frees and then reads its descriptor, called back on whatever
// thread Metal releases the object. (darwinkit's generated bindings, which used to be
// vendored, reached both: their wrappers of protocol-typed arguments and of blocks.)
//
// So this audit holds every objc.Call of this package's darwin build to declaredSelectors,
// the shape Apple declares for each selector the backend sends: the selector must be there,
// with the same number of arguments and the same C kinds (pointer, NSUInteger, BOOL, struct,
// block, ...) for every argument and the result; a selector newer than the oldest macOS the
// backend runs on (minMacOS of gpu_darwin.go) may be sent only inside an
// `if x.RespondsToSelector(objc.Sel(s))` for the same selector (an older macOS would otherwise
// raise "unrecognized selector"); and every declared selector must be sent (the table is the
// backend's, not a wish list). It also follows every darwinkit function the build reaches —
// through darwinkit's own source, to a fixed point — and reports each path from our code to
// objc.WrapAsProtocol or to a Go func handed to objc's message-sending functions.
//
// Invariant: any reachable WrapAsProtocol, Go-func-to-block conversion, or raw send that is
// not in declaredSelectors, sends another shape or a newer selector unguarded fails
// TestDarwinkitAudit. Mutation that would silently break it: deriving the kinds from the
// types the call site declares instead of the C kinds objc.Call passes them as (an int32
// offset "is an NSUInteger" by name); the mutants below send each message wrongly and must be
// caught.

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
	minMacOS  int              // gpu_darwin.go's minMacOS: the oldest macOS the backend runs on
	visited   map[*types.Func]bool
	findings  []auditFinding
	followed  int             // darwinkit functions walked
	rawSends  int             // objc.Call sites of this package checked against declaredSelectors
	sent      map[string]bool // the selectors of those sites
	dynamic   map[string]int  // interface methods called inside darwinkit (not followed; see the test)
	rootFiles []*ast.File
	guarded   map[*ast.CallExpr]map[string]bool // calls inside if x.RespondsToSelector(objc.Sel(s)) { ... }: s
}

// selectorDecl is where and how Apple declares a message: the class or protocol, the header,
// the declaration, the macOS release that introduced it, and the C shape of the declaration:
// "(args) -> result", each a C kind as objc.Call passes it (kind below): u8 for BOOL, s64 for
// NSInteger and an NS_ENUM(NSInteger), u64 for NSUInteger, uint64_t and an
// NS_ENUM/NS_OPTIONS(NSUInteger), f64 for CFTimeInterval, ptr for an object, a C pointer and
// an out-parameter (NSError **), block for a block, {u64,u64,u64} for MTLSize by value.
type selectorDecl struct {
	class, header, decl string
	since               int // macOS major release (10 for every 10.x)
	shape               string
}

// declaredSelectors are the messages the backend sends, as Apple declares them (the macOS
// 15 SDK's headers). Each shape but those of setMathMode: and setMathFloatingPointFunctions:
// (not in darwinkit v0.5.0's bindings) is the shape darwinkit's generated binding of the
// selector on that class sends: TestDeclaredSelectorsMatchBindings checked it, mechanically,
// before the bindings left third_party/darwinkit (it is in this file in the commit before).
var declaredSelectors = map[string]selectorDecl{
	// The device (MTLCreateSystemDefaultDevice's, +1, device_darwin.go).
	"supportsFamily:":              {"MTLDevice", "Metal/MTLDevice.h", "- (BOOL)supportsFamily:(MTLGPUFamily)gpuFamily; NS_ENUM(NSInteger, MTLGPUFamily)", 10, "(s64) -> u8"},
	"name":                         {"MTLDevice", "Metal/MTLDevice.h", "@property (nonnull, readonly) NSString *name", 10, "() -> ptr"},
	"hasUnifiedMemory":             {"MTLDevice", "Metal/MTLDevice.h", "@property (readonly) BOOL hasUnifiedMemory", 10, "() -> u8"},
	"maxBufferLength":              {"MTLDevice", "Metal/MTLDevice.h", "@property (readonly) NSUInteger maxBufferLength", 10, "() -> u64"},
	"recommendedMaxWorkingSetSize": {"MTLDevice", "Metal/MTLDevice.h", "@property (readonly) uint64_t recommendedMaxWorkingSetSize", 10, "() -> u64"},
	// The compile options: +new (+1), autoreleased by the backend.
	"new":                            {"NSObject", "objc/NSObject.h", "+ (instancetype)new", 10, "() -> ptr"},
	"setLanguageVersion:":            {"MTLCompileOptions", "Metal/MTLLibrary.h", "@property (readwrite, nonatomic) MTLLanguageVersion languageVersion; NS_ENUM(NSUInteger, MTLLanguageVersion)", 10, "(u64) -> void"},
	"setFastMathEnabled:":            {"MTLCompileOptions", "Metal/MTLLibrary.h", "@property (readwrite, nonatomic) BOOL fastMathEnabled (deprecated in macOS 15)", 10, "(u8) -> void"},
	"setMathMode:":                   {"MTLCompileOptions", "Metal/MTLLibrary.h", "@property (readwrite, nonatomic) MTLMathMode mathMode; NS_ENUM(NSInteger, MTLMathMode)", 15, "(s64) -> void"},
	"setMathFloatingPointFunctions:": {"MTLCompileOptions", "Metal/MTLLibrary.h", "@property (readwrite, nonatomic) MTLMathFloatingPointFunctions mathFloatingPointFunctions; NS_ENUM(NSInteger, MTLMathFloatingPointFunctions)", 15, "(s64) -> void"},
	// The library, its functions and their pipelines (each new*, +1).
	"newLibraryWithSource:options:error:":        {"MTLDevice", "Metal/MTLDevice.h", "- (nullable id <MTLLibrary>)newLibraryWithSource:(NSString *)source options:(nullable MTLCompileOptions *)options error:(__autoreleasing NSError **)error", 10, "(ptr, ptr, ptr) -> ptr"},
	"newFunctionWithName:":                       {"MTLLibrary", "Metal/MTLLibrary.h", "- (nullable id <MTLFunction>)newFunctionWithName:(NSString *)functionName", 10, "(ptr) -> ptr"},
	"newComputePipelineStateWithFunction:error:": {"MTLDevice", "Metal/MTLDevice.h", "- (nullable id <MTLComputePipelineState>)newComputePipelineStateWithFunction:(id <MTLFunction>)computeFunction error:(__autoreleasing NSError **)error", 10, "(ptr, ptr) -> ptr"},
	"threadExecutionWidth":                       {"MTLComputePipelineState", "Metal/MTLComputePipeline.h", "@property (readonly) NSUInteger threadExecutionWidth", 10, "() -> u64"},
	"maxTotalThreadsPerThreadgroup":              {"MTLComputePipelineState", "Metal/MTLComputePipeline.h", "@property (readonly) NSUInteger maxTotalThreadsPerThreadgroup", 10, "() -> u64"},
	// An NSError (autoreleased) as a Go error.
	"localizedDescription": {"NSError", "Foundation/NSError.h", "@property (readonly, copy) NSString *localizedDescription", 10, "() -> ptr"},
	"code":                 {"NSError", "Foundation/NSError.h", "@property (readonly) NSInteger code", 10, "() -> s64"},
	// Buffers (each new*, +1).
	"newBufferWithLength:options:":                         {"MTLDevice", "Metal/MTLDevice.h", "- (nullable id <MTLBuffer>)newBufferWithLength:(NSUInteger)length options:(MTLResourceOptions)options; NS_OPTIONS(NSUInteger, MTLResourceOptions)", 10, "(u64, u64) -> ptr"},
	"newBufferWithBytesNoCopy:length:options:deallocator:": {"MTLDevice", "Metal/MTLDevice.h", "- (nullable id <MTLBuffer>)newBufferWithBytesNoCopy:(void *)pointer length:(NSUInteger)length options:(MTLResourceOptions)options deallocator:(void (^ __nullable)(void *pointer, NSUInteger length))deallocator", 10, "(ptr, u64, u64, block) -> ptr"},
	"contents": {"MTLBuffer", "Metal/MTLBuffer.h", "- (void *)contents NS_RETURNS_INNER_POINTER", 10, "() -> ptr"},
	// A pass: the queue (new*, +1), its command buffer and encoder (autoreleased).
	"newCommandQueue":                             {"MTLDevice", "Metal/MTLDevice.h", "- (nullable id <MTLCommandQueue>)newCommandQueue", 10, "() -> ptr"},
	"commandBuffer":                               {"MTLCommandQueue", "Metal/MTLCommandQueue.h", "- (nullable id <MTLCommandBuffer>)commandBuffer", 10, "() -> ptr"},
	"computeCommandEncoder":                       {"MTLCommandBuffer", "Metal/MTLCommandBuffer.h", "- (nullable id <MTLComputeCommandEncoder>)computeCommandEncoder", 10, "() -> ptr"},
	"setComputePipelineState:":                    {"MTLComputeCommandEncoder", "Metal/MTLComputeCommandEncoder.h", "- (void)setComputePipelineState:(id <MTLComputePipelineState>)state", 10, "(ptr) -> void"},
	"setBuffer:offset:atIndex:":                   {"MTLComputeCommandEncoder", "Metal/MTLComputeCommandEncoder.h", "- (void)setBuffer:(nullable id <MTLBuffer>)buffer offset:(NSUInteger)offset atIndex:(NSUInteger)index", 10, "(ptr, u64, u64) -> void"},
	"setBytes:length:atIndex:":                    {"MTLComputeCommandEncoder", "Metal/MTLComputeCommandEncoder.h", "- (void)setBytes:(const void *)bytes length:(NSUInteger)length atIndex:(NSUInteger)index", 10, "(ptr, u64, u64) -> void"},
	"dispatchThreadgroups:threadsPerThreadgroup:": {"MTLComputeCommandEncoder", "Metal/MTLComputeCommandEncoder.h", "- (void)dispatchThreadgroups:(MTLSize)threadgroupsPerGrid threadsPerThreadgroup:(MTLSize)threadsPerThreadgroup; MTLSize: { NSUInteger width, height, depth; }", 10, "({u64,u64,u64}, {u64,u64,u64}) -> void"},
	"endEncoding":                                 {"MTLCommandEncoder", "Metal/MTLCommandEncoder.h", "- (void)endEncoding", 10, "() -> void"},
	"commit":                                      {"MTLCommandBuffer", "Metal/MTLCommandBuffer.h", "- (void)commit", 10, "() -> void"},
	"waitUntilCompleted":                          {"MTLCommandBuffer", "Metal/MTLCommandBuffer.h", "- (void)waitUntilCompleted", 10, "() -> void"},
	"status":                                      {"MTLCommandBuffer", "Metal/MTLCommandBuffer.h", "@property (readonly) MTLCommandBufferStatus status; NS_ENUM(NSUInteger, MTLCommandBufferStatus)", 10, "() -> u64"},
	"error":                                       {"MTLCommandBuffer", "Metal/MTLCommandBuffer.h", "@property (nullable, readonly) NSError *error", 10, "() -> ptr"},
	"GPUStartTime":                                {"MTLCommandBuffer", "Metal/MTLCommandBuffer.h", "@property (readonly) CFTimeInterval GPUStartTime", 10, "() -> f64"},
	"GPUEndTime":                                  {"MTLCommandBuffer", "Metal/MTLCommandBuffer.h", "@property (readonly) CFTimeInterval GPUEndTime", 10, "() -> f64"},
}

// parseShape reads a selectorDecl's shape, "(a, b) -> r".
func parseShape(s string) (callShape, error) {
	args, ret, ok := strings.Cut(s, ") -> ")
	args, ok2 := strings.CutPrefix(args, "(")
	if !ok || !ok2 || ret == "" {
		return callShape{}, fmt.Errorf("bad shape %q", s)
	}
	shape := callShape{ret: ret}
	if args != "" {
		// A struct's fields are separated by "," without a space.
		shape.args = strings.Split(args, ", ")
	}
	return shape, nil
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

// newDarwinkitAudit indexes every non-standard function of the build.
func newDarwinkitAudit(b *darwinBuild) (*darwinkitAudit, error) {
	a := &darwinkitAudit{b: b, decls: map[*types.Func]declSite{}, visited: map[*types.Func]bool{}, dynamic: map[string]int{}, sent: map[string]bool{}}
	objc := b.checked[objcPath]
	if objc == nil {
		return nil, fmt.Errorf("%s was not type-checked", objcPath)
	}
	a.handle = objc.Scope().Lookup("Handle").Type().Underlying().(*types.Interface)
	if metal := b.checked[metalPkgPath]; metal != nil {
		if c, ok := metal.Scope().Lookup("minMacOS").(*types.Const); ok {
			if v, ok := constant.Int64Val(c.Val()); ok {
				a.minMacOS = int(v)
			}
		}
	}
	if a.minMacOS == 0 {
		return nil, fmt.Errorf("no constant minMacOS in the darwin build of %s", metalPkgPath)
	}
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
		}
	}
	return a, nil
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

// checkRawSend holds one of our objc.Call sites to Apple's declaration of the selector.
func (a *darwinkitAudit) checkRawSend(info *types.Info, call *ast.CallExpr, report func(string, ...any)) {
	a.rawSends++
	sel, shape, ok := a.sendShape(info, call)
	if !ok {
		report("objc.Call without a constant selector objc.Sel(\"...\") and one type argument: cannot be checked")
		return
	}
	a.sent[sel] = true
	if want := strings.Count(sel, ":"); want != len(shape.args) {
		report("%q takes %d arguments, objc.Call passes %d", sel, want, len(shape.args))
		return
	}
	decl, ok := declaredSelectors[sel]
	if !ok {
		report("%q is not in declaredSelectors (misspelt? a new message goes there with Apple's declaration)", sel)
		return
	}
	apple, err := parseShape(decl.shape)
	if err != nil {
		report("declaredSelectors[%q]: %v", sel, err)
		return
	}
	if shape.ret != apple.ret || !fits(shape.args, apple.args) {
		report("%q sent as %v; Apple declares it as %v (%s, %s: %s)", sel, shape, apple, decl.class, decl.header, decl.decl)
	}
	if decl.since > a.minMacOS && !a.guarded[call][sel] {
		report("%q (macOS %d; the backend runs from macOS %d) sent without a respondsToSelector: guard for it", sel, decl.since, a.minMacOS)
	}
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
	t.Logf("followed %d darwinkit functions from this package (interface calls inside darwinkit, not followed: %v); %d raw sends of %d selectors checked against the %d of declaredSelectors",
		a.followed, a.dynamic, a.rawSends, len(a.sent), len(declaredSelectors))
	for _, f := range a.findings {
		t.Error(f)
	}
	// Every declared selector is sent: the table is what the backend sends, nothing else.
	for sel := range declaredSelectors {
		if !a.sent[sel] {
			t.Errorf("declaredSelectors has %q, which the backend does not send: remove it", sel)
		}
	}
	if a.rawSends < len(declaredSelectors) {
		t.Errorf("only %d raw sends checked: the audit does not see the backend's objc.Call sites", a.rawSends)
	}
	// Interface calls are not followed: only the Ptr accessor of objc.Handle may be among
	// them (it reads a field); anything else could hide a path and must be looked at.
	for name := range a.dynamic {
		if name != "darwinkit/objc.Handle.Ptr" {
			t.Errorf("an interface call inside darwinkit the audit does not follow: %s", name)
		}
	}
	// objc.Call alone reaches its argument conversion, libffi's wrappers and the runtime's.
	if a.followed < 15 {
		t.Errorf("only %d darwinkit functions followed: the walk does not reach into darwinkit", a.followed)
	}
}

// TestDarwinkitAuditCatches breaks one message of gpu_darwin.go at a time, each as it would
// fail at run time on a Mac, and the audit must report it.
func TestDarwinkitAuditCatches(t *testing.T) {
	src, err := os.ReadFile("gpu_darwin.go")
	if err != nil {
		t.Fatal(err)
	}
	type edit struct{ from, to string }
	for _, m := range []struct {
		name  string
		edits []edit
		want  string
	}{
		{"objc.WrapAsProtocol for the pipeline's function", []edit{{
			`objc.Sel("newComputePipelineStateWithFunction:error:"), fn, unsafe.Pointer(&nsErr))`,
			`objc.Sel("newComputePipelineStateWithFunction:error:"), objc.WrapAsProtocol("MTLFunction", fn), unsafe.Pointer(&nsErr))`}},
			"mtlFunction] panics"},
		{"a Go func as the no-copy deallocator", []edit{{
			`resourceStorageModeShared, unsafe.Pointer(nil))`, `resourceStorageModeShared, func(unsafe.Pointer, uint) {})`}},
			"passed to objc.Call becomes an Objective-C block"},
		{"a block made of a Go func as the deallocator", []edit{{
			`resourceStorageModeShared, unsafe.Pointer(nil))`, `resourceStorageModeShared, objc.CreateMallocBlock(func(unsafe.Pointer, uint) {}))`}},
			"objc.CreateMallocBlock turns a Go func into an Objective-C block"},
		{"a misspelt selector", []edit{{
			`objc.Sel("setComputePipelineState:")`, `objc.Sel("setComputePipeline:")`}},
			`"setComputePipeline:" is not in declaredSelectors`},
		{"an offset passed as a 32-bit int", []edit{{
			`uint(b.Offset), uint(i))`, `int32(b.Offset), uint(i))`}},
			`"setBuffer:offset:atIndex:" sent as (ptr, s32, u64) -> void; Apple declares it as (ptr, u64, u64) -> void`},
		{"an index passed as a Go int (NSInteger)", []edit{{
			`uint(len(d.Params)), uint(len(d.Buffers)))`, `uint(len(d.Params)), len(d.Buffers))`}},
			`"setBytes:length:atIndex:" sent as (ptr, u64, s64) -> void`},
		{"setBufferOffset:atIndex: for setBuffer:offset:atIndex:", []edit{{
			`objc.Sel("setBuffer:offset:atIndex:")`, `objc.Sel("setBufferOffset:atIndex:")`}},
			`"setBufferOffset:atIndex:" takes 2 arguments, objc.Call passes 3`},
		{"MTLSize of 32-bit fields", []edit{
			{`type mtlSize struct{ Width, Height, Depth uint64 }`, `type mtlSize struct{ Width, Height, Depth uint32 }`},
			{`mtlSize{Width: uint64(v[0]), Height: uint64(v[1]), Depth: uint64(v[2])}`, `mtlSize{Width: uint32(v[0]), Height: uint32(v[1]), Depth: uint32(v[2])}`}},
			`"dispatchThreadgroups:threadsPerThreadgroup:" sent as ({u32,u32,u32}, {u32,u32,u32}) -> void`},
		{"a BOOL result read as NSInteger", []edit{{
			`objc.Call[bool](dev, objc.Sel("hasUnifiedMemory"))`, `objc.Call[int](dev, objc.Sel("hasUnifiedMemory")) != 0`}},
			`"hasUnifiedMemory" sent as () -> s64; Apple declares it as () -> u8`},
		{"GPU times read as 32-bit floats", []edit{{
			`objc.Call[float64](g.cmd, objc.Sel("GPUEndTime"))`, `float64(objc.Call[float32](g.cmd, objc.Sel("GPUEndTime")))`}},
			`"GPUEndTime" sent as () -> f32; Apple declares it as () -> f64`},
		{"setMathFloatingPointFunctions: guarded by another selector", []edit{{
			`if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {`,
			`if opts.RespondsToSelector(objc.Sel("setMathMode:")) {`}},
			`"setMathFloatingPointFunctions:" (macOS 15; the backend runs from macOS 14) sent without a respondsToSelector: guard`},
		{"setMathMode: sent unguarded", []edit{{
			`	if opts.RespondsToSelector(objc.Sel("setMathMode:")) {
		objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), mathModeSafe)
	} else {
		objc.Call[objc.Void](opts, objc.Sel("setFastMathEnabled:"), false)
	}`,
			`	objc.Call[objc.Void](opts, objc.Sel("setMathMode:"), mathModeSafe)`}},
			`"setMathMode:" (macOS 15; the backend runs from macOS 14) sent without a respondsToSelector: guard`},
		{"setMathFloatingPointFunctions: under a negated guard", []edit{{
			`if opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {`,
			`if !opts.RespondsToSelector(objc.Sel("setMathFloatingPointFunctions:")) {`}},
			`"setMathFloatingPointFunctions:" (macOS 15; the backend runs from macOS 14) sent without a respondsToSelector: guard`},
		{"mathMode as a 32-bit value", []edit{{
			`objc.Sel("setMathMode:"), mathModeSafe)`, `objc.Sel("setMathMode:"), uint32(mathModeSafe))`}},
			`"setMathMode:" sent as (u32) -> void; Apple declares it as (s64) -> void`},
		{"an argument too few", []edit{{
			`resourceStorageModeShared, unsafe.Pointer(nil))`, `resourceStorageModeShared)`}},
			`takes 4 arguments, objc.Call passes 3`},
	} {
		t.Run(m.name, func(t *testing.T) {
			mutant := string(src)
			for _, e := range m.edits {
				if !strings.Contains(mutant, e.from) {
					t.Fatalf("gpu_darwin.go no longer contains %q: update the mutant", e.from)
				}
				mutant = strings.Replace(mutant, e.from, e.to, 1)
			}
			a := auditPackage(t, map[string]string{"gpu_darwin.go": mutant})
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

//go:build linux

package shaders_test

// mslcheck_test.go: what the g++ harness defines away, checked on the exact text of
// shaders.Library():
//
//   - address spaces, by clang compiling the library as C++ for OpenCL with the generic
//     address space off and the MSL spaces mapped onto OpenCL's (mslcheck/metal_stdlib), so
//     passing a device pointer as threadgroup, a constant reference as device, or a
//     threadgroup array outside a kernel is a compile error, as it is for Metal;
//   - that every pointer and reference names its address space (Metal rejects an
//     unqualified one; OpenCL quietly makes it __private, so clang cannot see this);
//   - the [[...]] attributes: real MSL spellings only, on parameter types MSL accepts.
//
// Invariant: each check passes on today's library and fails on every mutant below, each a
// text edit of the library that Metal's compiler would reject. Mutation that would silently
// break it: a shim that maps two MSL address spaces onto one OpenCL space (or defines one
// away, as the harness's shim does), or clang flags that leave the generic address space on
// (then any pointer converts to any other): the library still compiles, so only the mutant
// tests, which must see their edit rejected, notice.
//
// On a Mac, Metal's own compiler checks the library in metal/metal_darwin_test.go.

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/turbospark/inspector/shaders"
)

// mslClangArgs: C++ for OpenCL 2021 with every optional OpenCL feature off (-all; the
// driver does not pass -cl-ext on for this target, hence -Xclang), so with no generic
// address space an unqualified pointee is __private and no conversion between address
// spaces is implicit. fp16 stays on for half; fp64 is off, as MSL has no double. The target
// is pinned to x86-64 for __bf16 (MSL's bfloat); -fsyntax-only generates no code for it.
// Unknown attributes ([[buffer(0)]], ...) are what TestMSLAttributes checks; every other
// warning is an error.
func mslClangArgs(shim string) []string {
	return []string{
		"--target=x86_64-unknown-linux-gnu",
		"-x", "clcpp", "-cl-std=clc++2021",
		"-Xclang", "-cl-ext=-all,+cl_khr_fp16",
		"-cl-no-stdinc", "-nostdinc", "-I", shim,
		"-fsyntax-only", "-Werror", "-Wno-unknown-attributes",
		"-fno-color-diagnostics", "-fno-caret-diagnostics",
		"-", // the library on stdin, exactly as Library() returns it
	}
}

const mslClangMissing = "the MSL address-space check needs clang 17 or newer: " +
	"apt-get install clang-19 (Debian 12), or set MSL_CLANG to a clang >= 17"

var mslClangVersion = regexp.MustCompile(`clang version (\d+)\.`)

// findMSLClang returns a clang >= 17: $MSL_CLANG if set (then nothing else), else the first
// of clang-19, clang-18, clang-17, clang on $PATH whose version is at least 17.
func findMSLClang() (string, error) {
	candidates := []string{"clang-19", "clang-18", "clang-17", "clang"}
	if env := os.Getenv("MSL_CLANG"); env != "" {
		candidates = []string{env}
	}
	var tried []string
	for _, name := range candidates {
		path, err := exec.LookPath(name)
		if err != nil {
			tried = append(tried, name+": not found")
			continue
		}
		out, err := exec.Command(path, "--version").Output()
		m := mslClangVersion.FindSubmatch(out)
		if err != nil || m == nil {
			tried = append(tried, fmt.Sprintf("%s: no clang version in --version (%v)", path, err))
			continue
		}
		if v, _ := strconv.Atoi(string(m[1])); v < 17 {
			tried = append(tried, fmt.Sprintf("%s: version %d", path, v))
			continue
		}
		return path, nil
	}
	return "", fmt.Errorf("%s (tried %s)", mslClangMissing, strings.Join(tried, "; "))
}

func TestMSLClangMissingIsAnError(t *testing.T) {
	t.Setenv("MSL_CLANG", filepath.Join(t.TempDir(), "no-such-clang"))
	_, err := findMSLClang()
	if err == nil || !strings.Contains(err.Error(), "apt-get install clang-19") {
		t.Fatalf("findMSLClang with a missing $MSL_CLANG = %v, want an error naming the package", err)
	}
}

// mslLocate maps line n (1-based) of a library text to "family.metal:line", through the
// "// ---- name ----" lines Library() puts before each file.
func mslLocate(lib string, n int) string {
	file, start := "library", 0
	for i, line := range strings.Split(lib, "\n") {
		if i+1 >= n {
			break
		}
		if strings.HasPrefix(line, "// ---- ") && strings.HasSuffix(line, " ----") {
			file, start = strings.TrimSuffix(strings.TrimPrefix(line, "// ---- "), " ----"), i+1
		}
	}
	return fmt.Sprintf("%s:%d", file, n-start)
}

var mslStdinLoc = regexp.MustCompile(`<stdin>:(\d+):`)

// compileMSL runs clang once on lib and returns its diagnostics (locations in family files)
// and whether it accepted the library.
func compileMSL(t *testing.T, clang, lib string) (string, bool) {
	shim, err := filepath.Abs("mslcheck")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(clang, mslClangArgs(shim)...)
	cmd.Stdin = strings.NewReader(lib)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if _, exited := err.(*exec.ExitError); err != nil && !exited {
		t.Fatalf("running %s: %v", clang, err)
	}
	diags := mslStdinLoc.ReplaceAllStringFunc(out.String(), func(s string) string {
		n, _ := strconv.Atoi(mslStdinLoc.FindStringSubmatch(s)[1])
		return mslLocate(lib, n) + ":"
	})
	return diags, err == nil
}

// mslFirstError is the first error of clang's diagnostics with the notes that explain it.
func mslFirstError(diags string) string {
	var lines []string
	for _, line := range strings.Split(diags, "\n") {
		isErr := strings.Contains(line, ": error: ")
		if isErr && len(lines) > 0 {
			break
		}
		if isErr || (len(lines) > 0 && strings.Contains(line, ": note: ")) {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

// mslMutant is one text edit of the library that Metal's compiler rejects. want is a
// phrase of the first error (or its notes) showing it is rejected for the intended reason.
type mslMutant struct {
	name, from, to, want string
}

// apply makes the edit at the first occurrence of from, which must be there.
func (m mslMutant) apply(t *testing.T, lib string) string {
	t.Helper()
	if !strings.Contains(lib, m.from) {
		t.Fatalf("mutant %s: %q is not in the library any more; update the mutant", m.name, m.from)
	}
	return strings.Replace(lib, m.from, m.to, 1)
}

var mslAddressSpaceMutants = []mslMutant{
	{"helper pointer parameter without device",
		"inline float load_weight(device const uchar* base,",
		"inline float load_weight(const uchar* base,",
		"converts between mismatching address spaces"},
	{"threadgroup array inside a helper",
		"TG_PARAM float* tile) {",
		"TG_PARAM float* unused) {\n    threadgroup float tile[(BM + MM_TILE) * MM_LD];",
		"cannot be declared in local address space"},
	{"device pointer passed as threadgroup",
		"matmul_simd<64>(y, x, w, bias, residual, p, group, tid, sg, tile);",
		"matmul_simd<64>(y, x, w, bias, residual, p, group, tid, sg, y);",
		"address space '__global' as a pointer to address space '__local'"},
	{"constant reference passed as device",
		"device float* residual, constant MatMulParams& p, uint2 group",
		"device float* residual, device const MatMulParams& p, uint2 group",
		"reference in address space '__global' to object in address space '__constant'"}, // p passed on to mm_epilogue
	{"TG_PARAM defined empty",
		"#define TG_PARAM threadgroup",
		"#define TG_PARAM",
		"no matching function for call to 'simdgroup_load'"}, // a __private pointer: neither device nor threadgroup
	{"kernel buffer without address space",
		"kernel void rope2d(device float* x [[buffer(0)]]",
		"kernel void rope2d(float* x [[buffer(0)]]",
		"pointer arguments to kernel functions must reside in"},
	{"program-scope constant without constant",
		"constant constexpr uint MM_TILE = 64;",
		"constexpr uint MM_TILE = 64;",
		"program scope variable must reside in constant address space"},
	{"cast to a pointer without device",
		"return float(((device const bfloat*)base)[i]);",
		"return float(((const bfloat*)base)[i]);",
		"converts between mismatching address spaces"},
}

func TestMSLAddressSpacesClang(t *testing.T) {
	clang, err := findMSLClang()
	if err != nil {
		t.Fatal(err)
	}
	lib := shaders.Library()
	start := time.Now()
	t.Run("library", func(t *testing.T) {
		t.Parallel()
		if diags, ok := compileMSL(t, clang, lib); !ok || diags != "" {
			t.Fatalf("clang (%s) rejects the library (ok=%v):\n%s", clang, ok, diags)
		}
	})
	for _, m := range mslAddressSpaceMutants {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			diags, ok := compileMSL(t, clang, m.apply(t, lib))
			first := mslFirstError(diags)
			if ok || first == "" {
				t.Fatalf("mutant %q compiles; the address-space check cannot see it:\n%s", m.name, diags)
			}
			if !strings.Contains(first, m.want) {
				t.Fatalf("mutant %q: first error is not the address-space one (want %q):\n%s", m.name, m.want, first)
			}
			t.Logf("mutant %q, first error:\n%s", m.name, first)
		})
	}
	t.Cleanup(func() {
		t.Logf("%s: %d clang runs in %v", clang, 1+len(mslAddressSpaceMutants), time.Since(start).Round(time.Millisecond))
	})
}

// Each unit the Metal backend compiles on its own compiles alone: a unit that leaves out a
// file it uses fails here, not on the first Mac that needs it (Library() holds every file, so
// the check above cannot see it).
func TestMSLUnitsCompileAlone(t *testing.T) {
	clang, err := findMSLClang()
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range shaders.Units {
		t.Run(u.Name, func(t *testing.T) {
			t.Parallel()
			if diags, ok := compileMSL(t, clang, u.Source()); !ok || diags != "" {
				t.Fatalf("clang rejects unit %s alone (ok=%v):\n%s", u.Name, ok, diags)
			}
		})
	}
	// The mutant: the scalar matmul without the epilogue file both matmul families share.
	t.Run("mutant: matmul_scalar without matmul_epilogue.metal", func(t *testing.T) {
		t.Parallel()
		u, _ := shaders.UnitNamed("matmul_scalar")
		u.Files = slices.DeleteFunc(slices.Clone(u.Files), func(f string) bool { return f == "matmul_epilogue.metal" })
		diags, ok := compileMSL(t, clang, u.Source())
		if ok || !strings.Contains(mslFirstError(diags), "MatMulParams") {
			t.Fatalf("the unit without the file declaring MatMulParams compiles (ok=%v):\n%s", ok, diags)
		}
		t.Logf("first error: %s", mslFirstError(diags))
	})
}

// ---- every pointer and reference names its address space ----

// mslSpaces are the words that name an address space in a declaration (TG_PARAM is
// threadgroup on the GPU; clang checks that it is).
var mslSpaces = map[string]bool{"device": true, "constant": true, "threadgroup": true, "thread": true, "TG_PARAM": true}

var (
	mslLineComment  = regexp.MustCompile(`//[^\n]*`)
	mslBlockComment = regexp.MustCompile(`(?s)/\*.*?\*/`)
	mslNotNewline   = regexp.MustCompile(`[^\n]`)
	mslToken        = regexp.MustCompile(`[A-Za-z_]\w*|\d[\w.]*|&&|\|\||::|->|\S`)
	mslDeclaredType = regexp.MustCompile(`\b(?:struct|class|typename|union|enum)\s+(\w+)|\busing\s+(\w+)\s*=|\btypedef\b[^;]*?(\w+)\s*;`)
)

// mslStripComments blanks comments, keeping every newline so lines still match the library.
func mslStripComments(src string) string {
	blank := func(s string) string { return mslNotNewline.ReplaceAllString(s, " ") }
	src = mslBlockComment.ReplaceAllStringFunc(src, blank)
	return mslLineComment.ReplaceAllStringFunc(src, blank)
}

// mslTypeNames: MSL's scalar and vector type names, and the types the library declares.
func mslTypeNames(code string) map[string]bool {
	names := map[string]bool{"void": true, "bool": true, "size_t": true, "ptrdiff_t": true}
	for _, s := range []string{"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "half", "float", "bfloat"} {
		names[s] = true
		for _, n := range "234" {
			names[s+string(n)] = true
		}
	}
	for _, m := range mslDeclaredType.FindAllStringSubmatch(code, -1) {
		for _, g := range m[1:] {
			if g != "" {
				names[g] = true
			}
		}
	}
	return names
}

// mslUnqualifiedPointers lists, as "file:line: text", every pointer or reference type in lib
// (declarations and casts: a type name followed by * or &) whose address space is not named.
func mslUnqualifiedPointers(lib string) []string {
	code := mslStripComments(lib)
	lines := strings.Split(code, "\n")
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			lines[i] = "" // preprocessor lines declare nothing
		}
	}
	code = strings.Join(lines, "\n")
	types := mslTypeNames(code)
	type tok struct {
		s    string
		line int
	}
	var toks []tok
	for n, line := range lines {
		for _, s := range mslToken.FindAllString(line, -1) {
			toks = append(toks, tok{s, n + 1})
		}
	}
	qualifier := func(s string) bool { return s == "const" || s == "volatile" || mslSpaces[s] }
	var bad []string
	for i, tk := range toks {
		if !types[tk.s] {
			continue
		}
		j := i + 1
		for j < len(toks) && qualifier(toks[j].s) {
			j++
		}
		if j == len(toks) || (toks[j].s != "*" && toks[j].s != "&") {
			continue
		}
		named := false
		for k := i + 1; k < j; k++ {
			named = named || mslSpaces[toks[k].s]
		}
		for k := i - 1; k >= 0 && qualifier(toks[k].s); k-- {
			named = named || mslSpaces[toks[k].s]
		}
		if !named {
			src := strings.Split(lib, "\n")[tk.line-1]
			bad = append(bad, fmt.Sprintf("%s: %s", mslLocate(lib, tk.line), strings.TrimSpace(src)))
		}
	}
	return bad
}

var mslPointerMutants = []mslMutant{
	// clang accepts this one: OpenCL makes the unqualified pointee __private, which it is.
	{"thread pointer without thread",
		"float acc[ATT_DIM_CHUNKS];",
		"float acc[ATT_DIM_CHUNKS];\n    float* accp = acc;",
		"float* accp = acc;"},
	{"constant reference without constant",
		"device float* residual, constant MatMulParams& p, uint2 group",
		"device float* residual, const MatMulParams& p, uint2 group",
		"const MatMulParams& p"},
}

func TestMSLPointersNameAddressSpace(t *testing.T) {
	lib := shaders.Library()
	if bad := mslUnqualifiedPointers(lib); len(bad) > 0 {
		t.Fatalf("pointer or reference without an address space (Metal: \"pointer type must have explicit address space qualifier\"):\n%s",
			strings.Join(bad, "\n"))
	}
	for _, m := range mslPointerMutants {
		bad := mslUnqualifiedPointers(m.apply(t, lib))
		if len(bad) == 0 {
			t.Errorf("mutant %q passes the explicit-address-space check", m.name)
			continue
		}
		if !strings.Contains(bad[0], m.want) {
			t.Errorf("mutant %q: first finding %q, want the edited line", m.name, bad[0])
		}
		t.Logf("mutant %q: %s", m.name, bad[0])
	}
}

// ---- attributes ----

// MSL's kernel input attributes (Metal Shading Language Specification, "Attributes for
// kernel function input arguments") and the parameter types each accepts.
var (
	mslPositionTypes = []string{"ushort", "ushort2", "ushort3", "uint", "uint2", "uint3"}
	mslIndexTypes    = []string{"ushort", "uint"}
	mslInputAttrs    = map[string][]string{
		"thread_position_in_grid":             mslPositionTypes,
		"thread_position_in_threadgroup":      mslPositionTypes,
		"threadgroup_position_in_grid":        mslPositionTypes,
		"threadgroups_per_grid":               mslPositionTypes,
		"threads_per_grid":                    mslPositionTypes,
		"threads_per_threadgroup":             mslPositionTypes,
		"dispatch_threads_per_threadgroup":    mslPositionTypes,
		"grid_origin":                         mslPositionTypes,
		"grid_size":                           mslPositionTypes,
		"thread_index_in_threadgroup":         mslIndexTypes,
		"thread_index_in_simdgroup":           mslIndexTypes,
		"thread_index_in_quadgroup":           mslIndexTypes,
		"simdgroup_index_in_threadgroup":      mslIndexTypes,
		"quadgroup_index_in_threadgroup":      mslIndexTypes,
		"simdgroups_per_threadgroup":          mslIndexTypes,
		"quadgroups_per_threadgroup":          mslIndexTypes,
		"dispatch_simdgroups_per_threadgroup": mslIndexTypes,
		"dispatch_quadgroups_per_threadgroup": mslIndexTypes,
		"threads_per_simdgroup":               mslIndexTypes,
		"thread_execution_width":              mslIndexTypes, // deprecated alias of threads_per_simdgroup
	}
	// The spec: if these are vectors, they must have the same number of components.
	mslSameWidth = []string{"thread_position_in_grid", "threads_per_grid", "thread_position_in_threadgroup",
		"threads_per_threadgroup", "threadgroup_position_in_grid", "dispatch_threads_per_threadgroup", "threadgroups_per_grid"}
	// Resource bindings [[name(n)]], n in 0..30, and the address spaces their pointer or
	// reference may be in. (texture(n), sampler(n), stage_in are MSL too, but no kernel uses
	// them: add them with a type rule when one does.)
	mslBindings = map[string][]string{"buffer": {"device", "constant"}, "threadgroup": {"threadgroup"}}
	// Attributes allowed outside kernel parameter lists.
	mslFunctionAttr = regexp.MustCompile(`^max_total_threads_per_threadgroup\(\s*\d+\s*\)$`)
	mslBindingAttr  = regexp.MustCompile(`^(\w+)\(\s*(\d+)\s*\)$`)
	mslKernel       = regexp.MustCompile(`\bkernel\s+void\s+(\w+)\s*\(`)
	mslAttr         = regexp.MustCompile(`\[\[(.*?)\]\]`)
	mslParamDecl    = regexp.MustCompile(`^(\S.*?)\s*\b(\w+)$`)
)

// mslSplitTop splits s at commas outside (), [] and <>.
func mslSplitTop(s string) []string {
	var parts []string
	depth, from := 0, 0
	for i, r := range s {
		switch r {
		case '(', '[', '<':
			depth++
		case ')', ']', '>':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[from:i])
				from = i + 1
			}
		}
	}
	return append(parts, s[from:])
}

// mslCheckAttributes returns every attribute problem in lib, as "kernel: param: problem", and
// the kernels whose parameters it read.
func mslCheckAttributes(lib string) (bad []string, kernels []string) {
	code := mslStripComments(lib)
	inParams := map[int]bool{} // offsets of [[ inside kernel parameter lists
	for _, loc := range mslKernel.FindAllStringSubmatchIndex(code, -1) {
		kernel := code[loc[2]:loc[3]]
		kernels = append(kernels, kernel)
		open := loc[1] - 1
		depth, end := 0, -1
		for i := open; i < len(code) && end < 0; i++ {
			switch code[i] {
			case '(':
				depth++
			case ')':
				if depth--; depth == 0 {
					end = i
				}
			}
		}
		if end < 0 {
			bad = append(bad, kernel+": unbalanced parameter list")
			continue
		}
		for _, a := range mslAttr.FindAllStringIndex(code[open:end], -1) {
			inParams[open+a[0]] = true
		}
		widths := map[int][]string{}
		for _, param := range mslSplitTop(code[open+1 : end]) {
			attrs := mslAttr.FindAllStringSubmatch(param, -1)
			decl := mslParamDecl.FindStringSubmatch(strings.TrimSpace(mslAttr.ReplaceAllString(param, " ")))
			if decl == nil {
				bad = append(bad, fmt.Sprintf("%s: %q: not a declaration", kernel, strings.TrimSpace(param)))
				continue
			}
			typ, name := strings.TrimSpace(decl[1]), decl[2]
			if len(attrs) != 1 || strings.Contains(attrs[0][1], ",") {
				bad = append(bad, fmt.Sprintf("%s: %s: wants exactly one attribute, its binding or built-in (the host binds by index)", kernel, name))
				continue
			}
			attr := strings.TrimSpace(attrs[0][1])
			if bad1 := mslCheckParamAttr(attr, typ, widths); bad1 != "" {
				bad = append(bad, fmt.Sprintf("%s: %s [[%s]]: %s", kernel, name, attr, bad1))
			}
		}
		if len(widths) > 1 {
			var ws []string
			for w, attrs := range widths {
				ws = append(ws, fmt.Sprintf("%d components: %s", w, strings.Join(attrs, ", ")))
			}
			sort.Strings(ws)
			bad = append(bad, fmt.Sprintf("%s: grid and threadgroup vectors must have one width (%s)", kernel, strings.Join(ws, "; ")))
		}
	}
	for _, a := range mslAttr.FindAllStringSubmatchIndex(code, -1) {
		if !inParams[a[0]] {
			if attr := strings.TrimSpace(code[a[2]:a[3]]); !mslFunctionAttr.MatchString(attr) {
				bad = append(bad, fmt.Sprintf("[[%s]] outside a kernel's parameters: not an MSL function attribute", attr))
			}
		}
	}
	sort.Strings(kernels)
	return bad, kernels
}

// mslCheckParamAttr checks one kernel parameter's attribute against its type, recording vector
// widths of the position attributes in widths. It returns the problem, or "".
func mslCheckParamAttr(attr, typ string, widths map[int][]string) string {
	if types, ok := mslInputAttrs[attr]; ok {
		base := strings.TrimSpace(strings.TrimPrefix(typ, "const "))
		for _, t := range types {
			if base == t {
				if w := base[len(base)-1]; w >= '2' && w <= '3' && mslContains(mslSameWidth, attr) {
					widths[int(w-'0')] = append(widths[int(w-'0')], attr)
				}
				return ""
			}
		}
		return fmt.Sprintf("type %q, MSL wants one of %s", typ, strings.Join(types, ", "))
	}
	m := mslBindingAttr.FindStringSubmatch(attr)
	if m == nil || mslBindings[m[1]] == nil {
		return "not an MSL kernel parameter attribute (misspelled?)"
	}
	if n, _ := strconv.Atoi(m[2]); n > 30 {
		return "index past 30"
	}
	fields := strings.Fields(strings.NewReplacer("*", " * ", "&", " & ").Replace(typ))
	if !mslContains(fields, "*") && !mslContains(fields, "&") {
		return fmt.Sprintf("type %q is not a pointer or reference", typ)
	}
	for _, space := range mslBindings[m[1]] {
		if mslContains(fields, space) || (space == "threadgroup" && mslContains(fields, "TG_PARAM")) {
			return ""
		}
	}
	return fmt.Sprintf("type %q is not in %s", typ, strings.Join(mslBindings[m[1]], " or "))
}

func mslContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var mslAttributeMutants = []mslMutant{
	{"misspelled attribute",
		"[[thread_index_in_simdgroup]]", "[[thread_index_in_simd_group]]",
		"thread_index_in_simd_group"},
	{"vector type on a scalar attribute",
		"uint sg [[simdgroup_index_in_threadgroup]]", "uint2 sg [[simdgroup_index_in_threadgroup]]",
		"sg [[simdgroup_index_in_threadgroup]]"},
	{"grid vectors of two widths",
		"uint2 group [[threadgroup_position_in_grid]],\n                       uint tid",
		"uint2 group [[threadgroup_position_in_grid]], uint3 t [[thread_position_in_threadgroup]],\n                       uint tid",
		"one width"},
	{"buffer in the thread address space",
		"constant RopeParams& p [[buffer(3)]]", "thread RopeParams& p [[buffer(3)]]",
		"p [[buffer(3)]]"},
	{"kernel parameter without attribute",
		"device const float* cos_table [[buffer(1)]]", "device const float* cos_table",
		"cos_table: wants exactly one attribute"},
}

func TestMSLAttributes(t *testing.T) {
	lib := shaders.Library()
	bad, kernels := mslCheckAttributes(lib)
	if len(bad) > 0 {
		t.Fatalf("attributes Metal would reject:\n%s", strings.Join(bad, "\n"))
	}
	if got, want := strings.Join(kernels, " "), strings.Join(shaders.Kernels(), " "); got != want {
		t.Fatalf("attribute check read the parameters of kernels %q, want every kernel %q", got, want)
	}
	for _, m := range mslAttributeMutants {
		bad, _ := mslCheckAttributes(m.apply(t, lib))
		if len(bad) == 0 {
			t.Errorf("mutant %q passes the attribute check", m.name)
			continue
		}
		if !strings.Contains(bad[0], m.want) {
			t.Errorf("mutant %q: first finding %q, want %q", m.name, bad[0], m.want)
		}
		t.Logf("mutant %q: %s", m.name, bad[0])
	}
}

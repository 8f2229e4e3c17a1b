// Package shaders holds the Metal kernels of the vision engine (one .metal file per kernel
// family, embedded) and their calling convention: which kernel an op uses, how its
// parameters are packed, which buffers it binds and the grid it runs on (dispatch.go). The
// Metal backend (metal/) encodes these dispatches on the GPU; the harness (harness/) runs the
// very same dispatches on Linux with the kernels compiled as C++.
//
// Invariant: Library() holds every file once, the prelude first, then every family in a
// fixed order; it is the text the harness and clang compile, and each unit Metal compiles
// (units.go) is the prelude and a subsequence of it. Mutation that would silently break it:
// leaving a family out of Library() while its kernel stays in a unit — the harness would
// never run the kernel, and the GPU would meet it untested.
package shaders

import (
	"embed"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

//go:embed *.metal
var files embed.FS

// Prelude is the file every family builds on; it comes first in Library().
const Prelude = "prelude.metal"

// Families are the kernel family files after the prelude, in library order (every file once).
// A file comes after those it uses: elementwise.metal before matmul_epilogue.metal (whose
// epilogue calls its GELU functions), matmul_epilogue.metal before both matmul families,
// attention.metal (AttentionParams) before flash.metal. The Metal backend compiles them in
// units (units.go), each a subsequence of this order.
var Families = []string{"layernorm.metal", "elementwise.metal", "matmul_epilogue.metal", "matmul.metal",
	"matmul_scalar.metal", "rope.metal", "attention.metal", "flash.metal"}

// Source returns one embedded .metal file.
func Source(name string) (string, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("shaders: no source %q", name)
	}
	return string(b), nil
}

// Library returns the whole kernel library: the prelude, then every family.
func Library() string {
	return concat(append([]string{Prelude}, Families...))
}

// concat is the files' text, each after a "// ---- name ----" line (which maps a line of a
// compile error back to its file).
func concat(names []string) string {
	var sb strings.Builder
	for _, name := range names {
		src, err := Source(name)
		if err != nil {
			panic(err) // embedded at build time: cannot happen unless Families is wrong
		}
		fmt.Fprintf(&sb, "// ---- %s ----\n%s\n", name, src)
	}
	return sb.String()
}

var kernelDecl = regexp.MustCompile(`(?m)^kernel\s+void\s+(\w+)\s*\(`)

// Kernels lists the kernel functions of the library, sorted.
func Kernels() []string { return kernelsOf(Library()) }

// kernelsOf lists, sorted, the kernel functions declared in src.
func kernelsOf(src string) []string {
	var names []string
	for _, m := range kernelDecl.FindAllStringSubmatch(src, -1) {
		names = append(names, m[1])
	}
	sort.Strings(names)
	return names
}

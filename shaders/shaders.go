// Package shaders holds the Metal kernels of the vision engine (one .metal file per kernel
// family, embedded) and their calling convention: which kernel an op uses, how its
// parameters are packed, which buffers it binds and the grid it runs on (dispatch.go). The
// Metal backend (metal/) encodes these dispatches on the GPU; the harness (harness/) runs the
// very same dispatches on Linux with the kernels compiled as C++.
//
// Invariant: Library() is the exact text Metal compiles, and the text the harness compiles:
// the prelude first, then every family in a fixed order. Mutation that would silently break
// it: leaving a family out of Library() while its kernel stays in Kernels() — the harness
// would still test the file, but the GPU would fail to find the function only at start-up.
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

// Families are the kernel family files after the prelude, in library order.
// elementwise.metal comes before matmul.metal: the matmul epilogue calls its GELU functions.
var Families = []string{"layernorm.metal", "elementwise.metal", "matmul.metal", "rope.metal", "attention.metal"}

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
	var sb strings.Builder
	for _, name := range append([]string{Prelude}, Families...) {
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
func Kernels() []string {
	var names []string
	for _, m := range kernelDecl.FindAllStringSubmatch(Library(), -1) {
		names = append(names, m[1])
	}
	sort.Strings(names)
	return names
}

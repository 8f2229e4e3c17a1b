package shaders

// shaders_test.go: the library's text and the Go side of the calling convention — what the
// C++ harness cannot see because it ignores MSL attributes: buffer indices, dtype codes,
// threadgroup sizes, grid coverage.
//
// Invariant: kernel k's buffer arguments carry [[buffer(0)]], [[buffer(1)]], ... in
// declaration order (the harness binds by position, Metal by index), and the dtype codes
// are the prelude's. Mutation that would silently break it: declaring a kernel's buffers in
// one order and numbering them in another — the harness would pass, the GPU would swap them.

import (
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
)

func TestLibraryHoldsEveryFile(t *testing.T) {
	names, err := fs.Glob(files, "*.metal")
	if err != nil {
		t.Fatal(err)
	}
	inLib := map[string]bool{Prelude: true}
	for _, f := range Families {
		inLib[f] = true
	}
	for _, n := range names {
		if !inLib[n] {
			t.Errorf("%s is embedded but not in the library", n)
		}
		if !strings.Contains(Library(), "// ---- "+n+" ----") {
			t.Errorf("Library() lacks %s", n)
		}
	}
	if len(names) != len(inLib) {
		t.Errorf("%d .metal files embedded, the library names %d", len(names), len(inLib))
	}
	if !strings.HasPrefix(Library(), "// ---- "+Prelude) {
		t.Error("the prelude does not come first")
	}
}

var (
	kernelSig = regexp.MustCompile(`(?s)kernel\s+void\s+(\w+)\s*\((.*?)\)\s*\{`)
	bufferIdx = regexp.MustCompile(`\[\[buffer\((\d+)\)\]\]`)
)

func TestBufferIndicesFollowDeclarationOrder(t *testing.T) {
	sigs := kernelSig.FindAllStringSubmatch(Library(), -1)
	if len(sigs) != len(Kernels()) {
		t.Fatalf("%d kernel signatures parsed, %d kernels", len(sigs), len(Kernels()))
	}
	for _, s := range sigs {
		idx := bufferIdx.FindAllStringSubmatch(s[2], -1)
		for i, m := range idx {
			if n, _ := strconv.Atoi(m[1]); n != i {
				t.Errorf("%s: argument %d is [[buffer(%d)]]", s[1], i, n)
			}
		}
		if !strings.Contains(s[2], "constant ") {
			t.Errorf("%s: no constant params argument after its buffers", s[1])
		}
	}
}

func TestDTypeCodesMatchThePrelude(t *testing.T) {
	src, _ := Source(Prelude)
	for name, code := range map[string]DType{"DTYPE_F32": F32, "DTYPE_BF16": BF16, "DTYPE_F16": F16} {
		m := regexp.MustCompile(name + `\s*=\s*(\d+)`).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("prelude has no %s", name)
		}
		if n, _ := strconv.Atoi(m[1]); DType(n) != code {
			t.Errorf("%s = %d in the prelude, %d in Go", name, n, code)
		}
	}
}

// Every planner's grid covers its op, with the threadgroup size ThreadgroupSize names.
func TestGridsCoverTheirOps(t *testing.T) {
	o := Operand{Handle: 1}
	seg := backend.Segment{Start: 7, End: 70}
	for _, c := range []struct {
		d       Dispatch
		threads int // threads needed along x (rows of groups along y noted below)
		alongY  int
	}{
		{LayerNorm(o, o, o, o, F32, F32, 37, 50, 1e-6), 37 * 32, 1},
		{RMSNorm(o, o, o, BF16, 37, 50, 1e-6), 37 * 32, 1},
		{MatMul(o, o, o, o, BF16, BF16, 130, 45, 65, Epilogue{}), 65, 130},
		{MatMulTiled(64, o, o, o, o, BF16, BF16, 130, 45, 65, Epilogue{}), 65, 130},
		{Rope2D(o, o, o, 300, 41, 3, 18), 41 * 3 * 9, 1},
		{Attention(o, o, o, o, 300, seg, seg, 70, 3, 72, 0.1), 63 * 4, 3},  // 32 queries per group of 128 threads
		{Attention(o, o, o, o, 300, seg, seg, 70, 3, 40, 0.1), 63 * 32, 3}, // one query per simdgroup
		{Attention(o, o, o, o, 300, seg, backend.Segment{Start: 20, End: 53}, 70, 3, 72, 0.1), 33 * 4, 3},
		{GELU(o, 1000, backend.GELUErf), 1000, 1},
		{Add(o, o, 777), 777, 1},
	} {
		d := c.d
		if got := d.Threads[0] * d.Threads[1] * d.Threads[2]; got != ThreadgroupSize(d.Kernel) {
			t.Errorf("%s: %d threads per group, ThreadgroupSize says %d", d.Kernel, got, ThreadgroupSize(d.Kernel))
		}
		x := d.Groups[0] * d.Threads[0]
		if strings.HasPrefix(d.Kernel, "matmul") {
			rowTile := 64 // 64 outputs per group along x, 64 rows along y (32 for _m32)
			if strings.HasSuffix(d.Kernel, "_m32") {
				rowTile = 32
			}
			x = d.Groups[0] * matmulTile
			if d.Groups[1]*rowTile < c.alongY {
				t.Errorf("%s: %d groups along y cover %d rows, need %d", d.Kernel, d.Groups[1], d.Groups[1]*rowTile, c.alongY)
			}
		} else if d.Groups[1] != c.alongY {
			t.Errorf("%s: %d groups along y, want %d", d.Kernel, d.Groups[1], c.alongY)
		}
		if x < c.threads {
			t.Errorf("%s: grid covers %d along x, the op needs %d", d.Kernel, x, c.threads)
		}
	}
}

func TestMisalignedOperandsAreRefused(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("an F32 weight at byte offset 2 was accepted")
		}
	}()
	MatMul(Operand{Handle: 1}, Operand{Handle: 1}, Operand{Handle: 1, Offset: 2}, Operand{}, F32, F32, 1, 1, 1, Epilogue{})
}

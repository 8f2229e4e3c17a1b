// Package harness runs the Metal kernels of package shaders on a machine without Metal: the
// library text is compiled as C++20 with a small shim (cxx/metal_stdlib: address spaces
// dropped, threadgroup arrays as statics, the threads of a threadgroup as fibers so barriers
// and simd operations really synchronize) and a driver that executes shaders.Dispatch values
// over host buffers. It is a test tool: slow, exact about grids and thread ids.
//
// Invariant: the driver compiles shaders.Library() byte for byte — every file Metal compiles,
// once (Metal compiles it in units, each a subsequence: shaders/units.go) — and runs the same
// Dispatch values the Metal backend encodes. Mutation that would silently
// break it: compiling the .metal files from disk instead of Library() (a family missing from
// the library would still be tested here and fail only on a Mac).
package harness

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/turbospark/inspector/shaders"
)

//go:embed cxx
var cxx embed.FS

// Driver is a compiled harness driver.
type Driver struct {
	Path    string
	Mutants bool // built with -DHARNESS_MUTANTS: Job.Mutant selects a broken variant
}

// compiler returns the C++ compiler to use: $CXX, else g++, else clang++.
func compiler() (string, error) {
	if c := os.Getenv("CXX"); c != "" {
		return exec.LookPath(c)
	}
	for _, c := range []string{"g++", "clang++"} {
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	return "", errors.New("harness: no C++ compiler (g++ or clang++) on PATH: the shader harness compiles " +
		"shaders/*.metal as C++20 to check every kernel on this machine; install g++ (Debian: apt-get install g++)")
}

// flags are the compile flags; fast math stays off, as in the Metal library.
func flags(mutants bool) []string {
	f := []string{"-std=c++20", "-O1", "-U_FORTIFY_SOURCE", "-fno-fast-math", "-ffp-contract=off", "-Wall", "-Wno-attributes",
		"-Wno-unused-function", "-Wno-unused-variable", "-Wno-unknown-pragmas", "-Wno-unknown-attributes"}
	if mutants {
		f = append(f, "-DHARNESS_MUTANTS")
	}
	return f
}

// sources returns the driver's files: the embedded C++ and library.metal = shaders.Library().
func sources() (map[string][]byte, error) {
	out := map[string][]byte{"library.metal": []byte(shaders.Library())}
	entries, err := cxx.ReadDir("cxx")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		b, err := cxx.ReadFile("cxx/" + e.Name())
		if err != nil {
			return nil, err
		}
		out[e.Name()] = b
	}
	return out, nil
}

// key identifies a build: compiler, its version, flags and every source byte.
func key(compiler string, mutants bool, src map[string][]byte) string {
	h := sha256.New()
	ver, _ := exec.Command(compiler, "--version").Output()
	fmt.Fprintf(h, "%s\n%s\n%q\n", compiler, ver, flags(mutants))
	for _, name := range sortedKeys(src) {
		fmt.Fprintf(h, "%s %d\n", name, len(src[name]))
		h.Write(src[name])
	}
	return hex.EncodeToString(h.Sum(nil))[:20]
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Build compiles the driver into cacheDir (reusing a build of the same sources, compiler
// and flags) and returns it.
func Build(cacheDir string, mutants bool) (*Driver, error) {
	compiler, err := compiler()
	if err != nil {
		return nil, err
	}
	src, err := sources()
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(cacheDir, "driver-"+key(compiler, mutants, src))
	if _, err := os.Stat(bin); err == nil {
		now := time.Now()
		os.Chtimes(bin, now, now) // in use: keep it from pruning
		return &Driver{Path: bin, Mutants: mutants}, nil
	}
	if err := compile(compiler, bin, mutants, src); err != nil {
		return nil, err
	}
	pruneOld(cacheDir, bin)
	return &Driver{Path: bin, Mutants: mutants}, nil
}

// pruneOld removes drivers not used for a week (other trees may share the cache, so
// recent ones stay: a running test may be using them).
func pruneOld(cacheDir, keep string) {
	old, _ := filepath.Glob(filepath.Join(cacheDir, "driver-*"))
	for _, p := range old {
		if fi, err := os.Stat(p); err == nil && p != keep && time.Since(fi.ModTime()) > 7*24*time.Hour {
			os.Remove(p)
		}
	}
}

// compile writes the sources to a temporary directory and builds bin atomically.
func compile(compiler, bin string, mutants bool, src map[string][]byte) error {
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(filepath.Dir(bin), "build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	for name, b := range src {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	tmp := filepath.Join(dir, "driver")
	args := append(flags(mutants), "-I", dir, "-o", tmp, filepath.Join(dir, "driver.cpp"))
	out, err := exec.Command(compiler, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("harness: compiling the kernels as C++ (%s %s) failed: %v\n%s",
			filepath.Base(compiler), strings.Join(flags(mutants), " "), err, out)
	}
	return os.Rename(tmp, bin)
}

// Kernels lists the kernels the driver can run (the library's and its self-test kernels).
func (d *Driver) Kernels() ([]string, error) {
	out, err := exec.Command(d.Path, "--list").Output()
	if err != nil {
		return nil, fmt.Errorf("harness: %s --list: %v", d.Path, err)
	}
	return strings.Fields(string(out)), nil
}

// Buffer is host memory a job binds. Read-only buffers (weights) are mapped read-only in
// the driver: a kernel that writes one crashes it.
type Buffer struct {
	Data     []byte
	ReadOnly bool
}

// Job is a sequence of dispatches over Buffers; an Operand's Handle is a buffer index (int).
type Job struct {
	Buffers    []Buffer
	Dispatches []shaders.Dispatch
	Mutant     string // "" or a MUTANT(name) of the kernels; needs a Mutants driver
}

// Run executes the job; the writable buffers then hold the results.
func (d *Driver) Run(j *Job) error {
	if j.Mutant != "" && !d.Mutants {
		return fmt.Errorf("harness: mutant %q needs a driver built with mutants", j.Mutant)
	}
	in, err := encode(j)
	if err != nil {
		return err
	}
	cmd := exec.Command(d.Path)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("harness: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return decode(&stdout, j)
}

type writer struct{ b []byte }

func (w *writer) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *writer) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *writer) str(s []byte) { w.u32(uint32(len(s))); w.b = append(w.b, s...) }
func (w *writer) size(n int)   { w.u32(uint32(n)) }
func (w *writer) sizes(v [3]int) {
	for _, n := range v {
		w.size(n)
	}
}

func encode(j *Job) ([]byte, error) {
	w := &writer{b: []byte("TSJ1")}
	w.str([]byte(j.Mutant))
	w.size(len(j.Buffers))
	for _, b := range j.Buffers {
		flag := uint32(0)
		if b.ReadOnly {
			flag = 1
		}
		w.u32(flag)
		w.u64(uint64(len(b.Data)))
		w.b = append(w.b, b.Data...)
	}
	w.size(len(j.Dispatches))
	for _, d := range j.Dispatches {
		w.str([]byte(d.Kernel))
		w.sizes(d.Groups)
		w.sizes(d.Threads)
		w.str(d.Params)
		w.size(len(d.Buffers))
		for _, b := range d.Buffers {
			idx, ok := b.Handle.(int)
			if !ok || idx < 0 || idx >= len(j.Buffers) {
				return nil, fmt.Errorf("harness: %s: operand handle %v is not a buffer index", d.Kernel, b.Handle)
			}
			w.size(idx)
			w.u64(uint64(b.Offset))
			w.size(b.Align)
		}
	}
	return w.b, nil
}

func decode(r io.Reader, j *Job) error {
	magic := make([]byte, 4)
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != "TSR1" {
		return errors.New("harness: the driver's reply has no TSR1 header")
	}
	for i := range j.Buffers {
		var n uint64
		if err := binary.Read(r, binary.LittleEndian, &n); err != nil {
			return fmt.Errorf("harness: reply truncated at buffer %d", i)
		}
		if n != uint64(len(j.Buffers[i].Data)) {
			return fmt.Errorf("harness: buffer %d came back with %d bytes, sent %d", i, n, len(j.Buffers[i].Data))
		}
		dst := j.Buffers[i].Data
		if j.Buffers[i].ReadOnly {
			dst = make([]byte, n) // weights may be read-only memory here too; the driver protects them
		}
		if _, err := io.ReadFull(r, dst); err != nil {
			return fmt.Errorf("harness: reply truncated in buffer %d", i)
		}
	}
	return nil
}

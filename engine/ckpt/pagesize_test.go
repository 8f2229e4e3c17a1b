package ckpt_test

// pagesize_test.go: the residency's page arithmetic at the page size the process really runs
// with, and proof that a runner which asks for a page size got it.
//
// Invariant: with P = os.Getpagesize(), a mapped residency maps each shard's vision span from
// the file offset rounded down to a multiple of P (less than P before the first vision tensor)
// to the end of the last vision tensor, at an address that is a multiple of P; pread slots and
// the globals region are anonymous mappings that start on a multiple of P and are a multiple
// of P long, with every weight at a multiple of 256 inside them. Metal's no-copy buffers rely on
// all of it, at Apple silicon's 16 KiB pages. When TS_EXPECT_PAGESIZE is set (make test-arm64
// sets 16384 and runs the tests under qemu-aarch64-static -p 16384), P must equal it.
// Mutation that would silently break it: a hard-coded 4096 instead of os.Getpagesize() in
// mapSpan or pageAlloc. On 4 KiB Linux nothing changes; at 16 KiB pages the mapping's file
// offset is not a page multiple (a Mac's mmap refuses it; qemu-user accepts it, hence the
// explicit check) and the slots end mid-page.

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/safetensors"
	"github.com/turbospark/inspector/engine/synth"
)

// expectedPageSize is os.Getpagesize(), checked against TS_EXPECT_PAGESIZE when the runner
// sets it.
func expectedPageSize(t *testing.T) int {
	t.Helper()
	ps := os.Getpagesize()
	s := os.Getenv("TS_EXPECT_PAGESIZE")
	if s == "" {
		t.Logf("page size %d (TS_EXPECT_PAGESIZE not set: nothing asked for)", ps)
		return ps
	}
	want, err := strconv.Atoi(s)
	if err != nil || want <= 0 {
		t.Fatalf("TS_EXPECT_PAGESIZE=%q: want a positive number of bytes", s)
	}
	if ps != want {
		t.Fatalf("os.Getpagesize() = %d, but the runner asked for %d (TS_EXPECT_PAGESIZE): "+
			"the test binary did not run with the requested page size", ps, want)
	}
	return ps
}

// offsetCheckpoint writes a tiny f32 checkpoint whose vision tensors follow 48 KiB + 4 bytes
// of a language-model tensor, so the vision span starts inside a page (the test checks that
// it does) and its mapping must begin at a page boundary before it.
func offsetCheckpoint(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cfg, err := synth.Preset("tiny")
	must(t, err)
	must(t, synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 3}))
	path := filepath.Join(dir, "model.safetensors")
	f, err := safetensors.Open(path)
	must(t, err)
	lm := make([]float32, 3*16384/4+1)
	ts := []safetensors.Tensor{safetensors.F32Tensor("model.language_model.embed_tokens.weight", []int{len(lm)}, lm)}
	for _, ti := range f.Sorted() {
		raw, err := f.ReadRaw(ti.Name)
		must(t, err)
		ts = append(ts, safetensors.Tensor{Spec: safetensors.Spec{Name: ti.Name, DType: ti.DType, Shape: ti.Shape}, Data: raw})
	}
	must(t, safetensors.WriteFile(path, ts, nil))
	return dir
}

// residencyWeights is every weight the residency hands out: globals, then each block's.
func residencyWeights(t *testing.T, ck *ckpt.Checkpoint, res ckpt.Residency) map[string]backend.Weight {
	t.Helper()
	ws := map[string]backend.Weight{}
	for _, s := range ck.Config.EmbedTensors() {
		ws[s.Name] = res.Global(s.Name)
	}
	for _, prefix := range ck.Config.MergerPrefixes() {
		m, _, err := res.Merger(prefix)
		must(t, err)
		for k, w := range []backend.Weight{m.NormW, m.NormB, m.FC1W, m.FC1B, m.FC2W, m.FC2B} {
			ws[ck.Config.MergerTensors(prefix)[k].Name] = w
		}
	}
	for i := range ck.Config.Depth {
		bw, _, err := res.Block(i)
		must(t, err)
		for k, s := range ck.Config.BlockTensors(i) {
			ws[s.Name] = bw[k]
		}
		res.Done(i)
	}
	return ws
}

func addr(r *backend.Region) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(r.Bytes))) }

func TestResidencyPageSize(t *testing.T) {
	ps := expectedPageSize(t)
	P := int64(ps)
	dir := offsetCheckpoint(t)
	ck, err := ckpt.OpenCheckpoint(dir)
	must(t, err)
	first := int64(-1)
	for _, s := range ck.Config.ExpectedTensors() {
		if b := ck.Tensor(s.Name).Info.Begin; first < 0 || b < first {
			first = b
		}
	}
	if first%P == 0 {
		t.Fatalf("the first vision tensor starts on a page boundary (%d): the test proves nothing", first)
	}

	t.Run("mapped", func(t *testing.T) {
		res, err := ckpt.NewResidency(ck, ckpt.Mapped, 2)
		must(t, err)
		defer res.Close()
		ws := residencyWeights(t, ck, res)
		var region *backend.Region
		var end int64
		reported := false
		for name, w := range ws {
			if region == nil {
				region = w.Region
			}
			if w.Region != region {
				t.Fatalf("%s: a second region for a single-shard checkpoint", name)
			}
			l := ck.Tensor(name)
			if base := l.Info.Begin - int64(w.Offset); base != first/P*P && !reported {
				reported = true
				t.Errorf("%s: mapping starts at file offset %d, want %d (the first vision byte %d rounded down to %d)",
					name, base, first/P*P, first, P)
			}
			end = max(end, int64(w.Offset)+l.Bytes())
		}
		if !region.Mapped {
			t.Error("mapped residency handed out a region that is not a mapping")
		}
		if a := addr(region); a%uintptr(ps) != 0 {
			t.Errorf("mapping at %#x: not on a %d-byte page boundary", a, ps)
		}
		if int64(len(region.Bytes)) != end {
			t.Errorf("mapping of %d bytes, want %d (up to the last vision byte)", len(region.Bytes), end)
		}
	})

	t.Run("pread", func(t *testing.T) {
		for _, slots := range []int{2, 3} {
			res, err := ckpt.NewResidency(ck, ckpt.Pread, slots)
			must(t, err)
			regions := map[*backend.Region]bool{}
			for name, w := range residencyWeights(t, ck, res) {
				regions[w.Region] = true
				if w.Offset%256 != 0 {
					t.Errorf("slots %d: %s at offset %d of its slot, not a multiple of 256", slots, name, w.Offset)
				}
				if w.Offset+int(ck.Tensor(name).Bytes()) > len(w.Region.Bytes) {
					t.Errorf("slots %d: %s runs past its slot", slots, name)
				}
			}
			if len(regions) < 3 {
				t.Errorf("slots %d: %d regions, want the globals' and at least two slots", slots, len(regions))
			}
			for r := range regions {
				if r.Mapped {
					t.Errorf("slots %d: a pread region marked as a file mapping", slots)
				}
				if a := addr(r); a%uintptr(ps) != 0 || len(r.Bytes)%ps != 0 {
					t.Errorf("slots %d: region at %#x of %d bytes: not whole %d-byte pages", slots, a, len(r.Bytes), ps)
				}
			}
			must(t, res.Close())
		}
	})
}

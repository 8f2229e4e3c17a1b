package ckpt_test

import (
	"math"
	"os"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/model"
)

// The mapped residency asks for the pages of what runs next: block 0's from the open, and on
// Block(i) a deepstack merger that follows block i (then block i+1), the final merger after
// the last block; every byte of each such weight lies in a span it asks for.
func TestMappedPrefaultsWhatRunsNext(t *testing.T) {
	var mu sync.Mutex
	var asked [][2]uintptr // [start, end) of each span asked for
	defer ckpt.RecordPrefaults(func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		asked = append(asked, [2]uintptr{p, p + uintptr(len(b))})
	})()
	ck, err := ckpt.OpenCheckpoint(tinyCheckpoint(t))
	must(t, err)
	if len(ck.Config.Deepstack) == 0 {
		t.Fatal("the tiny tower has no deepstack merger: nothing here would check one")
	}
	res, err := ckpt.NewResidency(ck, ckpt.Mapped, 2)
	must(t, err)
	defer res.Close()
	// take returns the spans asked for so far (after the prefault in flight) and forgets them.
	take := func() [][2]uintptr {
		ckpt.WaitPrefault(res)
		mu.Lock()
		defer mu.Unlock()
		s := asked
		asked = nil
		return s
	}
	// missing names the weights of ws not wholly inside one of spans.
	missing := func(spans [][2]uintptr, ws []backend.Weight) (out []string) {
		for _, w := range ws {
			if w.Region == nil {
				continue
			}
			lo := uintptr(unsafe.Pointer(unsafe.SliceData(w.Bytes())))
			hi := lo + uintptr(len(w.Bytes()))
			ok := false
			for _, s := range spans {
				ok = ok || (s[0] <= lo && hi <= s[1])
			}
			if !ok {
				out = append(out, w.Name)
			}
		}
		return out
	}
	block := func(i int) []backend.Weight {
		w, _, err := res.Block(i)
		must(t, err)
		return w[:]
	}
	merger := func(prefix string) []backend.Weight {
		w, _, err := res.Merger(prefix)
		must(t, err)
		return []backend.Weight{w.NormW, w.NormB, w.FC1W, w.FC1B, w.FC2W, w.FC2B}
	}
	fromOpen := take()
	if m := missing(fromOpen, block(0)); m != nil {
		t.Errorf("from the open: %v not asked for", m)
	}
	for i := range ck.Config.Depth {
		take()
		block(i)
		spans := take() // what Block(i) asked for
		var want []backend.Weight
		for k, d := range ck.Config.Deepstack {
			if d == i {
				want = append(want, merger(model.DeepstackPrefix(k))...)
			}
		}
		if i+1 < ck.Config.Depth {
			want = append(want, block(i+1)...) // (its own request comes after spans was taken)
		} else {
			want = append(want, merger("merger.")...)
		}
		if m := missing(spans, want); m != nil {
			t.Errorf("Block(%d): %v not asked for", i, m)
		}
	}
}

// WidenedF32 gives the weight's exact float32 values in a region of its own whose base is
// page-aligned, as every region's is (a backend may wrap a region's memory in place).
func TestWidenedF32(t *testing.T) {
	ck, err := ckpt.OpenCheckpoint(tinyCheckpointDType(t, dtype.BF16))
	must(t, err)
	res, err := ckpt.NewResidency(ck, ckpt.Mapped, 2)
	must(t, err)
	defer res.Close()
	w, _, err := res.Block(0)
	must(t, err)
	for _, g := range w.GEMMs(ck.Config) {
		f := ckpt.WidenedF32(g.W)
		if f.DType != dtype.F32 || f.Region == g.W.Region {
			t.Fatalf("%s: dtype %v, region shared %v", g.Name, f.DType, f.Region == g.W.Region)
		}
		if p := uintptr(unsafe.Pointer(unsafe.SliceData(f.Region.Bytes))); p%uintptr(os.Getpagesize()) != 0 {
			t.Errorf("%s: region base %#x not page-aligned", g.Name, p)
		}
		want := make([]float32, g.W.Elems())
		dtype.DecodeF32(want, g.W.Bytes(), g.W.DType)
		got := make([]float32, f.Elems())
		dtype.DecodeF32(got, f.Bytes(), f.DType)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: element %d is %v, the bf16 weight's %v", g.Name, i, got[i], want[i])
			}
		}
	}
}

// Block waits for the prefault in flight (block 0's, from the open) before it hands out views,
// and reports that wait as the block's weight wait.
func TestMappedBlockWaitsForThePrefault(t *testing.T) {
	release := make(chan struct{})
	defer ckpt.RecordPrefaults(func([]byte) { <-release })()
	ck, err := ckpt.OpenCheckpoint(tinyCheckpoint(t))
	must(t, err)
	res, err := ckpt.NewResidency(ck, ckpt.Mapped, 2)
	must(t, err)
	type handed struct {
		fetch ckpt.WeightFetch
		err   error
	}
	got := make(chan handed, 1)
	go func() {
		_, f, err := res.Block(0)
		got <- handed{f, err}
	}()
	const held = 100 * time.Millisecond
	var h handed
	select {
	case h = <-got:
		t.Errorf("Block(0) returned while block 0's prefault was still running")
		close(release)
	case <-time.After(held):
		close(release)
		h = <-got
		if h.fetch.Wait < held/2 { // held, less however late the goroutine began its call
			t.Errorf("Block(0) says it waited %v for its weights; it waited about %v", h.fetch.Wait, held)
		}
	}
	must(t, h.err)
	must(t, res.Close())
}

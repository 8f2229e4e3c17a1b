package ckpt_test

import (
	"bytes"
	"testing"

	"github.com/turbospark/inspector/engine/backend"
	"github.com/turbospark/inspector/engine/ckpt"
)

// pread holds one merger at a time: every merger comes back in the same region, refilled with
// that merger's own bytes (the mapped residency's view of the file is the reference), so a
// pread run never holds all of them.
func TestPreadReadsOneMergerAtATime(t *testing.T) {
	fx := openFixture(t, "qwen3vl_vision_tiny_f32")
	ck, err := ckpt.OpenCheckpoint(fx.dir)
	must(t, err)
	if len(ck.Config.Deepstack) == 0 {
		t.Fatal("the fixture has no deepstack mergers: nothing to switch between")
	}
	pr, err := ckpt.NewResidency(ck, ckpt.Pread, 2)
	must(t, err)
	defer pr.Close()
	mp, err := ckpt.NewResidency(ck, ckpt.Mapped, 2)
	must(t, err)
	defer mp.Close()
	var region *backend.Region
	prefixes := append(ck.Config.MergerPrefixes(), ck.Config.MergerPrefixes()[0])
	for _, prefix := range prefixes {
		got, fetch, err := pr.Merger(prefix)
		must(t, err)
		want, _, err := mp.Merger(prefix)
		must(t, err)
		if fetch.BytesRead == 0 {
			t.Errorf("%s: read 0 bytes after another merger", prefix)
		}
		if region == nil {
			region = got.FC1W.Region
		} else if got.FC1W.Region != region {
			t.Errorf("%s: in a region of its own; pread keeps one merger region", prefix)
		}
		g := []backend.Weight{got.NormW, got.NormB, got.FC1W, got.FC1B, got.FC2W, got.FC2B}
		for k, w := range []backend.Weight{want.NormW, want.NormB, want.FC1W, want.FC1B, want.FC2W, want.FC2B} {
			if !bytes.Equal(g[k].Bytes(), w.Bytes()) {
				t.Errorf("%s: %s differs from the file", prefix, w.Name)
			}
		}
	}
	if _, fetch, _ := pr.Merger(prefixes[len(prefixes)-1]); fetch.BytesRead != 0 {
		t.Errorf("asking for the merger that is resident read %d bytes again", fetch.BytesRead)
	}
}

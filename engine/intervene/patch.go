package intervene

// patch.go: activation patching, an intervention (issue 22): one block's output (or one head's
// slice of what the block's proj reads) at chosen patches is replaced by another run's there
// (another image through the same tower, the same page shape), and the run goes on from the
// patched state: how far the change travels through the later blocks and into the merger.
//
// Invariant: the replaced rows are the source run's block output at the same patches, taken
// in the blocks' row order (both runs share the layout), and everything after the block
// (the kept output, the statistics, the deepstack merger, the next block) sees the patched
// state, as transformers' forward hook on the block gives it.
// Mutation that would silently break it: patching after the deepstack merger has read the
// block's output (Qwen3-VL): the deepstack feature would miss the patch
// (TestActivationPatchParity compares the deepstack outputs too).

import (
	"fmt"
	"strconv"
	"strings"
)

// ParsePatchFrom reads the setting "IMAGE:blocks.B.out@PATCHES" (a block's output) or
// "IMAGE:blocks.B.attn.hH@PATCHES" (head H's slice of what the block's proj reads; PATCHES:
// x0,y0,x1,y1, or rows:R,R,...; the Mask forms) into its parts (head -1 for a block's
// output), and canonicalizes it.
func ParsePatchFrom(spec string) (canonical, image string, block, head int, patches Mask, err error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return "", "", 0, -1, "", nil
	}
	i := strings.LastIndex(spec, ":blocks.")
	at := strings.LastIndex(spec, "@")
	if i <= 0 || at < i {
		return "", "", 0, -1, "", fmt.Errorf("patch-from %s: want IMAGE:blocks.B.out@x0,y0,x1,y1 or IMAGE:blocks.B.attn.hH@… (or @rows:R,R,...)", QuoteShort(spec))
	}
	image = spec[:i]
	b, _ := strings.CutPrefix(spec[i+1:at], "blocks.")
	bad := fmt.Errorf("patch-from %s: the tap is blocks.B.out (a block's output) or blocks.B.attn.hH (head H of what proj reads)", QuoteShort(spec))
	b, tap, _ := strings.Cut(b, ".")
	if block, err = strconv.Atoi(b); err != nil || block < 0 {
		return "", "", 0, -1, "", bad
	}
	head, what := -1, "out"
	if tap != "out" {
		h, ok := strings.CutPrefix(tap, "attn.h")
		if head, err = strconv.Atoi(h); !ok || err != nil || head < 0 {
			return "", "", 0, -1, "", bad
		}
		what = "attn.h" + strconv.Itoa(head)
	}
	if patches, err = ParseMask(spec[at+1:]); err != nil {
		return "", "", 0, -1, "", fmt.Errorf("patch-from %s: the patches: %v", QuoteShort(spec), err)
	}
	if patches.None() {
		return "", "", 0, -1, "", fmt.Errorf("patch-from %s: no patches after @: want x0,y0,x1,y1 or rows:R,R,...", QuoteShort(spec))
	}
	return fmt.Sprintf("%s:blocks.%d.%s@%s", image, block, what, strings.TrimPrefix(string(patches), "rect:")), image, block, head, patches, nil
}

// PatchFrom is the session's activation patch as a setting (its source run is the
// session's work: engine.Session): named here, planned per run by the session (Plan: no hook).
type PatchFrom string

// Name is how settings and captions name it (Intervention).
func (p PatchFrom) Name() string {
	if p == "" {
		return ""
	}
	return "patch " + string(p)
}

// Effect says what it does (Intervention).
func (p PatchFrom) Effect() string {
	if strings.Contains(string(p), ".attn.h") {
		return "that head's slice of what the block's proj reads, at those patches, taken from the other image's run"
	}
	return "that block's output at those patches taken from the other image's run"
}

// From is the patched block (Intervention).
func (p PatchFrom) From() int {
	_, _, block, _, _, err := ParsePatchFrom(string(p))
	if err != nil {
		return 0
	}
	return block
}

// HostFloats is the patch's source rows, [S, D], and for a head's patch the hook's copy of
// attn besides (HostMemory).
func (p PatchFrom) HostFloats(patches, hidden int) int64 {
	if p == "" {
		return 0
	}
	n := int64(patches) * int64(hidden)
	if strings.Contains(string(p), ".attn.h") {
		return 2 * n
	}
	return n
}

// Plan: none per run; the session makes the patch once (OutputPatch, HeadPatch) and puts it on
// every run.
func (p PatchFrom) Plan(Tower) (any, error) { return nil, nil }

// OutputPatch is one block's output patch: at Rows (the blocks' order) the block's output
// takes Source's rows ([S, D], another run's output of the block).
type OutputPatch struct {
	Block  int
	Rows   []int
	Source []float32
}

// AfterBlock writes the patch into the block's output.
func (p *OutputPatch) AfterBlock(s BlockSite) {
	if s.Block() == p.Block {
		s.SetRows(p.Rows, p.Source)
	}
}

// HeadPatch is one block's edit of attn where the heads enter proj, after any ablation: this
// run's attn handed to Capture (a head patch's source run), and/or head columns [C0, C1) at
// Rows (the blocks' order) taken from Source ([S, D], another run's attn of the block).
type HeadPatch struct {
	Block   int
	Capture func(attn []float32)
	Rows    []int
	C0, C1  int
	Source  []float32
}

// BeforeProj applies the edit on the host: attn down, captured or patched, and back.
func (e *HeadPatch) BeforeProj(s ProjSite) {
	if s.Block != e.Block {
		return
	}
	D := s.Hidden
	attn := make([]float32, s.Rows*D)
	s.Backend.Download(attn, s.Attn)
	if e.Capture != nil {
		e.Capture(attn)
	}
	if e.Source == nil {
		return
	}
	for _, r := range e.Rows {
		copy(attn[r*D+e.C0:r*D+e.C1], e.Source[r*D+e.C0:r*D+e.C1])
	}
	s.Backend.Upload(s.Attn, attn)
}

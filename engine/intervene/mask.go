package intervene

// mask.go: input occlusion, an intervention (issue 22): chosen patches of the page are
// replaced, before the patch embedding, by the page's mean colour (each channel's mean over
// every pixel value of the page), the usual occlusion form.
//
// Invariant: the patches are named in the processor's order (pixel_values rows) or as a
// rectangle of the first image's patch grid, and replaced in the processor's order before the
// rows are arranged for the blocks (Qwen2.5-VL's window order), so the same patches are masked
// whatever the family. Mutation that would silently break it: masking rows of the window order
// by processor indices: other patches would be occluded, the maps still plausible
// (TestMaskParity runs Qwen2.5-VL's tower too).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/turbospark/inspector/engine/geom"
)

// Mask is the patches a run occludes: "" none, "rect:x0,y0,x1,y1" the patch columns
// x0..x1-1 and rows y0..y1-1 of the page's first image, or "rows:3,4,5" pixel_values rows.
// A string, so Settings stays comparable and prints as given.
type Mask string

// None says whether the mask occludes nothing.
func (m Mask) None() bool { return strings.TrimSpace(string(m)) == "" }

// String names the mask in settings and captions ("" for none).
func (m Mask) String() string {
	if m.None() {
		return ""
	}
	return "mask " + strings.TrimPrefix(string(m), "rows:")
}

// ParseMask reads the CLI's form: "x0,y0,x1,y1" (a rectangle of patches) or a list of
// pixel_values rows as "rows:3,4,5".
func ParseMask(s string) (Mask, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	if rest, ok := strings.CutPrefix(s, "rows:"); ok {
		rows, err := parseInts(rest)
		if err != nil || len(rows) == 0 {
			return "", fmt.Errorf("mask %s: want rows:R,R,... (pixel_values rows, 0 or more)", QuoteShort(s))
		}
		slices.Sort(rows)
		rows = slices.Compact(rows)
		parts := make([]string, len(rows))
		for i, r := range rows {
			parts[i] = strconv.Itoa(r)
		}
		return Mask("rows:" + strings.Join(parts, ",")), nil
	}
	v, err := parseInts(strings.TrimPrefix(s, "rect:"))
	if err != nil || len(v) != 4 || v[2] <= v[0] || v[3] <= v[1] {
		return "", fmt.Errorf("mask %s: want x0,y0,x1,y1 (patch columns x0..x1-1 and rows y0..y1-1 of the image) or rows:R,R,...", QuoteShort(s))
	}
	return Mask(fmt.Sprintf("rect:%d,%d,%d,%d", v[0], v[1], v[2], v[3])), nil
}

func parseInts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%s", QuoteShort(f))
		}
		out = append(out, n)
	}
	return out, nil
}

// Rows is the mask's pixel_values rows on the page lay (before any arrangement), refusing
// patches outside it.
func (m Mask) Rows(lay *geom.Layout) ([]int, error) {
	if m.None() {
		return nil, nil
	}
	if rest, ok := strings.CutPrefix(string(m), "rows:"); ok {
		rows, err := parseInts(rest)
		if err != nil {
			return nil, fmt.Errorf("mask %s: %v", m, err)
		}
		for _, r := range rows {
			if r >= lay.Rows() {
				return nil, fmt.Errorf("mask row %d: the page has %d patches (0-%d)", r, lay.Rows(), lay.Rows()-1)
			}
		}
		return rows, nil
	}
	v, _ := parseInts(strings.TrimPrefix(string(m), "rect:"))
	g := lay.Grids[0]
	if len(v) != 4 || v[2] > g.W || v[3] > g.H {
		return nil, fmt.Errorf("mask %s: the image is %d x %d patches (columns x rows)", strings.TrimPrefix(string(m), "rect:"), g.W, g.H)
	}
	var rows []int
	for y := v[1]; y < v[3]; y++ {
		for x := v[0]; x < v[2]; x++ {
			rows = append(rows, lay.ProcessorRow(lay.Index(0, 0, y, x)))
		}
	}
	slices.Sort(rows)
	return rows, nil
}

// Name is how settings and captions name it (Intervention).
func (m Mask) Name() string { return m.String() }

// Effect says what it does (Intervention).
func (m Mask) Effect() string {
	return "the patches replaced by the page's mean colour before the embedding"
}

// From is 0: the embedding changes (Intervention).
func (m Mask) From() int { return 0 }

// Plan lays the mask out on the page (Intervention): the hook occludes its rows.
func (m Mask) Plan(t Tower) (any, error) {
	rows, err := m.Rows(t.Layout)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	return occlusion{rows: rows, dim: t.PatchDim, channels: t.Channels}, nil
}

// occlusion is a mask laid out on a page: the pixel_values rows it occludes.
type occlusion struct {
	rows          []int
	dim, channels int
}

// Pixels is the page with the rows occluded (a copy).
func (o occlusion) Pixels(pixels []float32) []float32 {
	return occlude(pixels, o.dim, o.channels, o.rows)
}

// occlude returns pixels ([S, C*rest], the processor's order) with rows replaced by the
// page's mean of each channel (a float64 sum over every row, rounded once); pixels itself
// when there are none.
func occlude(pixels []float32, dim, channels int, rows []int) []float32 {
	if len(rows) == 0 {
		return pixels
	}
	per := dim / channels
	S := len(pixels) / dim
	mean := make([]float32, channels)
	for c := range channels {
		var s float64
		for r := range S {
			for _, v := range pixels[r*dim+c*per : r*dim+(c+1)*per] {
				s += float64(v)
			}
		}
		mean[c] = float32(s / float64(S*per))
	}
	out := slices.Clone(pixels)
	for _, r := range rows {
		for c := range channels {
			row := out[r*dim+c*per : r*dim+(c+1)*per]
			for i := range row {
				row[i] = mean[c]
			}
		}
	}
	return out
}

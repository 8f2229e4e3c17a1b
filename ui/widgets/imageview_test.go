// imageview_test.go: pins the patch <-> sequence-index mapping of ImageView in taps, hover,
// overlay, selection and marks, under letterboxing. Invariant kept: patch (r,c) is
// Index(r,c), never r*Cols+c; the merge-order grid here makes the two differ for (2,5) (25 vs
// 21), so the mutation "raster index somewhere" fails these tests rather than passing silently.
package widgets

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
)

// ivTestPhoto is a W x H image with a smooth, non-constant content.
func ivTestPhoto(W, H int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	for y := 0; y < H; y++ {
		for x := 0; x < W; x++ {
			img.SetRGBA(x, y, color.RGBA{uint8(40 + x*150/W), uint8(60 + y*120/H), uint8((x + 2*y) % 200), 255})
		}
	}
	return img
}

// ivTestCentre is the widget-local centre of patch (r,c) of a W x H image on a grid, computed
// from scratch: fit the image inside size keeping its aspect, centred.
func ivTestCentre(size fyne.Size, W, H int, g PatchGrid, r, c int) fyne.Position {
	sc := math.Min(float64(size.Width)/float64(W), float64(size.Height)/float64(H))
	ox := (float64(size.Width) - float64(W)*sc) / 2
	oy := (float64(size.Height) - float64(H)*sc) / 2
	pw, ph := float64(W)/float64(g.Cols), float64(H)/float64(g.Rows)
	return fyne.NewPos(float32(ox+(float64(c)+0.5)*pw*sc), float32(oy+(float64(r)+0.5)*ph*sc))
}

func TestPatchGridCheck(t *testing.T) {
	if err := (PatchGrid{Rows: 18, Cols: 28, Index: ivTestMergeIndex(28)}).Check(); err != nil {
		t.Errorf("18x28 merge grid: %v", err)
	}
	if err := (PatchGrid{Rows: 2, Cols: 2, Index: func(r, c int) int { return r }}).Check(); err == nil {
		t.Error("Check accepted an Index with repeats")
	}
}

func TestImageViewTapSelectsMergeIndexWithLetterbox(t *testing.T) {
	const W, H = 256, 128
	for _, tc := range []struct {
		name      string
		size      fyne.Size
		letterbox fyne.Position // a point outside the image, or (-1,-1) when there is none
	}{
		{"same aspect", fyne.NewSize(512, 256), fyne.NewPos(-1, -1)},
		{"bars above and below", fyne.NewSize(330, 400), fyne.NewPos(165, 30)},
		{"bars left and right", fyne.NewSize(700, 220), fyne.NewPos(40, 110)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, _, g := ivTestView(t, ivTestPhoto(W, H), tc.size)
			var got []int
			v.OnSelect = func(p int) { got = append(got, p) }

			want := ivTestMergeIndex(8)(2, 5)
			if want == 2*8+5 {
				t.Fatal("test grid does not tell merge order from raster order")
			}
			test.TapAt(v, ivTestCentre(tc.size, W, H, g, 2, 5))
			if len(got) != 1 || got[0] != want {
				t.Fatalf("tap on patch (2,5): OnSelect got %v, want [%d]", got, want)
			}
			if v.Selected() != want {
				t.Errorf("Selected() = %d, want %d", v.Selected(), want)
			}
			if tc.letterbox.X >= 0 {
				test.TapAt(v, tc.letterbox)
				if len(got) != 1 {
					t.Errorf("tap in the letterbox called OnSelect: %v", got)
				}
				if v.PatchAt(tc.letterbox) != -1 {
					t.Errorf("PatchAt(letterbox) = %d, want -1", v.PatchAt(tc.letterbox))
				}
				if v.Selected() != want {
					t.Errorf("tap in the letterbox changed the selection to %d", v.Selected())
				}
			}
		})
	}
}

func TestImageViewPatchAtEveryPatchAndEdges(t *testing.T) {
	const W, H = 256, 128
	size := fyne.NewSize(330, 400) // scale 330/256, image rows 317.5.. : boundaries fall between pixels
	v, _, g := ivTestView(t, ivTestPhoto(W, H), size)
	sc := float32(330.0 / 256.0)
	oy := (400 - float32(H)*sc) / 2
	for r := range g.Rows {
		for c := range g.Cols {
			want := g.Index(r, c)
			ctr := ivTestCentre(size, W, H, g, r, c)
			if got := v.PatchAt(ctr); got != want {
				t.Errorf("PatchAt(centre of (%d,%d)) = %d, want %d", r, c, got, want)
			}
			// 1.5 units inside each edge is still the same patch
			x0, x1 := float32(c*32)*sc, float32((c+1)*32)*sc
			y0, y1 := oy+float32(r*32)*sc, oy+float32((r+1)*32)*sc
			for _, p := range []fyne.Position{{X: x0 + 1.5, Y: y0 + 1.5}, {X: x1 - 1.5, Y: y1 - 1.5}} {
				if got := v.PatchAt(p); got != want {
					t.Errorf("PatchAt(%v) near the edges of (%d,%d) = %d, want %d", p, r, c, got, want)
				}
			}
		}
	}
	for _, p := range []fyne.Position{{X: -1, Y: 200}, {X: 331, Y: 200}, {X: 100, Y: oy - 2}, {X: 100, Y: 400 - oy + 2}} {
		if got := v.PatchAt(p); got != -1 {
			t.Errorf("PatchAt(%v) outside the image = %d, want -1", p, got)
		}
	}
}

func TestImageViewOverlayBrightestWhereLargestValue(t *testing.T) {
	const W, H = 256, 128
	v, win, g := ivTestView(t, ivTestGray(W, H, 128), fyne.NewSize(600, 220))
	vals := make([]float32, g.Rows*g.Cols)
	for i := range vals {
		vals[i] = 0.1 * float32(i%3)
	}
	hot := g.Index(2, 5) // 25 in merge order, 21 in raster order
	if hot == 2*8+5 {
		t.Fatal("test grid does not tell merge order from raster order")
	}
	vals[hot] = 1
	v.SetOverlay(vals, Viridis, 0, 1)
	v.SetOpacity(0.8)

	capImg := win.Canvas().Capture()
	luma := func(c color.Color) float64 {
		r, g, b, _ := c.RGBA()
		return 0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)
	}
	best := -1.0
	b := capImg.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			best = math.Max(best, luma(capImg.At(x, y)))
		}
	}
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if luma(capImg.At(x, y)) >= best-1 {
				n++
				if p := v.PatchAt(fyne.NewPos(float32(x)+0.5, float32(y)+0.5)); p != hot {
					t.Fatalf("brightest captured pixel (%d,%d) is in patch %d, want %d", x, y, p, hot)
				}
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d brightest pixels: the hot patch is not filled", n)
	}

	// the snapshot at image resolution: colour = photo*(1-a) + cm*a in the hot patch and elsewhere
	snap := v.Snapshot()
	blend := func(c color.NRGBA) [3]float64 {
		return [3]float64{128*0.2 + float64(c.R)*0.8, 128*0.2 + float64(c.G)*0.8, 128*0.2 + float64(c.B)*0.8}
	}
	for _, tc := range []struct {
		x, y int
		want [3]float64
	}{
		{5*32 + 16, 2*32 + 16, blend(Viridis.At(1))},                                   // (2,5)
		{5*32 + 16, 1*32 + 16, blend(Viridis.At(float64(vals[g.Index(1, 5)])))},        // (1,5)
		{5*32 + 16, 2*32 + 16 - 64, blend(Viridis.At(float64(vals[g.Index(0, 5)])))},   // (0,5)
		{0*32 + 3, 3*32 + 30, blend(Viridis.At(Normalize(vals[g.Index(3, 0)], 0, 1)))}, // (3,0)
	} {
		r, gg, bb, _ := snap.At(tc.x, tc.y).RGBA()
		got := [3]float64{float64(r >> 8), float64(gg >> 8), float64(bb >> 8)}
		for k := range 3 {
			if math.Abs(got[k]-tc.want[k]) > 1 {
				t.Errorf("snapshot (%d,%d) = %v, want %v", tc.x, tc.y, got, tc.want)
				break
			}
		}
	}
}

func TestImageViewOpacityZeroShowsPhotoUnchanged(t *testing.T) {
	const W, H = 640, 320
	photo := ivTestPhoto(W, H)
	v, win, g := ivTestView(t, photo, fyne.NewSize(W, H)) // 1:1, so the captured pixels are the image's
	vals := make([]float32, g.Rows*g.Cols)
	for i := range vals {
		vals[i] = float32(i) / 31
	}
	v.SetOverlay(vals, Magma, 0, 1)

	v.SetOpacity(0)
	if v.Opacity() != 0 {
		t.Fatalf("Opacity() = %v", v.Opacity())
	}
	ov := v.OverlayImage()
	capImg := win.Canvas().Capture()
	for y := 0; y < H; y += 3 {
		for x := 0; x < W; x += 3 {
			want := photo.RGBAAt(x, y)
			if got := color.RGBAModel.Convert(ov.At(x, y)).(color.RGBA); got != want {
				t.Fatalf("OverlayImage(%d,%d) = %v, want the photo's %v", x, y, got, want)
			}
			if got := color.RGBAModel.Convert(capImg.At(x, y)).(color.RGBA); got != want {
				t.Fatalf("captured (%d,%d) = %v, want the photo's %v", x, y, got, want)
			}
		}
	}

	// opacity 1: every patch is exactly its colour
	v.SetOpacity(1)
	ov = v.OverlayImage()
	for r := range g.Rows {
		for c := range g.Cols {
			want := Magma.At(float64(vals[g.Index(r, c)]))
			got := color.NRGBAModel.Convert(ov.At(c*80+40, r*80+40)).(color.NRGBA)
			if got != want {
				t.Errorf("opacity 1, patch (%d,%d) = %v, want %v", r, c, got, want)
			}
		}
	}
}

func TestImageViewSelectionBoxInSnapshotAndOnScreen(t *testing.T) {
	v, win, g := ivTestView(t, ivTestGray(256, 128, 90), fyne.NewSize(512, 256))
	seq := g.Index(1, 3) // 7; raster 7 would be (0,7)
	v.SetSelected(seq)
	if v.Selected() != seq {
		t.Fatalf("Selected() = %d, want %d", v.Selected(), seq)
	}

	white := color.RGBA{255, 255, 255, 255}
	black := color.RGBA{0, 0, 0, 255}
	at := func(img image.Image, x, y int) color.RGBA { return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) }
	snap := v.Snapshot()
	// patch (1,3): x in [96,128), y in [32,64): black 1 outside, white 2, black 1 inside
	for _, tc := range []struct {
		x, y int
		want color.RGBA
	}{
		{95, 48, black}, {96, 48, white}, {97, 48, white}, {98, 48, black},
		{128, 48, black}, {127, 48, white}, {126, 48, white}, {125, 48, black},
		{112, 31, black}, {112, 32, white}, {112, 33, white}, {112, 34, black},
		{112, 64, black}, {112, 63, white}, {112, 62, white}, {112, 61, black},
	} {
		if got := at(snap, tc.x, tc.y); got != tc.want {
			t.Errorf("snapshot (%d,%d) = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
	gray := color.RGBA{90, 90, 90, 255}
	for _, p := range [][2]int{{112, 48}, {232, 16}, {16, 16}} { // inside (1,3); raster-7 patch (0,7); far away
		if got := at(snap, p[0], p[1]); got != gray {
			t.Errorf("snapshot (%d,%d) = %v, want the untouched %v", p[0], p[1], got, gray)
		}
	}
	if got := at(snap, 7*32, 16); got == white { // the left edge of (0,7)
		t.Error("a box is drawn at the raster-order patch")
	}

	// on screen (scale 2): the patch spans x [192,256), y [64,128)
	capImg := win.Canvas().Capture()
	for _, tc := range []struct {
		x, y int
		want color.RGBA
	}{
		{191, 96, black}, {192, 96, white}, {193, 96, white}, {194, 96, black},
		{255, 96, white}, {256, 96, black}, {224, 64, white}, {224, 127, white},
		{224, 96, gray},
	} {
		if got := at(capImg, tc.x, tc.y); got != tc.want {
			t.Errorf("captured (%d,%d) = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}

	v.SetSelected(-1)
	if v.Selected() != -1 {
		t.Errorf("Selected() after SetSelected(-1) = %d", v.Selected())
	}
	if got := at(v.Snapshot(), 96, 48); got != gray {
		t.Errorf("after SetSelected(-1) the box is still in the snapshot: %v", got)
	}
	if got := at(win.Canvas().Capture(), 192, 96); got != gray {
		t.Errorf("after SetSelected(-1) the box is still on screen: %v", got)
	}
}

func TestImageViewMarksAreNumberedOutlines(t *testing.T) {
	v, _, g := ivTestView(t, ivTestGray(256, 128, 90), fyne.NewSize(512, 256))
	first, second := g.Index(0, 0), g.Index(3, 5) // (3,5) = 31 in merge order, 29 in raster order
	v.SetMarked([]int{first, second})

	cyan := color.RGBA(ivMarkColor)
	at := func(img image.Image, x, y int) color.RGBA { return color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) }
	snap := v.Snapshot()
	// (3,5): x in [160,192), y in [96,128): black halo, cyan line one pixel in
	for _, tc := range []struct {
		x, y int
		want color.RGBA
	}{
		{160, 115, color.RGBA{0, 0, 0, 255}}, {161, 115, cyan}, {162, 115, color.RGBA{0, 0, 0, 255}},
		{190, 115, cyan}, {176, 126, cyan}, {176, 97, cyan},
	} {
		if got := at(snap, tc.x, tc.y); got != tc.want {
			t.Errorf("snapshot (%d,%d) = %v, want %v", tc.x, tc.y, got, tc.want)
		}
	}
	if got := at(snap, 7*32+1, 3*32+16); got == cyan { // seq 31 in raster order is (3,7)
		t.Error("a mark is drawn at the raster-order patch (3,7)")
	}
	// its badge: white digit pixels in the top-left corner
	whites := 0
	for y := 97; y < 110; y++ {
		for x := 161; x < 171; x++ {
			if at(snap, x, y) == (color.RGBA{255, 255, 255, 255}) {
				whites++
			}
		}
	}
	if whites < 5 {
		t.Errorf("no number drawn in the mark's badge (%d white pixels)", whites)
	}

	// on screen: labels "1" and "2", each inside its own patch
	r := test.WidgetRenderer(v).(*ivRenderer)
	if len(r.marks) != 2 {
		t.Fatalf("%d marks on screen, want 2", len(r.marks))
	}
	for i, rc := range [][2]int{{0, 0}, {3, 5}} {
		m := r.marks[i]
		if m.label.Text != fmt.Sprint(i+1) || m.label.Hidden {
			t.Errorf("mark %d label %q hidden=%v", i, m.label.Text, m.label.Hidden)
		}
		p := m.label.Position()
		if got := v.PatchAt(p.AddXY(1, 1)); got != g.Index(rc[0], rc[1]) {
			t.Errorf("mark %d label at %v lies on patch %d, want %d", i+1, p, got, g.Index(rc[0], rc[1]))
		}
	}
	v.SetMarked(nil)
	if got := at(v.Snapshot(), 161, 115); got == cyan {
		t.Error("SetMarked(nil) left the mark in the snapshot")
	}
}

func TestImageViewGridLines(t *testing.T) {
	v, _, _ := ivTestView(t, ivTestGray(256, 128, 40), fyne.NewSize(512, 256))
	gray := color.RGBA{40, 40, 40, 255}
	at := func(x, y int) color.RGBA { return color.RGBAModel.Convert(v.Snapshot().At(x, y)).(color.RGBA) }
	if at(32, 10) != gray {
		t.Fatal("grid drawn while hidden")
	}
	v.SetShowGrid(true)
	for _, p := range [][2]int{{32, 10}, {224, 100}, {10, 32}, {100, 96}} {
		if got := at(p[0], p[1]); got.R <= 40+20 {
			t.Errorf("no grid line at %v: %v", p, got)
		}
	}
	for _, p := range [][2]int{{33, 10}, {31, 10}, {10, 33}, {16, 16}} {
		if got := at(p[0], p[1]); got != gray {
			t.Errorf("grid line off the patch boundary at %v: %v", p, got)
		}
	}
	r := test.WidgetRenderer(v).(*ivRenderer)
	if len(r.lines) != 7+3 {
		t.Errorf("%d grid lines on screen, want 10", len(r.lines))
	}
	v.SetShowGrid(false)
	if at(32, 10) != gray || len(r.lines) != 0 {
		t.Error("grid still drawn after SetShowGrid(false)")
	}
}

func TestImageViewHoverTextAppearsAndDisappears(t *testing.T) {
	const W, H = 256, 128
	size := fyne.NewSize(700, 220) // bars left and right
	v, win, g := ivTestView(t, ivTestGray(W, H, 200), size)
	var hovers []int
	v.OnHover = func(p int) { hovers = append(hovers, p) }
	v.SetHoverText(func(p int) string { return fmt.Sprintf("patch %d", p) })
	r := test.WidgetRenderer(v).(*ivRenderer)
	before := win.Canvas().Capture()

	pos := ivTestCentre(size, W, H, g, 2, 5)
	v.MouseIn(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: pos}})
	want := g.Index(2, 5)
	if len(hovers) != 1 || hovers[0] != want {
		t.Fatalf("OnHover calls %v, want [%d]", hovers, want)
	}
	if r.tipText.Hidden || r.tipText.Text != fmt.Sprintf("patch %d", want) {
		t.Fatalf("tooltip hidden=%v text %q", r.tipText.Hidden, r.tipText.Text)
	}
	tp := r.tipBg.Position()
	if d := math.Hypot(float64(tp.X-pos.X), float64(tp.Y-pos.Y)); d > 40 {
		t.Errorf("tooltip at %v, far from the pointer at %v", tp, pos)
	}
	after := win.Canvas().Capture()
	tx, ty := int(tp.X)+2, int(tp.Y)+2
	if before.At(tx, ty) == after.At(tx, ty) {
		t.Error("the tooltip is not visible in the capture")
	}

	// moving within the patch does not call OnHover again; the tooltip follows
	v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: pos.AddXY(3, 2)}})
	if len(hovers) != 1 {
		t.Errorf("OnHover called again inside the same patch: %v", hovers)
	}
	if r.tipBg.Position() == tp {
		t.Error("the tooltip did not follow the pointer")
	}

	// into the letterbox: -1 and no tooltip
	v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(30, 110)}})
	if len(hovers) != 2 || hovers[1] != -1 {
		t.Errorf("OnHover calls %v, want a trailing -1", hovers)
	}
	if !r.tipText.Hidden || !r.tipBg.Hidden {
		t.Error("tooltip still shown over the letterbox")
	}

	// back in, then out of the widget
	v.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: pos}})
	if r.tipText.Hidden {
		t.Error("tooltip not shown again")
	}
	v.MouseOut()
	if len(hovers) != 4 || hovers[3] != -1 {
		t.Errorf("OnHover calls %v, want ... %d, -1", hovers, want)
	}
	if !r.tipText.Hidden {
		t.Error("tooltip still shown after MouseOut")
	}
	if got, want := win.Canvas().Capture(), before; got.At(tx, ty) != want.At(tx, ty) {
		t.Error("tooltip pixels left on screen after MouseOut")
	}

	// the default text names row, column, sequence index and the overlay value
	v.SetHoverText(nil)
	vals := make([]float32, 32)
	vals[want] = 0.031
	v.SetOverlay(vals, Viridis, 0, 0.05)
	test.MoveMouse(win.Canvas(), pos)
	if got, exp := r.tipText.Text, fmt.Sprintf("row 2 col 5 (patch %d): 0.031", want); got != exp {
		t.Errorf("default hover text %q, want %q", got, exp)
	}
}

func TestImageViewSetImageResetsForNewGrid(t *testing.T) {
	v, _, g := ivTestView(t, ivTestGray(256, 128, 50), fyne.NewSize(512, 256))
	v.SetOverlay(make([]float32, 32), Viridis, 0, 1)
	v.SetSelected(5)
	v.SetImage(ivTestGray(256, 128, 60), g) // same grid: kept
	if v.Selected() != 5 {
		t.Errorf("same-size grid dropped the selection")
	}
	v.SetImage(ivTestGray(128, 128, 60), PatchGrid{Rows: 2, Cols: 2, Index: ivTestMergeIndex(2)}) // new grid: cleared
	if v.Selected() != -1 {
		t.Errorf("new grid kept selection %d", v.Selected())
	}
	if c := color.RGBAModel.Convert(v.OverlayImage().At(10, 10)).(color.RGBA); c != (color.RGBA{60, 60, 60, 255}) {
		t.Errorf("new grid kept the old overlay: %v", c)
	}
	bad := PatchGrid{Rows: 2, Cols: 2, Index: func(r, c int) int { return 0 }}
	v.SetImage(ivTestGray(128, 128, 60), bad) // logged, not selectable, no panic
	if p := v.PatchAt(fyne.NewPos(256, 128)); p != -1 {
		t.Errorf("invalid grid: PatchAt = %d, want -1", p)
	}
	if v.Snapshot() == nil {
		t.Error("invalid grid: the photo is gone")
	}
	v.SetImage(nil, PatchGrid{})
	if v.Snapshot() != nil || v.OverlayImage() != nil || v.PatchAt(fyne.NewPos(10, 10)) != -1 {
		t.Error("SetImage(nil) left an image")
	}
}

func BenchmarkImageViewOverlay(b *testing.B) {
	test.NewTempApp(b)
	const W, H, n = 1024, 1024, 64
	g := PatchGrid{Rows: n, Cols: n, Index: ivTestMergeIndex(n)}
	v := NewImageView()
	v.SetImage(ivTestPhoto(W, H), g)
	win := test.NewWindow(v)
	win.Resize(fyne.NewSize(800, 800))
	defer win.Close()
	vals := make([]float32, n*n)
	for i := range vals {
		vals[i] = float32(i%97) / 97
	}
	b.ReportAllocs()
	for b.Loop() {
		v.SetOverlay(vals, Viridis, 0, 1)
	}
}

func TestImageViewBlendRowMatchesPerChannelFormula(t *testing.T) {
	src := make([]byte, 4*7) // 7 pixels: three 2-pixel steps and an odd tail
	for i := range src {
		src[i] = byte(i*37 + 11)
	}
	col := color.NRGBA{200, 17, 99, 255}
	for _, w := range []uint64{0, 1, 100, 154, 255, 256} {
		cterm := (uint64(col.R)*w + 128) | (uint64(col.B)*w+128)<<16 | (uint64(col.G)*w+128)<<32 | (255*w+128)<<48
		for _, n := range []int{1, 2, 3, 7} {
			dst := make([]byte, 4*n)
			ivBlendRow(dst, src[:4*n], 256-w, cterm)
			for i := 0; i < 4*n; i++ {
				c := [4]uint64{uint64(col.R), uint64(col.G), uint64(col.B), 255}[i%4]
				want := byte((uint64(src[i])*(256-w) + c*w + 128) >> 8)
				if dst[i] != want {
					t.Fatalf("w=%d n=%d byte %d: %d, want %d", w, n, i, dst[i], want)
				}
			}
			if w == 0 && string(dst) != string(src[:4*n]) {
				t.Errorf("w=0 changed the pixels")
			}
		}
	}
}

// headgrid_test.go: pins which map sits in which slot of the HeadGrid, what a tap reports and
// the per-head normalisation. Invariant kept: slot i shows maps[i] labelled "h<i>", scaled to
// its own maximum, and a tap in slot i reports i. The mutations it catches: one global
// maximum for all heads, a slot/head off-by-one, raster instead of merge order in a thumbnail.
package widgets

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
)

// headGridTestMaps gives head h a single peak at patch (h%4, (3h+1)%8) and a floor of a
// tenth of it, with magnitudes from 0.01 to 10 across heads.
func headGridTestMaps(g PatchGrid, heads int) [][]float32 {
	maps := make([][]float32, heads)
	for h := range maps {
		scale := float32(math.Pow(10, float64(h%4-2)))
		m := make([]float32, g.Rows*g.Cols)
		for i := range m {
			m[i] = 0.1 * scale
		}
		m[g.Index(h%4, (3*h+1)%8)] = scale
		maps[h] = m
	}
	return maps
}

func headGridTestWindow(t *testing.T, onSelect func(int)) (*HeadGrid, fyne.Window, *headGridRenderer, PatchGrid) {
	t.Helper()
	test.NewTempApp(t)
	g := ivTestGrid()
	hg := NewHeadGrid(onSelect)
	hg.SetMaps(headGridTestMaps(g, 16), g, Viridis)
	win := ivTestWindow(t, hg, fyne.NewSize(640, 420))
	return hg, win, test.WidgetRenderer(hg).(*headGridRenderer), g
}

func headGridTestCentre(s headGridSlot) fyne.Position {
	return s.img.Position().AddXY(s.img.Size().Width/2, s.img.Size().Height/2)
}

func TestHeadGridSlotsShowTheirOwnHeadAtFullScale(t *testing.T) {
	_, win, r, g := headGridTestWindow(t, nil)
	if len(r.slots) != 16 {
		t.Fatalf("%d slots, want 16", len(r.slots))
	}
	capImg := win.Canvas().Capture()
	for h, s := range r.slots {
		if s.label.Text != fmt.Sprintf("h%d", h) || s.label.Hidden {
			t.Errorf("slot %d label %q", h, s.label.Text)
		}
		lp := s.label.Position()
		if lp.Y < s.img.Position().Y+s.img.Size().Height || math.Abs(float64(lp.X-s.img.Position().X)) > 1 {
			t.Errorf("slot %d label at %v is not under its map at %v", h, lp, s.img.Position())
		}
		if h > 0 { // row-major: right of the previous slot, or on a lower row
			p, q := r.slots[h-1].img.Position(), s.img.Position()
			if !(q.Y == p.Y && q.X > p.X || q.Y > p.Y) {
				t.Errorf("slot %d at %v does not follow slot %d at %v", h, q, h-1, p)
			}
		}
		// the hottest pixel of the slot lies in head h's peak patch and shows cm.At(1)
		pos, size := s.img.Position(), s.img.Size()
		if size.Width < 40 || math.Abs(float64(size.Width/size.Height-2)) > 0.05 {
			t.Errorf("slot %d map %v: too small or not the grid's 2:1 aspect", h, size)
		}
		best, bx, by := -1.0, 0, 0
		for y := int(pos.Y) + 1; y < int(pos.Y+size.Height)-1; y++ {
			for x := int(pos.X) + 1; x < int(pos.X+size.Width)-1; x++ {
				c := color.NRGBAModel.Convert(capImg.At(x, y)).(color.NRGBA)
				if l := colormapTestLightness(c); l > best {
					best, bx, by = l, x, y
				}
			}
		}
		c := int((float32(bx) + 0.5 - pos.X) / size.Width * float32(g.Cols))
		rr := int((float32(by) + 0.5 - pos.Y) / size.Height * float32(g.Rows))
		if rr != h%4 || c != (3*h+1)%8 {
			t.Errorf("slot %d: hottest pixel in patch (%d,%d), want (%d,%d)", h, rr, c, h%4, (3*h+1)%8)
		}
		if got := capImg.At(bx, by); !legendTestClose(got, Viridis.At(1), 2) {
			t.Errorf("slot %d: peak colour %v, want %v (each head scaled to its own max)", h, got, Viridis.At(1))
		}
		// the floor is a tenth of the maximum in every head
		fx := int(pos.X + size.Width*(float32((3*h+1+4)%8)+0.5)/8)
		fy := int(pos.Y + size.Height*(float32(h%4)+0.5)/4)
		if got := capImg.At(fx, fy); !legendTestClose(got, Viridis.At(0.1), 2) {
			t.Errorf("slot %d: floor colour %v, want %v", h, got, Viridis.At(0.1))
		}
	}
}

func TestHeadGridTapSelectsHead(t *testing.T) {
	var got []int
	hg, win, r, _ := headGridTestWindow(t, func(h int) { got = append(got, h) })
	test.TapAt(hg, headGridTestCentre(r.slots[2]))
	if len(got) != 1 || got[0] != 2 {
		t.Fatalf("tap on the 3rd map: onSelect got %v, want [2]", got)
	}
	if hg.Selected() != 2 {
		t.Errorf("Selected() = %d, want 2", hg.Selected())
	}
	// a tap on a label selects its head too
	lb := r.slots[5].label
	test.TapAt(hg, lb.Position().AddXY(lb.Size().Width/2, lb.Size().Height/2))
	if len(got) != 2 || got[1] != 5 {
		t.Errorf("tap on label h5: onSelect got %v", got)
	}
	// a tap in the gap between two slots selects nothing
	s0, s1 := r.slots[0].img, r.slots[1].img
	gap := fyne.NewPos((s0.Position().X+s0.Size().Width+s1.Position().X)/2, s0.Position().Y+s0.Size().Height/2)
	test.TapAt(hg, gap)
	if len(got) != 2 {
		t.Errorf("tap in a gap called onSelect: %v", got)
	}

	// the selected head is outlined in the primary colour, the others are not
	hg.SetSelected(2)
	capImg := win.Canvas().Capture()
	primary := color.NRGBAModel.Convert(theme.Color(theme.ColorNamePrimary)).(color.NRGBA)
	edgeAt := func(s headGridSlot) color.Color { return headGridTestAbove(capImg, s) }
	if c := edgeAt(r.slots[2]); !legendTestClose(c, primary, 2) {
		t.Errorf("above the selected map: %v, want the primary %v", c, primary)
	}
	for _, h := range []int{0, 1, 3, 5} {
		if c := edgeAt(r.slots[h]); legendTestClose(c, primary, 2) {
			t.Errorf("head %d is outlined but not selected", h)
		}
	}
	hg.SetSelected(-1)
	if c := headGridTestAbove(win.Canvas().Capture(), r.slots[2]); legendTestClose(c, primary, 2) {
		t.Error("outline left after SetSelected(-1)")
	}
}

// headGridTestAbove is the pixel 4 units above the middle of a slot's map: past the 2-unit
// gap, inside the 3-unit selection frame.
func headGridTestAbove(img image.Image, s headGridSlot) color.Color {
	p := s.img.Position()
	return img.At(int(p.X+s.img.Size().Width/2), int(p.Y)-4)
}

func TestHeadGridBackgroundShowsFaintly(t *testing.T) {
	hg, win, r, _ := headGridTestWindow(t, nil)
	s := r.slots[0]
	pos := headGridTestCentre(s)
	// head 0 has its floor at the centre patch; white photo lifts it, black photo darkens it
	hg.SetBackground(ivTestGray(256, 128, 255))
	light := color.NRGBAModel.Convert(win.Canvas().Capture().At(int(pos.X), int(pos.Y))).(color.NRGBA)
	hg.SetBackground(ivTestGray(256, 128, 0))
	dark := color.NRGBAModel.Convert(win.Canvas().Capture().At(int(pos.X), int(pos.Y))).(color.NRGBA)
	hg.SetBackground(nil)
	plain := color.NRGBAModel.Convert(win.Canvas().Capture().At(int(pos.X), int(pos.Y))).(color.NRGBA)
	want := Viridis.At(0.1)
	if plain != want {
		t.Fatalf("no background: %v, want %v", plain, want)
	}
	mix := func(c uint8, l float64) float64 {
		return float64(c)*(1-headGridBgWeight) + l*headGridBgWeight
	}
	if math.Abs(float64(light.G)-mix(want.G, 255)) > 1.5 || math.Abs(float64(dark.G)-mix(want.G, 0)) > 1.5 {
		t.Errorf("background blend: light %v dark %v, want G %.0f and %.0f", light, dark, mix(want.G, 255), mix(want.G, 0))
	}
}

func TestHeadGridEmptyAndResize(t *testing.T) {
	test.NewTempApp(t)
	hg := NewHeadGrid(nil)
	win := ivTestWindow(t, hg, fyne.NewSize(300, 200))
	r := test.WidgetRenderer(hg).(*headGridRenderer)
	if len(r.slots) != 0 || r.empty.Hidden {
		t.Error("an empty grid must show its placeholder")
	}
	test.TapAt(hg, fyne.NewPos(150, 100)) // no panic, no selection
	if hg.Selected() != -1 {
		t.Errorf("Selected() = %d on an empty grid", hg.Selected())
	}
	g := ivTestGrid()
	hg.SetMaps(headGridTestMaps(g, 16), g, Magma)
	hg.SetSelected(15)
	hg.SetMaps(headGridTestMaps(g, 4), g, Magma) // fewer heads: the selection past the end goes
	if hg.Selected() != -1 || len(r.slots) != 4 {
		t.Errorf("after 4 heads: Selected %d, %d slots", hg.Selected(), len(r.slots))
	}
	win.Resize(fyne.NewSize(900, 200))
	if w := r.slots[0].img.Size().Width; w < 60 {
		t.Errorf("maps stay %v wide in a wide window", w)
	}
}

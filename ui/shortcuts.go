package ui

// shortcuts.go: the keyboard. Plain keys (Space, the arrows, [ ], - =, Esc) go through the
// canvas's typed-key and typed-rune handlers, which Fyne calls only while no widget has
// keyboard focus, and which themselves do nothing while one has (but Esc): typing "-" in
// the threads entry types a minus, it does not change the head. (Clicking the image, or
// anywhere that takes no focus, gives the keys back.) The Ctrl/Cmd shortcuts are the main
// menu's (menu.go), shown next to their items.
//
// Invariant: a key moves the selection through the same Select* calls a click makes, and
// the query moves in grid units over the image (engine/geom's Pos and Index); the mutation
// that would silently break it: stepping the query by ±1 sequence index — in merge-window
// order the "patch to the right" is then often the one below.

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// keyMap is the keyboard map, as Help shows it.
var keyMap = [][2]string{
	{"Ctrl+O  (⌘O on macOS)", "open an image"},
	{"Ctrl+Shift+O", "open a checkpoint folder"},
	{"Ctrl+E", "export the view as PNG (File ▸ Export: timings, the run's tensors)"},
	{"Ctrl+1 … Ctrl+6", "show the Attention, Activations, Timings, Settings, Compare, What if tab"},
	{"Ctrl+Q", "quit"},
	{"Space", "play / pause"},
	{"← → ↑ ↓", "move the query patch one patch over the image"},
	{"[  ]", "previous / next block"},
	{"-  =", "previous / next head (before head 0: the mean of heads)"},
	{"Esc", "close the open menu or dialog"},
	{"", "Plain keys act while no text field has the keyboard: click the image to give it back."},
}

func (in *Inspector) installKeys() {
	c := in.Win.Canvas()
	c.SetOnTypedKey(in.typedKey)
	c.SetOnTypedRune(in.typedRune)
	if dc, ok := c.(desktop.Canvas); ok { // a desktop window: Shift held makes the map follow the pointer
		dc.SetOnKeyDown(in.keyDown)
		dc.SetOnKeyUp(in.keyUp)
	}
}

// keyDown and keyUp track Shift: GLFW's hover events carry no modifiers, so "hold Shift to
// follow" needs the key's own events. Pressing it over a patch makes that patch the query.
func (in *Inspector) keyDown(ev *fyne.KeyEvent) {
	if ev.Name == desktop.KeyShiftLeft || ev.Name == desktop.KeyShiftRight {
		in.panels.image.shiftDown(true)
	}
}

func (in *Inspector) keyUp(ev *fyne.KeyEvent) {
	if ev.Name == desktop.KeyShiftLeft || ev.Name == desktop.KeyShiftRight {
		in.panels.image.shiftDown(false)
	}
}

// focusHeld: a widget (an entry, a select...) has the keyboard; plain keys are its.
func (in *Inspector) focusHeld() bool { return in.Win.Canvas().Focused() != nil }

func (in *Inspector) typedKey(ev *fyne.KeyEvent) {
	if ev.Name != fyne.KeyEscape && in.focusHeld() {
		return
	}
	switch ev.Name {
	case fyne.KeySpace:
		in.panels.toolbar.togglePlay()
	case fyne.KeyLeft:
		in.moveQuery(0, -1)
	case fyne.KeyRight:
		in.moveQuery(0, 1)
	case fyne.KeyUp:
		in.moveQuery(-1, 0)
	case fyne.KeyDown:
		in.moveQuery(1, 0)
	case fyne.KeyEscape:
		in.closeTop()
	}
}

func (in *Inspector) typedRune(r rune) {
	if in.focusHeld() {
		return
	}
	switch r {
	case '[':
		in.SelectBlock(in.Sel.Block - 1)
	case ']':
		in.SelectBlock(in.Sel.Block + 1)
	case '-', '_':
		in.stepHead(-1)
	case '=', '+':
		in.stepHead(1)
	}
}

// moveQuery moves the query patch dRow rows and dCol columns within its frame, stopping at
// the edges.
func (in *Inspector) moveQuery(dRow, dCol int) {
	s := in.Snap
	if !s.Loaded() {
		return
	}
	lay, q := s.Layout, in.Sel.Query
	gi := lay.GridOf[q]
	g := lay.Grids[gi]
	start := 0
	for _, pg := range lay.Grids[:gi] {
		start += pg.Patches()
	}
	t := (q - start) / (g.H * g.W)
	p := lay.Pos[q]
	row := min(max(p.Row+dRow, 0), g.H-1)
	col := min(max(p.Col+dCol, 0), g.W-1)
	in.SelectQuery(lay.Index(gi, t, row, col))
}

// stepHead moves along mean of heads (-1), head 0, head 1, ..., stopping at the ends.
func (in *Inspector) stepHead(d int) {
	if !in.Snap.Loaded() {
		return
	}
	h := min(max(in.Sel.Head+d, -1), in.Snap.Config.Heads-1)
	if h != in.Sel.Head {
		in.SelectHead(h)
	}
}

// closeTop closes the topmost pop-up: a menu, a dialog; else the tooltip.
func (in *Inspector) closeTop() {
	c := in.Win.Canvas()
	top := c.Overlays().Top()
	switch o := top.(type) {
	case nil:
		in.chrome.root.layer.hide()
	case *widget.PopUpMenu:
		o.Dismiss()
	default:
		if d := in.topDialog(top); d != nil {
			d.Hide() // the dialog's own Hide: its callback says it was dismissed
			return
		}
		top.Hide()
		c.Overlays().Remove(top)
	}
}

package ui

// desktop_test.go: the conventions of a desktop tool, headless — the window fits a
// 1366x768 screen with the largest model, the main menu, the keyboard, tooltips, what the
// preferences keep between launches, and a re-run of the page keeping the selection.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/engine/dtype"
	"github.com/turbospark/inspector/engine/synth"
)

// bigModel writes a checkpoint with the largest layout the models have: 27 blocks, 16 heads.
func bigModel(t *testing.T) string {
	t.Helper()
	cfg := engine.Config{ModelType: "qwen3_vl", Depth: 27, Hidden: 64, Heads: 16, Intermediate: 64, OutHidden: 32,
		InChannels: 3, PatchSize: 16, TemporalPatchSize: 2, MergeSize: 2, NumPositionEmbedding: 2304,
		Deepstack: []int{8, 16, 24}, HiddenAct: "gelu_pytorch_tanh", RopeTheta: 10000}
	dir := t.TempDir()
	if err := synth.Write(dir, cfg, synth.Options{DType: dtype.F32, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// On a 1366x768 screen the window gets about 1366x688 for its content: the title bar and
// Fyne's menu bar take the rest. Every tab must fit that with 27 blocks x 16 heads.
func TestWindowFits1366x768(t *testing.T) {
	const decorations = 80 // title bar (~37 px) and the main menu bar (~36 px)
	h := newHarness(t)
	h.in.MainMenu()
	h.in.OpenFiles(bigModel(t), demoPhoto)
	h.pump("the run", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	h.pump("head statistics", func() bool { return len(h.headStats().Dist) == 27 })
	h.win.Resize(fyne.NewSize(1366, 768-decorations))
	for _, tab := range h.in.tabs.Items {
		h.in.tabs.Select(tab)
		if m := h.win.Content().MinSize(); m.Width > 1366 || m.Height > 768-decorations {
			t.Errorf("%s tab: the window's content needs %v, more than 1366x%d", tab.Text, m, 768-decorations)
		}
		if m := tab.Content.MinSize(); m.Width > 1366/2 || m.Height > 768-decorations {
			t.Errorf("%s tab: its content needs %v", tab.Text, m)
		}
	}
	// At the default 1280x720 the Compare button shows without scrolling (a border once
	// gave its scroll one line: only the A and B headings showed).
	h.win.Resize(fyne.NewSize(1280, 720-decorations))
	h.in.tabs.SelectIndex(len(h.in.tabs.Items) - 1)
	d, p := fyne.CurrentApp().Driver(), h.in.panels.compare
	btn, view := d.AbsolutePositionForObject(p.runBtn), d.AbsolutePositionForObject(p.formScroll)
	if !p.runBtn.Visible() || btn.Y+p.runBtn.Size().Height > view.Y+p.formScroll.Size().Height || p.runBtn.Size().Height < p.runBtn.MinSize().Height {
		t.Errorf("the Compare button (at %v, %v) is not in view: the forms' scroll is %v at %v", btn, p.runBtn.Size(), p.formScroll.Size(), view)
	}
}

// press delivers a key the way the desktop driver does: to the focused widget if any, else
// to the canvas's handler.
func press(c fyne.Canvas, k fyne.KeyName) {
	ev := &fyne.KeyEvent{Name: k}
	if f := c.Focused(); f != nil {
		f.TypedKey(ev)
	} else if h := c.OnTypedKey(); h != nil {
		h(ev)
	}
}

// typeRunes delivers characters the way the desktop driver does (see press).
func typeRunes(c fyne.Canvas, s string) {
	for _, r := range s {
		if f := c.Focused(); f != nil {
			f.TypedRune(r)
		} else if h := c.OnTypedRune(); h != nil {
			h(r)
		}
	}
}

// The arrows move the query one patch over the image (not one sequence index), stopping at
// the edges; [ ] step blocks, - = step heads through the mean of heads.
func TestKeyboardMovesTheSelection(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	c, s := h.win.Canvas(), h.in.Snap
	g := patchGrid(s)
	start := s.Layout.Pos[h.in.Sel.Query]
	steps := []struct {
		key      fyne.KeyName
		dRow, dC int
	}{{fyne.KeyRight, 0, 1}, {fyne.KeyRight, 0, 2}, {fyne.KeyDown, 1, 2}, {fyne.KeyLeft, 1, 1}, {fyne.KeyUp, 0, 1}}
	for _, st := range steps {
		press(c, st.key)
		if want := g.At(start.Row+st.dRow, start.Col+st.dC); h.in.Sel.Query != want || h.in.panels.image.view.Selected() != want {
			t.Fatalf("after %s: query %d (view %d), want patch %d at row %d col %d", st.key, h.in.Sel.Query,
				h.in.panels.image.view.Selected(), want, start.Row+st.dRow, start.Col+st.dC)
		}
	}
	for i := 0; i < g.Cols+3; i++ {
		press(c, fyne.KeyLeft)
	}
	if p := s.Layout.Pos[h.in.Sel.Query]; p.Col != 0 || p.Row != start.Row {
		t.Errorf("Left past the edge: row %d col %d, want row %d col 0", p.Row, p.Col, start.Row)
	}

	h.in.SelectBlock(3)
	typeRunes(c, "[[")
	if h.in.Sel.Block != 1 {
		t.Errorf("block %d after [[ from 3", h.in.Sel.Block)
	}
	typeRunes(c, "]")
	if h.in.Sel.Block != 2 {
		t.Errorf("block %d after ]", h.in.Sel.Block)
	}
	typeRunes(c, "[[[[")
	if h.in.Sel.Block != 0 {
		t.Errorf("block %d after [ past block 0", h.in.Sel.Block)
	}
	if h.in.Sel.Head != -1 {
		t.Fatalf("head %d at start", h.in.Sel.Head)
	}
	typeRunes(c, "==")
	if h.in.Sel.Head != 1 || h.in.panels.attention.head.Selected != "head 1" {
		t.Errorf("head %d (%q) after == from the mean", h.in.Sel.Head, h.in.panels.attention.head.Selected)
	}
	typeRunes(c, "---")
	if h.in.Sel.Head != -1 {
		t.Errorf("head %d after --- from head 1, want -1 (the mean)", h.in.Sel.Head)
	}
	for i := 0; i < s.Config.Heads+2; i++ {
		typeRunes(c, "=")
	}
	if h.in.Sel.Head != s.Config.Heads-1 {
		t.Errorf("head %d after = past the last head", h.in.Sel.Head)
	}
}

// Space plays and pauses, through the same toggle as the button.
func TestSpacePlaysAndPauses(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	h.in.Ctl.PlayDelay = time.Minute // one block, then a long pause: Playing stays true
	h.in.Ctl.Restart()
	h.pump("restart", func() bool { return h.in.Snap.Next == 0 })
	press(h.win.Canvas(), fyne.KeySpace)
	if !h.in.Ctl.Playing() || h.in.panels.toolbar.play.Text != "Pause" {
		t.Fatalf("after Space: playing %v, button %q", h.in.Ctl.Playing(), h.in.panels.toolbar.play.Text)
	}
	press(h.win.Canvas(), fyne.KeySpace)
	if h.in.Ctl.Playing() || h.in.panels.toolbar.play.Text != "Play" {
		t.Errorf("after a second Space: playing %v, button %q", h.in.Ctl.Playing(), h.in.panels.toolbar.play.Text)
	}
}

// While a text entry has the keyboard, keys are the entry's: "-" is a minus in the threads
// field, not the previous head — even when the canvas's handlers are called directly (a
// native menu, another driver).
func TestKeysStayInAFocusedEntry(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	c := h.win.Canvas()
	typeRunes(c, "=")
	h.in.tabs.SelectIndex(3) // Settings
	entry := h.in.panels.settings.form.threads
	entry.SetText("")
	c.Focus(entry)
	if c.Focused() != entry {
		t.Fatal("the threads entry did not take the focus")
	}
	typeRunes(c, "-=[")
	press(c, fyne.KeyRight)
	if entry.Text != "-=[" {
		t.Errorf("the entry got %q, want the typed -=[", entry.Text)
	}
	q, head, block := h.in.Sel.Query, h.in.Sel.Head, h.in.Sel.Block
	test.TypeOnCanvas(c, "=[") // straight to the canvas's handler
	c.OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyRight})
	c.OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeySpace})
	if h.in.Sel.Head != head || h.in.Sel.Block != block || h.in.Sel.Query != q || h.in.Ctl.Playing() {
		t.Errorf("keys acted while the entry had focus: head %d->%d, block %d->%d, query %d->%d, playing %v",
			head, h.in.Sel.Head, block, h.in.Sel.Block, q, h.in.Sel.Query, h.in.Ctl.Playing())
	}
	c.Unfocus()
	typeRunes(c, "-")
	if h.in.Sel.Head != head-1 {
		t.Errorf("after the entry let go, - gave head %d, want %d", h.in.Sel.Head, head-1)
	}
}

// findItem is the menu item labelled label in m or its submenus.
func findItem(m *fyne.Menu, label string) *fyne.MenuItem {
	for _, it := range m.Items {
		if it.Label == label {
			return it
		}
		if it.ChildMenu != nil {
			if f := findItem(it.ChildMenu, label); f != nil {
				return f
			}
		}
	}
	return nil
}

func menuNamed(mm *fyne.MainMenu, label string) *fyne.Menu {
	for _, m := range mm.Items {
		if m.Label == label {
			return m
		}
	}
	return nil
}

// The main menu: File, Run, View, Help; its shortcuts; its items act as the controls do.
func TestMainMenu(t *testing.T) {
	h := newHarness(t)
	mm := h.in.MainMenu()
	var labels []string
	for _, m := range mm.Items {
		labels = append(labels, m.Label)
	}
	if strings.Join(labels, ",") != "File,Run,View,Help" {
		t.Fatalf("menus %v", labels)
	}
	file := menuNamed(mm, "File")
	for label, want := range map[string]fyne.Shortcut{
		"Open image…":      shortcut(fyne.KeyO, 0),
		"Open checkpoint…": shortcut(fyne.KeyO, fyne.KeyModifierShift),
		"View as PNG…":     shortcut(fyne.KeyE, 0),
		"Quit":             shortcut(fyne.KeyQ, 0),
	} {
		it := findItem(file, label)
		if it == nil || it.Shortcut == nil || it.Shortcut.ShortcutName() != want.ShortcutName() {
			t.Errorf("File ▸ %s: %+v, want shortcut %s", label, it, want.ShortcutName())
		}
	}
	if q := findItem(file, "Quit"); !q.IsQuit || file.Items[len(file.Items)-1] != q {
		t.Error("Quit is not the File menu's last, quitting item")
	}
	export := findItem(file, "Export")
	if export == nil || export.ChildMenu == nil || len(export.ChildMenu.Items) != len(h.in.exportItems()) || findItem(export.ChildMenu, "Timeline as Chrome trace…") == nil {
		t.Fatalf("File ▸ Export: %+v", export)
	}
	if r := findItem(file, "Recent"); r == nil || r.ChildMenu == nil || r.ChildMenu.Items[0].Label != "(nothing opened yet)" {
		t.Errorf("Recent before anything was opened: %+v", r)
	}

	h.openDemo()
	file = menuNamed(h.in.chrome.menu.main, "File")
	abs, _ := filepath.Abs(demoDir)
	if findItem(file, "checkpoint: "+demoDir) == nil && findItem(file, "checkpoint: "+abs) == nil {
		t.Errorf("File ▸ Recent does not list the demo checkpoint just opened: %v", findItem(file, "Recent").ChildMenu.Items)
	}
	view := menuNamed(h.in.chrome.menu.main, "View")
	findItem(view, "Timings").Action()
	if h.in.tabs.SelectedIndex() != 2 {
		t.Errorf("View ▸ Timings selected tab %d", h.in.tabs.SelectedIndex())
	}
	if it := findItem(view, "Timings"); it.Shortcut.ShortcutName() != shortcut(fyne.Key3, 0).ShortcutName() {
		t.Errorf("View ▸ Timings shortcut %v", it.Shortcut)
	}
	findItem(view, OverlayNorm).Action()
	if h.in.Sel.Overlay != OverlayNorm || !findItem(menuNamed(h.in.chrome.menu.main, "View"), OverlayNorm).Checked ||
		findItem(menuNamed(h.in.chrome.menu.main, "View"), OverlayAttention).Checked {
		t.Errorf("View ▸ Overlay ▸ %s: overlay %s, check marks not moved", OverlayNorm, h.in.Sel.Overlay)
	}
	h.in.Ctl.PlayDelay = time.Minute
	run := menuNamed(h.in.chrome.menu.main, "Run")
	findItem(run, "Restart").Action()
	h.pump("restart", func() bool { return h.in.Snap.Next == 0 })
	findItem(run, "Play / Pause    (Space)").Action()
	if h.in.panels.toolbar.play.Text != "Pause" {
		t.Errorf("Run ▸ Play / Pause: the button says %q", h.in.panels.toolbar.play.Text)
	}
	findItem(run, "Play / Pause    (Space)").Action()
	findItem(run, "Run all").Action()
	h.pump("Run ▸ Run all", func() bool { return h.in.Snap.Finished })
}

// Help ▸ About names the version; Esc closes it, and closes the Recent pop-up menu.
func TestHelpAndEscape(t *testing.T) {
	h := newHarness(t)
	h.in.MainMenu()
	if Version == "" || !strings.Contains(AboutText(), Version) || !strings.Contains(AboutText(), Title) {
		t.Errorf("About text %q lacks the version %q", AboutText(), Version)
	}
	if txt := KeyMapText(); !strings.Contains(txt, "Space") || !strings.Contains(txt, "Ctrl+O") || !strings.Contains(txt, "Esc") {
		t.Errorf("keyboard map %q", txt)
	}
	c := h.win.Canvas()
	findItem(menuNamed(h.in.chrome.menu.main, "Help"), "About "+Title).Action()
	if c.Overlays().Top() == nil || len(h.in.chrome.dialogs.shown) != 1 {
		t.Fatal("About shows no dialog")
	}
	press(c, fyne.KeyEscape)
	if c.Overlays().Top() != nil || len(h.in.chrome.dialogs.shown) != 0 {
		t.Errorf("Esc left the About dialog open (%d tracked)", len(h.in.chrome.dialogs.shown))
	}
	h.in.panels.toolbar.showRecent()
	if c.Overlays().Top() == nil {
		t.Fatal("Recent shows no menu")
	}
	c.OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	if c.Overlays().Top() != nil {
		t.Error("Esc left the Recent menu open")
	}
	findItem(menuNamed(h.in.chrome.menu.main, "File"), "Open image…").Action()
	if c.Overlays().Top() == nil {
		t.Fatal("File ▸ Open image… shows no dialog")
	}
	press(c, fyne.KeyEscape)
	if c.Overlays().Top() != nil {
		t.Error("Esc left the file dialog open")
	}
}

// tipsUnder lists the tooltips in o's tree, by the object each wraps.
func tipsUnder(o fyne.CanvasObject, into map[fyne.CanvasObject]string) {
	switch x := o.(type) {
	case *tipped:
		into[x.child] = x.Tip()
		tipsUnder(x.child, into)
	case *fyne.Container:
		for _, c := range x.Objects {
			tipsUnder(c, into)
		}
	case *widget.Form:
		for _, it := range x.Items {
			tipsUnder(it.Widget, into)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(x).Objects() {
			tipsUnder(c, into)
		}
	}
}

// Every toolbar button and every setting has a tooltip; hovering shows it in the tip layer,
// and the control under the tip still takes the click.
func TestTooltips(t *testing.T) {
	tipDelay = 0
	t.Cleanup(func() { tipDelay = 500 * time.Millisecond })
	h := newHarness(t)
	h.openDemo()
	tips := map[fyne.CanvasObject]string{}
	tipsUnder(h.win.Content(), tips)
	for _, tab := range h.in.tabs.Items { // only the selected one is rendered
		tipsUnder(tab.Content, tips)
	}
	tb, f := h.in.panels.toolbar, h.in.panels.settings.form
	for _, o := range []fyne.CanvasObject{tb.openCk, tb.openImg, tb.recent, tb.runAll, tb.step, tb.play, tb.restart, tb.cancel, tb.export,
		f.tile, f.residency, f.backend, f.threads, f.maxPixels} {
		if len(tips[o]) < 20 {
			t.Errorf("%T %v has tooltip %q", o, describe(o), tips[o])
		}
	}
	ip := h.in.panels.image
	for _, o := range []fyne.CanvasObject{ip.source, ip.channel, ip.colors, ip.grid, ip.clip, ip.logScale, ip.exclude, ip.shared,
		ip.diverging, ip.follow, ip.opacity, ip.exportBtn, ip.fusion, ip.discard} {
		if len(tips[o]) < 20 {
			t.Errorf("%T %v has tooltip %q", o, describe(o), tips[o])
		}
	}
	for tap, c := range h.in.panels.settings.taps {
		if !strings.Contains(tips[c], tap.About()) {
			t.Errorf("the %s check's tooltip %q does not say what the tap is", tap, tips[c])
		}
	}

	c := h.win.Canvas()
	d := fyne.CurrentApp().Driver()
	at := d.AbsolutePositionForObject(tb.restart).Add(fyne.NewPos(10, 10))
	test.MoveMouse(c, at)
	if got := h.in.chrome.root.layer.Text(); got != buttonTips["Restart"] {
		t.Errorf("hovering Restart shows %q", got)
	}
	test.TapCanvas(c, at) // the click goes through the tip's catcher to the button
	h.pump("Restart, clicked under its tooltip", func() bool { return h.in.Snap.Next == 0 })
	test.MoveMouse(c, fyne.NewPos(2, c.Size().Height-2))
	if got := h.in.chrome.root.layer.Text(); got != "" {
		t.Errorf("the tip %q stays after the pointer left", got)
	}
	if m, want := h.in.chrome.root.MinSize(), h.in.chrome.root.content.MinSize(); m != want {
		t.Errorf("the tip layer changes the window's minimum: %v, content %v", m, want)
	}
}

func describe(o fyne.CanvasObject) string {
	if b, ok := o.(*widget.Button); ok {
		return b.Text
	}
	return ""
}

// What a launch remembers: window size, split, settings, the last files (not the demo),
// the dialog folders; values that no longer hold give the defaults.
func TestPreferencesPersist(t *testing.T) {
	h := newHarness(t)
	prefs := h.in.memory.prefs
	h.openDemo()
	h.win.Resize(fyne.NewSize(1300, 700))
	h.in.chrome.split.SetOffset(0.4)
	h.in.panels.settings.form.tile.SetText("64")
	h.in.panels.settings.form.residency.SetSelected("pread")
	h.in.panels.settings.form.threads.SetText("1")
	h.in.panels.settings.taps[engine.TapLN1].SetChecked(true)
	gen := h.in.Snap.Gen
	h.in.panels.settings.apply()
	h.pump("the re-run", func() bool { return h.in.Snap.Gen != gen && h.in.Snap.Finished })
	h.in.saveLayout() // the app calls it when the window closes

	// A second launch, on the same preferences.
	again := NewInspector(fyne.CurrentApp().NewWindow(Title), NewController(func(f func()) { h.ui <- f }, cpuOnly), prefs)
	t.Cleanup(again.Ctl.Close)
	if sz := again.WindowSize(fyne.NewSize(1, 1)); sz != h.win.Canvas().Size() {
		t.Errorf("window size %v, want %v", sz, h.win.Canvas().Size())
	}
	if again.chrome.split.Offset != 0.4 {
		t.Errorf("split %v, want 0.4", again.chrome.split.Offset)
	}
	s := again.openSettings()
	if s.TileRows != 64 || s.Residency != engine.Pread || s.Threads != 1 || !s.Keep.Taps.Has(engine.TapLN1) || s.Backend != "cpu" {
		t.Errorf("settings at the next launch: %s, taps %s", s.Describe(), s.Keep.Taps)
	}
	dir, img, ok := again.LastOpened()
	if !ok || dir != demoDir || img != demoPhoto {
		t.Errorf("last opened %q %q %v", dir, img, ok)
	}
	if got := again.folder(prefImageFolder); got != parentDir(demoPhoto) {
		t.Errorf("the image dialog starts in %q, want %q", got, parentDir(demoPhoto))
	}

	// What no longer holds: a backend not offered here, a deleted image.
	prefs.SetString(prefBackend, "metal")
	prefs.SetInt(prefTile, 0)
	if s := again.savedSettings(); s.Backend != "cpu" || s.TileRows != engine.DefaultTileRows {
		t.Errorf("restored %s from a backend not offered and tile 0", s.Describe())
	}
	gone := filepath.Join(t.TempDir(), "gone.png")
	os.WriteFile(gone, []byte("x"), 0o644)
	prefs.SetString(prefLastImage, gone)
	if _, _, ok := again.LastOpened(); !ok {
		t.Fatal("an existing last image is not reopened")
	}
	os.Remove(gone)
	if d, i, ok := again.LastOpened(); ok {
		t.Errorf("a deleted image is reopened: %s %s", d, i)
	}
}

// The demo (named with SetDemo) is never remembered as recent or last.
func TestDemoIsNotRemembered(t *testing.T) {
	h := newHarness(t)
	h.in.SetDemo(demoDir, demoPhoto)
	h.openDemo()
	if r := recentList(h.in.memory.prefs, recentCheckpoints); len(r) != 0 {
		t.Errorf("recent checkpoints %v after the demo", r)
	}
	if _, _, ok := h.in.LastOpened(); ok {
		t.Error("the demo is remembered as the last files")
	}
}

// A repo id opens its snapshot from the local Hugging Face cache, and Recent keeps the id.
func TestOpenRepoIDFromTheCache(t *testing.T) {
	cache := t.TempDir()
	snap := filepath.Join(cache, "models--Qwen--Demo", "snapshots", "abc")
	if err := os.MkdirAll(filepath.Join(cache, "models--Qwen--Demo", "refs"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cache, "models--Qwen--Demo", "refs", "main"), []byte("abc\n"), 0o644)
	abs, _ := filepath.Abs(demoDir)
	if err := os.Symlink(abs, snap); err != nil {
		if err := os.MkdirAll(filepath.Dir(snap), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, snap); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("HF_HUB_CACHE", cache)
	h := newHarness(t)
	h.in.OpenFiles("Qwen/Demo", demoPhoto)
	h.pump("the run", func() bool { return h.in.Snap != nil && h.in.Snap.Finished })
	if h.in.Snap.CheckpointDir != snap {
		t.Errorf("opened %s, want the snapshot %s", h.in.Snap.CheckpointDir, snap)
	}
	if r := recentList(h.in.memory.prefs, recentCheckpoints); len(r) == 0 || r[0] != "Qwen/Demo" {
		t.Errorf("recent checkpoints %v, want the repo id first", r)
	}
	if d, _, ok := h.in.LastOpened(); !ok || d != "Qwen/Demo" {
		t.Errorf("last checkpoint %q", d)
	}
	h.in.OpenFiles("Qwen/Missing", demoPhoto)
	if st := h.in.panels.toolbar.status.Text; !strings.Contains(st, "models--Qwen--Missing") || !strings.Contains(st, cache) {
		t.Errorf("status for a repo that is not cached: %q", st)
	}
}

// Apply and Restart keep the query patch, the head and a block the user chose while the
// page stays the same; a new page (max pixels) starts over at its centre.
func TestRerunKeepsTheSelection(t *testing.T) {
	h := newHarness(t)
	h.openDemo()
	s := h.in.Snap
	q := patchGrid(s).At(3, 5)
	h.in.SelectQuery(q)
	h.in.SelectBlock(1)
	h.in.SelectHead(2)
	check := func(when string) {
		t.Helper()
		if h.in.Sel.Query != q || h.in.Sel.Block != 1 || h.in.Sel.Head != 2 || h.in.panels.attention.head.Selected != "head 2" {
			t.Errorf("%s: query %d block %d head %d (%q), want %d, 1, 2", when, h.in.Sel.Query, h.in.Sel.Block, h.in.Sel.Head,
				h.in.panels.attention.head.Selected, q)
		}
	}
	gen := s.Gen
	h.in.panels.settings.form.tile.SetText("64")
	h.in.panels.settings.apply()
	h.pump("the first block of the re-run", func() bool { return h.in.Snap.Gen != gen && h.in.Snap.Next >= 1 })
	check("while Apply re-runs")
	h.pump("the re-run", func() bool { return h.in.Snap.Finished })
	check("after Apply")
	h.in.Ctl.Restart()
	h.pump("restart", func() bool { return h.in.Snap.Next == 0 })
	h.in.Ctl.RunAll()
	h.pump("the run after Restart", func() bool { return h.in.Snap.Finished })
	check("after Restart and Run all")

	gen = h.in.Snap.Gen
	h.in.panels.settings.form.maxPixels.SetText("65536")
	h.in.panels.settings.apply()
	h.pump("the new page", func() bool { return h.in.Snap.Gen != gen && h.in.Snap.Finished })
	if want := defaultQuery(h.in.Snap); h.in.Sel.Query != want || h.in.Sel.Block != h.in.Snap.Config.Depth-1 {
		t.Errorf("a new page: query %d block %d, want the centre %d and the run followed to the last block", h.in.Sel.Query, h.in.Sel.Block, want)
	}
}

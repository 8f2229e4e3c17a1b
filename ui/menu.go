package ui

// menu.go: the main menu (a menu bar in the window on Linux and Windows, the app menu on
// macOS): File, Run, View, Help, with the Ctrl/Cmd shortcuts shown next to their items, and
// the dialogs the window opens itself (About, the keyboard map, a cached Hugging Face
// model), which Esc closes.
//
// Invariant: every menu item calls the same Inspector, toolbar or controller function as
// the control it mirrors, so menu and toolbar cannot disagree; the mutation that would
// silently break it: a menu item that re-implements an action (Play that calls Ctl.Play
// without the toolbar's syncPlay leaves the button saying Play while it plays).

import (
	"fmt"
	"runtime"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
)

// Version is the inspector's version (engine.Version: what dumps record too).
var Version = engine.Version

// shortcut is Ctrl+key (Cmd+key on macOS), with more modifiers if given.
func shortcut(key fyne.KeyName, more fyne.KeyModifier) fyne.Shortcut {
	return &desktop.CustomShortcut{KeyName: key, Modifier: fyne.KeyModifierShortcutDefault | more}
}

func item(label string, key fyne.KeyName, more fyne.KeyModifier, action func()) *fyne.MenuItem {
	it := fyne.NewMenuItem(label, action)
	if key != "" {
		it.Shortcut = shortcut(key, more)
	}
	return it
}

// MainMenu builds the window's main menu (the app sets it on the window).
func (in *Inspector) MainMenu() *fyne.MainMenu {
	in.chrome.menu.main = fyne.NewMainMenu(in.fileMenu(), in.runMenu(), in.viewMenu(), in.helpMenu())
	return in.chrome.menu.main
}

func (in *Inspector) fileMenu() *fyne.Menu {
	t := in.panels.toolbar
	recent := fyne.NewMenuItem("Recent", nil)
	recent.ChildMenu = fyne.NewMenu("", t.recentItems()...)
	export := fyne.NewMenuItem("Export", nil)
	export.ChildMenu = fyne.NewMenu("", in.exportItems()...)
	quit := item("Quit", fyne.KeyQ, 0, nil) // the driver closes every window
	quit.IsQuit = true
	return fyne.NewMenu("File",
		item("Open image…", fyne.KeyO, 0, t.chooseImage),
		item("Open checkpoint…", fyne.KeyO, fyne.KeyModifierShift, t.chooseCheckpoint),
		fyne.NewMenuItem("Open from the Hugging Face cache…", in.chooseCachedModel),
		fyne.NewMenuItem("Open the demo", in.OpenDemo),
		recent,
		fyne.NewMenuItemSeparator(),
		export,
		fyne.NewMenuItemSeparator(),
		quit)
}

// exportItems are the exports, for the File menu and the toolbar's Export button; an export
// with nothing to write yet is off (menuState).
func (in *Inspector) exportItems() []*fyne.MenuItem {
	st := in.menuState()
	off := func(it *fyne.MenuItem, on bool) *fyne.MenuItem { it.Disabled = !on; return it }
	return []*fyne.MenuItem{
		off(item("View as PNG…", fyne.KeyE, 0, func() { in.saveDialog(in.viewExportName(""), in.ExportFigure) }), st.loaded),
		off(fyne.NewMenuItem("Timings as JSON…", func() { in.saveDialog("timings.json", in.ExportTimingsJSON) }), st.finished),
		off(fyne.NewMenuItem("Timings as CSV…", func() { in.saveDialog("timings.csv", in.ExportTimingsCSV) }), st.finished),
		off(fyne.NewMenuItem("Timeline as Chrome trace…", func() { in.saveDialog("timings.trace.json", in.ExportTrace) }), st.finished),
		off(fyne.NewMenuItem("Head statistics (block x head) as CSV…", func() { in.saveDialog(in.exportName("head-stats", ".csv"), in.ExportHeadStatsCSV) }), st.finished),
		off(fyne.NewMenuItem("Run as safetensors dump…", func() { in.saveDialog("dump.safetensors", in.ExportDump) }), st.dump),
		off(fyne.NewMenuItem("Compare as JSON (every pass)…", func() { in.saveDialog("compare.json", in.ExportCompareJSON) }), st.compared),
	}
}

func (in *Inspector) runMenu() *fyne.Menu {
	t, st := in.panels.toolbar, in.menuState()
	off := func(it *fyne.MenuItem, on bool) *fyne.MenuItem { it.Disabled = !on; return it }
	return fyne.NewMenu("Run",
		off(fyne.NewMenuItem("Run all", in.Ctl.RunAll), st.left),
		off(fyne.NewMenuItem("Step", in.Ctl.Step), st.left || st.stepping),
		off(fyne.NewMenuItem("Play / Pause    (Space)", t.togglePlay), (st.loaded && !in.Snap.Finished) || st.playing),
		off(fyne.NewMenuItem("Restart", in.Ctl.Restart), st.loaded),
		off(fyne.NewMenuItem("Cancel", in.Ctl.Cancel), st.busy))
}

// menuState is what the Run and Export items can act on now: the same facts the toolbar's
// buttons follow.
type menuState struct {
	loaded, left, playing, busy, finished, dump, compared bool
	stepping                                              bool // Steps run: Step queues one more
}

func (in *Inspector) menuState() menuState {
	s := in.Snap
	st := menuState{loaded: s.Loaded(), playing: in.Ctl.Playing(), compared: in.runs.compare != nil}
	st.left = st.loaded && !s.Finished
	st.finished = st.loaded && s.Report != nil
	st.dump = st.finished && s.Dump != nil
	if in.panels.toolbar != nil && in.panels.toolbar.cancel != nil {
		st.busy = !in.panels.toolbar.cancel.Disabled()
	}
	st.stepping = st.left && in.Ctl.Stepping()
	st.left = st.left && !st.busy // Run all and Step, as the toolbar's: not while a run goes on
	return st
}

// syncMenus turns the Run and Export items on and off with what they can act on (rebuilt
// only when that changed: the menu bar redraws on Refresh).
func (in *Inspector) syncMenus() {
	if in.chrome.menu.main == nil {
		return
	}
	if st := in.menuState(); st != in.chrome.menu.synced {
		in.chrome.menu.synced = st
		in.chrome.menu.main.Items[0] = in.fileMenu()
		in.chrome.menu.main.Items[1] = in.runMenu()
		in.chrome.menu.main.Refresh()
	}
}

func (in *Inspector) viewMenu() *fyne.Menu {
	var items []*fyne.MenuItem
	for i, tab := range in.tabs.Items {
		i := i
		it := item(tab.Text, fyne.KeyName(fmt.Sprint(i+1)), 0, func() {
			in.tabs.SelectIndex(i)
			if in.tabs.Items[i] == in.tabs.whatIf { // typing goes to its first field
				in.Win.Canvas().Focus(in.panels.whatIf.ablate)
			}
		})
		items = append(items, it)
	}
	overlays := fyne.NewMenuItem("Overlay", nil)
	var sub []*fyne.MenuItem
	for _, o := range Overlays {
		o := o
		it := fyne.NewMenuItem(o, func() { in.SetOverlay(o) })
		it.Checked = o == in.Sel.Overlay
		sub = append(sub, it)
	}
	overlays.ChildMenu = fyne.NewMenu("", sub...)
	return fyne.NewMenu("View", append(items, fyne.NewMenuItemSeparator(), overlays)...)
}

func (in *Inspector) helpMenu() *fyne.Menu {
	return fyne.NewMenu("Help",
		fyne.NewMenuItem("Keyboard shortcuts", in.showKeyMap),
		fyne.NewMenuItem("About "+Title, in.showAbout))
}

// refreshMenu rebuilds what changes in the menu: Recent, the overlay's check mark.
func (in *Inspector) refreshMenu() {
	if in.chrome.menu.main == nil {
		return
	}
	in.chrome.menu.main.Items[0] = in.fileMenu()
	in.chrome.menu.main.Items[1] = in.runMenu()
	in.chrome.menu.main.Items[2] = in.viewMenu()
	in.chrome.menu.synced = in.menuState()
	in.chrome.menu.main.Refresh()
}

// AboutText is what Help ▸ About says.
func AboutText() string {
	return fmt.Sprintf("%s %s\n\nThe vision tower, block by block: timings, activations, attention. It opens %s.\n\n"+
		"%s on %s/%s. Hugging Face cache: %s", Title, Version, engine.SupportedFamilies(), runtime.Version(), runtime.GOOS, runtime.GOARCH, engine.FindHFCache().Dir)
}

func (in *Inspector) showAbout() {
	l := widget.NewLabel(AboutText())
	l.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustom("About", "Close", l, in.Win)
	d.Resize(fyne.NewSize(520, 260))
	in.showDialog(d)
}

func (in *Inspector) showKeyMap() {
	grid := container.New(layout.NewFormLayout())
	for _, k := range keyMap {
		key := widget.NewLabelWithStyle(k[0], fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
		what := widget.NewLabel(k[1])
		what.Wrapping = fyne.TextWrapWord
		grid.Add(key)
		grid.Add(what)
	}
	d := dialog.NewCustom("Keyboard shortcuts", "Close", grid, in.Win)
	d.Resize(fyne.NewSize(640, 520))
	in.showDialog(d)
}

// KeyMapText is the keyboard map as plain text (for Help and tests).
func KeyMapText() string {
	var b strings.Builder
	for _, k := range keyMap {
		fmt.Fprintf(&b, "%-24s %s\n", k[0], k[1])
	}
	return b.String()
}

// chooseCachedModel offers the models in the local Hugging Face cache (and any repo id typed).
func (in *Inspector) chooseCachedModel() {
	cache := engine.FindHFCache()
	ids := cache.CachedRepos()
	entry := widget.NewSelectEntry(ids)
	entry.SetPlaceHolder("owner/name, e.g. Qwen/Qwen3-VL-2B-Instruct")
	note := widget.NewLabel(fmt.Sprintf("%d model(s) in %s (%s)", len(ids), cache.Dir, cache.Why))
	note.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm("Open from the Hugging Face cache", "Open", "Cancel", container.NewVBox(entry, note), func(ok bool) {
		if ok && strings.TrimSpace(entry.Text) != "" {
			in.panels.toolbar.openCheckpoint(strings.TrimSpace(entry.Text))
		}
	}, in.Win)
	d.Resize(fyne.NewSize(560, 220))
	in.showDialog(d)
}

// menuBar is the main menu and what its Run and Export items were last built for.
type menuBar struct {
	main   *fyne.MainMenu // nil until MainMenu is asked for
	synced menuState
}

// dialogs are the dialogs this window opened and has not seen close (Esc closes the top
// one), and the save dialog's hook.
type dialogs struct {
	shown []shownDialog
	// showSave presents a save dialog offering name in folder dir ("": Fyne's choice) in place
	// of showing it; tests set it to see what is offered without a window.
	showSave func(d *dialog.FileDialog, dir, name string)
}

// shownDialog is a dialog this window opened and the overlay it sits in.
type shownDialog struct {
	d       dialog.Dialog
	overlay fyne.CanvasObject
}

// showDialog shows d and remembers it, so Esc can close it through its own Hide.
func (in *Inspector) showDialog(d dialog.Dialog) {
	d.Show()
	top := in.Win.Canvas().Overlays().Top()
	in.chrome.dialogs.shown = append(in.chrome.dialogs.shown, shownDialog{d, top})
	d.SetOnClosed(func() {
		for i, s := range in.chrome.dialogs.shown {
			if s.d == d {
				in.chrome.dialogs.shown = append(in.chrome.dialogs.shown[:i], in.chrome.dialogs.shown[i+1:]...)
				return
			}
		}
	})
}

// topDialog is the dialog this window opened whose overlay is top (nil: none).
func (in *Inspector) topDialog(top fyne.CanvasObject) dialog.Dialog {
	for _, s := range in.chrome.dialogs.shown {
		if s.overlay == top {
			return s.d
		}
	}
	return nil
}

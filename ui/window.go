package ui

// window.go lays out the inspector and keeps the selection (block, tap, head, query patch,
// overlay) that every panel draws from. A re-run of the same page (Apply, Restart) keeps
// the query patch, the head and a block the user chose; a new page starts at its centre
// patch and follows the run from block 0.
//
// Invariant: every panel redraws from the one Inspector selection and the last Snapshot;
// no panel keeps its own copy of the selected block or query. The mutation that would
// silently break it: a panel caching the block it drew last — after a re-run it would show
// block 7 of the old run under block 7 of the new one.

import (
	"errors"
	"fmt"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
	"github.com/turbospark/inspector/ui/control"
	"github.com/turbospark/inspector/ui/widgets"
)

// Title is the window title (the smoke test finds the window by it).
const Title = "TurboSpark Vision Inspector"

// Overlay sources for the image view.
const (
	OverlayAttention = "attention"
	OverlayRollout   = "rollout"
	OverlayNorm      = "L2 norm"
	OverlayMean      = "mean"
	OverlayMaxAbs    = "max |x|"
	OverlayChange    = "change"
	OverlayChannel   = "channel"
	OverlayNone      = "none"
)

// Overlays lists the overlay sources in menu order.
var Overlays = []string{OverlayAttention, OverlayRollout, OverlayRolloutWhole, OverlayAttentionTo, OverlayNorm, OverlayMean, OverlayMaxAbs,
	OverlayChange, OverlayChannel, OverlayNone}

// Selection is what the user is looking at.
type Selection struct {
	Block   int    // the block whose output / attention is shown
	Tap     string // the tap of the block the activations show (engine/tower/tap.go; "out" by default)
	Head    int    // -1: mean of heads
	Query   int    // the query patch (sequence index)
	Overlay string
	Channel int
	Colors  widgets.Colormap
	Opacity float64
	Grid    bool
}

// Inspector is the main window's content and state. Its fields are owners: the selection
// and the snapshot every panel draws from, the maps every panel asks for (one row service),
// the panels (each the owner of its widgets and of what it keeps to draw them), the tabs,
// the window's chrome, what it remembers, and what it keeps of its runs.
type Inspector struct {
	Win  fyne.Window
	Ctl  *Controller
	Snap *Snapshot // the last state the controller posted
	Sel  Selection // what the user is looking at
	maps viewMaps  // how the selection becomes maps: the row service, the scale options (maps.go)

	panels panels    // the toolbar, the block strip, the image and the tabs' panels
	tabs   *tabSet   // the tabs, drawn lazily (tabs.go)
	chrome chrome    // the split, the tooltip layer, the main menu, the dialogs shown
	memory memory    // preferences and names: recent files, folders, settings, layout (prefs.go)
	runs   runRecord // whether the selection follows the run; the last Compare and head sweep

	OnFinished func(*Snapshot) // once per run, when its merger has run
}

// panels are the window's panels; none reads another's state: what two of them show comes
// from the Inspector (its selection, snapshot and maps).
type panels struct {
	toolbar    *toolbar
	strip      *blockStrip
	image      *imagePanel
	attention  *attentionPanel
	activation *activationPanel
	timings    *timingsPanel
	settings   *settingsPanel
	compare    *comparePanel
	whatIf     *whatIfPanel
}

// chrome is the window around the panels.
type chrome struct {
	split   *container.Split // image | tabs
	root    *tipRoot         // the content under the tip layer
	menu    menuBar          // the main menu (menu.go)
	dialogs dialogs          // the dialogs this window opened (menu.go), the save dialog's hook
}

// runRecord is what the window keeps of its runs besides the snapshot.
type runRecord struct {
	chosen  bool           // the user picked the selected block (a re-run of the page keeps it)
	kept    bool           // this run kept the chosen block: it does not follow the run
	compare *CompareResult // the last Compare (its export, the menu's item)
	sweep   *SweepResult   // the last head sweep (its export)
}

// NewInspector builds the window's content around a controller. prefs keeps recent files,
// the last files, folders, settings and the layout (nil: nothing kept).
func NewInspector(win fyne.Window, ctl *Controller, prefs fyne.Preferences) *Inspector {
	in := &Inspector{Win: win, Ctl: ctl, memory: memory{prefs: prefs, names: map[string]string{}},
		Sel: Selection{Tap: engine.TapOut.String(), Head: -1, Query: -1, Overlay: OverlayAttention, Colors: widgets.Viridis, Opacity: 0.6}}
	in.maps = viewMaps{rows: control.NewRows(ctl), opts: loadHeatmap(prefs, &in.Sel)}
	in.maps.rows.Ready = func() { // rows or maps computed off the UI goroutine have landed
		if in.Snap.Loaded() {
			in.panels.image.refresh()
			in.refreshAttention()
		}
	}
	in.newPanels()
	in.tabs = in.newTabs()
	in.listen()
	in.chrome.root = newTipRoot(in.layout())
	win.SetContent(in.chrome.root)
	win.SetOnDropped(in.dropped)
	win.SetOnClosed(func() {
		in.saveLayout()
		ctl.WindowClosed()
	})
	in.installKeys()
	return in
}

// newPanels makes every panel.
func (in *Inspector) newPanels() {
	in.panels = panels{toolbar: newToolbar(in), strip: newBlockStrip(in), image: newImagePanel(in),
		attention: newAttentionPanel(in), activation: newActivationPanel(in), timings: newTimingsPanel(in),
		settings: newSettingsPanel(in), compare: newComparePanel(in), whatIf: newWhatIfPanel(in)}
}

// listen hands the controller the window's callbacks.
func (in *Inspector) listen() {
	ctl := in.Ctl
	ctl.OnSnapshot = in.setSnapshot
	ctl.OnStatus = in.panels.toolbar.setStatus
	ctl.OnCompare = in.setCompare
	ctl.OnWhatIf = in.panels.whatIf.show
	ctl.OnSweep = in.setSweep
}

// layout: toolbar and block strip on top, the image and the tabs side by side. Each tab
// scrolls vertically rather than grow the window (27 blocks x 16 heads fit 1366x768).
func (in *Inspector) layout() fyne.CanvasObject {
	for _, tab := range in.tabs.Items {
		tab.Content = container.NewVScroll(tab.Content)
	}
	in.chrome.split = container.NewHSplit(in.panels.image.content(), in.tabs.AppTabs)
	in.chrome.split.SetOffset(in.savedSplit(0.52))
	return container.NewBorder(container.NewVBox(in.panels.toolbar.content(), in.panels.strip.content()), nil, nil, nil, in.chrome.split)
}

// setSnapshot takes a new state from the controller (UI goroutine).
func (in *Inspector) setSnapshot(s *Snapshot) {
	prev := in.Snap
	fresh := prev == nil || prev.Gen != s.Gen
	justFinished := s.Finished && (fresh || !prev.Finished)
	in.Snap = s
	if fresh {
		in.onNewRun(prev)
	}
	if s.Next > 0 && in.followRun(fresh) {
		in.Sel.Block = s.Next - 1
	}
	in.Win.SetTitle(fmt.Sprintf("%s — %s", Title, baseName(s.ImagePath)))
	in.panels.toolbar.syncRunButtons()
	in.refresh()
	if justFinished && in.OnFinished != nil {
		in.OnFinished(s)
	}
}

// say shows a message on the status line about something other than the run (an export, a
// file chosen, a setting refused): the run's progress and its Cancel stay as they are.
func (in *Inspector) say(text string, err error) { in.panels.toolbar.say(text, err) }

// followRun: while blocks arrive, the selection follows the newest block unless the user
// picked another one, or picked one before a re-run of the page (kept).
func (in *Inspector) followRun(fresh bool) bool {
	return !in.runs.kept && (fresh || in.Sel.Block >= in.Snap.Next-2)
}

// onNewRun fits the selection to a new run; prev is the run shown before (nil: none).
func (in *Inspector) onNewRun(prev *Snapshot) {
	s := in.Snap
	in.maps.rows.NewRun()
	in.panels.image.setPage(s)
	same := samePage(prev, s)
	if !same || in.Sel.Query < 0 || in.Sel.Query >= s.Layout.Rows() {
		in.Sel.Query = defaultQuery(s)
	}
	if in.Sel.Head >= s.Config.Heads {
		in.Sel.Head = -1
	}
	r := &in.runs
	r.kept = same && r.chosen
	if r.kept {
		in.Sel.Block = min(in.Sel.Block, s.Config.Depth-1)
	} else {
		in.Sel.Block, r.chosen = 0, false
	}
	if !slices.Contains(tapOptions(s), in.Sel.Tap) {
		in.Sel.Tap = engine.TapOut.String()
	}
	in.panels.settings.load(s.Settings)
	in.panels.attention.setHeads(s.Config.Heads)
	in.panels.activation.setChannels(s.Config.Hidden)
	in.rememberRun(prev, s)
}

// samePage: b is a run of the page a showed (the same image cut into the same grids), so a
// patch index means the same patch in both.
func samePage(a, b *Snapshot) bool {
	return a.Loaded() && b.Loaded() && a.ImagePath == b.ImagePath && slices.Equal(a.Layout.Grids, b.Layout.Grids) &&
		a.Page.Resized.W == b.Page.Resized.W && a.Page.Resized.H == b.Page.Resized.H
}

// defaultQuery is the centre patch of the image.
func defaultQuery(s *Snapshot) int {
	g := s.Layout.Grids[0]
	return patchGrid(s).At(g.H/2, g.W/2)
}

// refresh redraws every panel from the selection.
func (in *Inspector) refresh() {
	if !in.Snap.Loaded() {
		return
	}
	in.panels.strip.refresh()
	in.panels.image.refresh()
	for _, item := range in.tabs.order {
		in.refreshTab(item)
	}
}

// SelectBlock shows block i everywhere: the user's choice, kept over re-runs of the page.
func (in *Inspector) SelectBlock(i int) {
	if !in.Snap.Loaded() || i < 0 || i >= in.Snap.Config.Depth {
		return
	}
	in.Sel.Block, in.runs.chosen, in.runs.kept = i, true, false
	in.refresh()
}

// SelectTap shows tap name of the selected block in the activations and the per-patch maps.
func (in *Inspector) SelectTap(name string) {
	in.Sel.Tap = name
	in.refresh()
}

// SelectQuery makes patch p the attention query.
func (in *Inspector) SelectQuery(p int) {
	if !in.Snap.Loaded() || p < 0 || p >= in.Snap.Layout.Rows() {
		return
	}
	in.Sel.Query = p
	in.refresh()
}

// SelectHead shows head h (-1: the mean of heads).
func (in *Inspector) SelectHead(h int) {
	in.Sel.Head = h
	in.refresh()
}

// SetOverlay picks what the image view colours.
func (in *Inspector) SetOverlay(name string) {
	in.Sel.Overlay = name
	in.panels.image.syncControls()
	in.refresh()
	in.refreshMenu()
}

func (in *Inspector) setCompare(r *CompareResult) {
	in.runs.compare = r
	in.syncMenus()
	in.panels.compare.show(r)
}

// setSweep takes a finished head sweep: the What if tab draws it, its export writes it.
func (in *Inspector) setSweep(r *SweepResult) {
	in.runs.sweep = r
	in.panels.whatIf.showSweep(r)
}

// OpenFiles starts a session on a checkpoint (a directory, or a Hugging Face repo id found
// in the local cache: engine.ResolveCheckpoint) and an image, with the current settings.
// Both go to Recent as named.
func (in *Inspector) OpenFiles(dir, image string) {
	resolved, err := engine.ResolveCheckpoint(dir)
	if err != nil {
		in.say("open: "+err.Error(), err)
		return
	}
	m := &in.memory
	m.names[resolved] = dir
	if dir != m.demo[0] {
		rememberRecent(m.prefs, recentCheckpoints, dir)
		if resolved == dir { // a folder, not a repo id: the folder dialog starts beside it
			in.rememberFolder(prefCheckpointFolder, parentDir(dir))
		}
	}
	if image != m.demo[1] {
		rememberRecent(m.prefs, recentImages, image)
		in.rememberFolder(prefImageFolder, parentDir(image))
	}
	in.refreshMenu()
	in.Ctl.Open(resolved, image, in.openSettings())
}

// checkpointName is what the user called the checkpoint resolved to dir (a repo id or path).
func (in *Inspector) checkpointName(dir string) string {
	if n := in.memory.names[dir]; n != "" {
		return n
	}
	return dir
}

// SetDemo names the embedded demo's files, which are never remembered as recent or last.
func (in *Inspector) SetDemo(dir, image string) { in.memory.demo = [2]string{dir, image} }

// OpenDemo opens the embedded demo checkpoint on its photo (File ▸ Open demo).
func (in *Inspector) OpenDemo() {
	demo := in.memory.demo
	if demo[0] == "" {
		in.say("the demo is not unpacked in this session", errors.New("no demo"))
		return
	}
	in.OpenFiles(demo[0], demo[1])
}

func (in *Inspector) dropped(_ fyne.Position, uris []fyne.URI) {
	dir, image := "", ""
	if s := in.Snap; s != nil {
		dir, image = in.checkpointName(s.CheckpointDir), s.ImagePath
	}
	for _, u := range uris {
		if isDir(u.Path()) {
			dir = u.Path()
		} else {
			image = u.Path()
		}
	}
	if dir == "" || image == "" {
		in.say("drop a checkpoint folder and an image (one of each is needed)", nil)
		return
	}
	in.OpenFiles(dir, image)
}

// ButtonBounds is the toolbar button labelled text: its position in the window and size
// (ok false: no such button). The smoke test hovers one for its tooltip.
func (in *Inspector) ButtonBounds(text string) (pos fyne.Position, size fyne.Size, ok bool) {
	t := in.panels.toolbar
	for _, b := range []*widget.Button{t.openCk, t.openImg, t.recent, t.runAll, t.step, t.play, t.restart, t.cancel, t.export} {
		if b.Text == text {
			return fyne.CurrentApp().Driver().AbsolutePositionForObject(b), b.Size(), true
		}
	}
	return pos, size, false
}

// ImageViewBounds is the image view's position in the window and its size.
func (in *Inspector) ImageViewBounds() (fyne.Position, fyne.Size) {
	d := fyne.CurrentApp().Driver()
	v := in.panels.image.view
	return d.AbsolutePositionForObject(v), v.Size()
}

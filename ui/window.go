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
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/turbospark/inspector/engine"
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
	Tap     string // the tap of the block the activations show (engine/tap.go; "out" by default)
	Head    int    // -1: mean of heads
	Query   int    // the query patch (sequence index)
	Overlay string
	Channel int
	Colors  widgets.Colormap
	Opacity float64
	Grid    bool
}

// Inspector is the main window's content and state.
type Inspector struct {
	Win   fyne.Window
	Ctl   *Controller
	prefs fyne.Preferences

	Snap *Snapshot
	Sel  Selection

	toolbar    *toolbar
	strip      *widgets.BlockStrip
	stripBy    *widget.RadioGroup
	image      *imagePanel
	attention  *attentionPanel
	activation *activationPanel
	timings    *timingsPanel
	settings   *settingsPanel
	compare    *comparePanel
	whatIf     *whatIfPanel
	whatIfTab  *container.TabItem // the View menu focuses its first field
	tabs       *container.AppTabs
	tabPanels  map[*container.TabItem]func() // each tab's refresh (lazy: refreshTab)
	tabOrder   []*container.TabItem          // the tabs with a refresh, in the order they refresh
	attnTab    *container.TabItem
	staleTabs  map[*container.TabItem]bool // tabs not refreshed since they were hidden
	split      *container.Split            // image | tabs
	root       *tipRoot                    // the content under the tip layer
	menu       *fyne.MainMenu              // nil until MainMenu is asked for
	compareRes *CompareResult
	menuSynced menuState // what the Run and Export items were last built for
	shiftHeld  bool      // Shift is down (key events: the pointer's carry no modifiers under GLFW)

	chosen bool              // the user picked the selected block (a re-run of the page keeps it)
	kept   bool              // this run kept the chosen block: it does not follow the run
	demo   [2]string         // the demo's checkpoint and photo: never remembered as recent or last
	names  map[string]string // resolved checkpoint dir -> what the user named (a repo id, a path)

	dialogs []shownDialog // the dialogs this window opened and has not seen close (Esc closes the top one)

	OnFinished func(*Snapshot) // once per run, when its merger has run
}

// NewInspector builds the window's content around a controller. prefs keeps recent files,
// the last files, folders, settings and the layout (nil: nothing kept).
func NewInspector(win fyne.Window, ctl *Controller, prefs fyne.Preferences) *Inspector {
	in := &Inspector{Win: win, Ctl: ctl, prefs: prefs, names: map[string]string{},
		Sel: Selection{Tap: engine.TapOut.String(), Head: -1, Query: -1, Overlay: OverlayAttention, Colors: widgets.Viridis, Opacity: 0.6}}
	in.toolbar = newToolbar(in)
	in.strip = widgets.NewBlockStrip(in.SelectBlock)
	in.strip.SetTooltip(in.blockTooltip)
	in.stripBy = widget.NewRadioGroup([]string{"time", "change"}, func(string) { in.refreshStrip() })
	in.stripBy.Horizontal = true
	in.stripBy.SetSelected("change")
	in.image = newImagePanel(in)
	in.attention = newAttentionPanel(in)
	in.activation = newActivationPanel(in)
	in.timings = newTimingsPanel(in)
	in.settings = newSettingsPanel(in)
	in.compare = newComparePanel(in)
	in.whatIf = newWhatIfPanel(in)
	in.image.rows.ready = func() { // rows computed off the UI goroutine have landed
		if in.Snap.Loaded() {
			in.image.refresh()
			in.refreshAttention()
		}
	}
	var items []*container.TabItem
	in.tabPanels, in.staleTabs = map[*container.TabItem]func(){}, map[*container.TabItem]bool{}
	for _, t := range []struct {
		name    string
		icon    fyne.Resource
		content fyne.CanvasObject
		refresh func() // nil: the tab draws itself when its data comes (Compare)
	}{
		{"Attention", theme.VisibilityIcon(), in.attention.content(), in.attention.refresh},
		{"Activations", theme.ListIcon(), in.activation.content(), in.activation.refresh},
		{"Timings", theme.HistoryIcon(), in.timings.content(), in.timings.refresh},
		{"Settings", theme.SettingsIcon(), in.settings.content(), in.settings.refresh},
		{"Compare", theme.ContentCopyIcon(), in.compare.content(), nil},
		{"What if", theme.QuestionIcon(), in.whatIf.content(), nil},
	} {
		item := container.NewTabItemWithIcon(t.name, t.icon, t.content)
		items = append(items, item)
		if t.refresh != nil {
			in.tabPanels[item] = t.refresh
			in.tabOrder = append(in.tabOrder, item)
		}
		switch t.name {
		case "Attention":
			in.attnTab = item
		case "What if":
			in.whatIfTab = item
		}
	}
	in.tabs = container.NewAppTabs(items...)
	in.tabs.OnSelected = in.showTab
	ctl.OnSnapshot = in.setSnapshot
	ctl.OnStatus = in.toolbar.setStatus
	ctl.OnCompare = in.setCompare
	ctl.OnWhatIf = in.whatIf.show
	ctl.OnSweep = in.whatIf.showSweep
	in.root = newTipRoot(in.layout())
	win.SetContent(in.root)
	win.SetOnDropped(in.dropped)
	win.SetOnClosed(func() {
		in.saveLayout()
		ctl.WindowClosed()
	})
	in.installKeys()
	return in
}

// layout: toolbar and block strip on top, the image and the tabs side by side. Each tab
// scrolls vertically rather than grow the window (27 blocks x 16 heads fit 1366x768).
func (in *Inspector) layout() fyne.CanvasObject {
	colourBy := withTip(in.stripBy, "Colour each block by its wall time, or by how much it changed the activations (mean ||out−in||/||in||)")
	stripRow := container.NewBorder(nil, nil, widget.NewLabelWithStyle("Blocks", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewHBox(widget.NewLabel("colour by"), colourBy), in.strip)
	for _, tab := range in.tabs.Items {
		tab.Content = container.NewVScroll(tab.Content)
	}
	in.split = container.NewHSplit(in.image.content(), in.tabs)
	in.split.SetOffset(in.savedSplit(0.52))
	return container.NewBorder(container.NewVBox(in.toolbar.content(), stripRow), nil, nil, nil, in.split)
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
	in.toolbar.syncRunButtons()
	in.refresh()
	if justFinished && in.OnFinished != nil {
		in.OnFinished(s)
	}
}

// followRun: while blocks arrive, the selection follows the newest block unless the user
// picked another one, or picked one before a re-run of the page (kept).
func (in *Inspector) followRun(fresh bool) bool {
	return !in.kept && (fresh || in.Sel.Block >= in.Snap.Next-2)
}

// onNewRun fits the selection to a new run; prev is the run shown before (nil: none).
func (in *Inspector) onNewRun(prev *Snapshot) {
	s := in.Snap
	in.image.setPage(s)
	same := samePage(prev, s)
	if !same || in.Sel.Query < 0 || in.Sel.Query >= s.Layout.Rows() {
		in.Sel.Query = defaultQuery(s)
	}
	if in.Sel.Head >= s.Config.Heads {
		in.Sel.Head = -1
	}
	in.kept = same && in.chosen
	if in.kept {
		in.Sel.Block = min(in.Sel.Block, s.Config.Depth-1)
	} else {
		in.Sel.Block, in.chosen = 0, false
	}
	if !slices.Contains(tapOptions(s), in.Sel.Tap) {
		in.Sel.Tap = engine.TapOut.String()
	}
	in.settings.load(s.Settings)
	in.attention.setHeads(s.Config.Heads)
	in.activation.setChannels(s.Config.Hidden)
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
	in.refreshStrip()
	in.image.refresh()
	for _, item := range in.tabOrder {
		in.refreshTab(item)
	}
}

// refreshTab redraws a tab's panel if its tab is shown, and otherwise when it is shown
// (showTab): a hidden panel's text layout and charts cost the UI goroutine as much as a
// shown one's (wrapped text is shaped again on every change), and during Run all that time
// was taken from the blocks.
//
// Invariant: a shown tab is never stale. Mutation that would silently break it: marking a
// tab stale without refreshing it when it is selected — it would show an older run.
func (in *Inspector) refreshTab(item *container.TabItem) {
	if in.tabs.Selected() != item {
		in.staleTabs[item] = true
		return
	}
	delete(in.staleTabs, item)
	in.tabPanels[item]()
}

// showTab brings a tab that was hidden while its data changed up to date.
func (in *Inspector) showTab(item *container.TabItem) {
	in.whatIf.armDrag(item == in.whatIfTab) // a drag over the image draws a mask while What if is shown
	if in.staleTabs[item] && in.Snap.Loaded() {
		in.refreshTab(item)
	}
}

// refreshAttention redraws the Attention tab (now if shown).
func (in *Inspector) refreshAttention() { in.refreshTab(in.attnTab) }

func (in *Inspector) refreshStrip() {
	s := in.Snap
	if !s.Loaded() {
		return
	}
	vals := make([]float64, s.Config.Depth)
	for i := range vals {
		vals[i] = nan()
		if i < len(s.Timings) {
			vals[i] = in.stripValue(i)
		}
	}
	in.strip.SetValues(vals, widgets.Magma)
	marked := make([]bool, s.Config.Depth)
	for i := range marked {
		marked[i] = s.Layout.Windowed(i)
	}
	in.strip.SetMarked(marked)
	in.strip.SetSelected(in.Sel.Block)
	if s.Next < s.Config.Depth {
		in.strip.SetCurrent(s.Next)
	} else {
		in.strip.SetCurrent(-1)
	}
}

func (in *Inspector) stripValue(i int) float64 {
	if in.stripBy.Selected == "time" {
		return in.Snap.Timings[i].Wall.Seconds() * 1000
	}
	return in.Snap.Stats[i].MeanChange
}

func (in *Inspector) blockTooltip(i int) string {
	s := in.Snap
	attends := ""
	if s.Loaded() && s.Layout.Windowed(i) {
		attends = " · attends within windows (the bar)"
	} else if s.Loaded() && s.Layout.AnyWindowed() {
		attends = " · attends over the whole image"
	}
	if !s.Loaded() || i >= len(s.Timings) {
		return fmt.Sprintf("block %d: not run yet%s", i, attends)
	}
	t := s.Timings[i]
	return fmt.Sprintf("block %d: %.1f ms (attention %.1f, MLP %.1f, wait %.1f), change %.3f%s", i,
		ms(t.Wall), ms(t.Attention), ms(t.MLP), ms(t.Wait), s.Stats[i].MeanChange, attends)
}

// SelectBlock shows block i everywhere: the user's choice, kept over re-runs of the page.
func (in *Inspector) SelectBlock(i int) {
	if !in.Snap.Loaded() || i < 0 || i >= in.Snap.Config.Depth {
		return
	}
	in.Sel.Block, in.chosen, in.kept = i, true, false
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
	in.image.syncControls()
	in.refresh()
	in.refreshMenu()
}

func (in *Inspector) setCompare(r *CompareResult) {
	in.compareRes = r
	in.syncMenus()
	in.compare.show(r)
}

// OpenFiles starts a session on a checkpoint (a directory, or a Hugging Face repo id found
// in the local cache: engine.ResolveCheckpoint) and an image, with the current settings.
// Both go to Recent as named.
func (in *Inspector) OpenFiles(dir, image string) {
	resolved, err := engine.ResolveCheckpoint(dir)
	if err != nil {
		in.toolbar.say("open: "+err.Error(), err)
		return
	}
	in.names[resolved] = dir
	if dir != in.demo[0] {
		rememberRecent(in.prefs, recentCheckpoints, dir)
		if resolved == dir { // a folder, not a repo id: the folder dialog starts beside it
			in.rememberFolder(prefCheckpointFolder, parentDir(dir))
		}
	}
	if image != in.demo[1] {
		rememberRecent(in.prefs, recentImages, image)
		in.rememberFolder(prefImageFolder, parentDir(image))
	}
	in.refreshMenu()
	in.Ctl.Open(resolved, image, in.openSettings())
}

// checkpointName is what the user called the checkpoint resolved to dir (a repo id or path).
func (in *Inspector) checkpointName(dir string) string {
	if n := in.names[dir]; n != "" {
		return n
	}
	return dir
}

// SetDemo names the embedded demo's files, which are never remembered as recent or last.
func (in *Inspector) SetDemo(dir, image string) { in.demo = [2]string{dir, image} }

// OpenDemo opens the embedded demo checkpoint on its photo (File ▸ Open demo).
func (in *Inspector) OpenDemo() {
	if in.demo[0] == "" {
		in.toolbar.say("the demo is not unpacked in this session", errors.New("no demo"))
		return
	}
	in.OpenFiles(in.demo[0], in.demo[1])
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
		in.toolbar.say("drop a checkpoint folder and an image (one of each is needed)", nil)
		return
	}
	in.OpenFiles(dir, image)
}

// ButtonBounds is the toolbar button labelled text: its position in the window and size
// (ok false: no such button). The smoke test hovers one for its tooltip.
func (in *Inspector) ButtonBounds(text string) (pos fyne.Position, size fyne.Size, ok bool) {
	t := in.toolbar
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
	return d.AbsolutePositionForObject(in.image.view), in.image.view.Size()
}

package ui

// tabs.go: the tabs beside the image — Attention, Activations, Timings, Settings, Compare,
// What if — and when each is drawn. A tab's panel is redrawn when the selection or the
// snapshot changes only if the tab is shown, and otherwise when it is shown (showTab): a
// hidden panel's text layout and charts cost the UI goroutine as much as a shown one's
// (wrapped text is shaped again on every change), and during Run all that time was taken
// from the blocks.
//
// Invariant: a shown tab is never stale. Mutation that would silently break it: marking a
// tab stale without refreshing it when it is selected — it would show an older run.

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
)

// tabSet is the tabs and which of them are stale.
type tabSet struct {
	*container.AppTabs
	refresh map[*container.TabItem]func() // each tab's refresh (lazy: refreshTab)
	order   []*container.TabItem          // the tabs with a refresh, in the order they refresh
	stale   map[*container.TabItem]bool   // tabs not refreshed since they were hidden
	attn    *container.TabItem
	whatIf  *container.TabItem // the View menu focuses its first field; a drag on the image draws its masks
}

// newTabs makes the tabs of the panels.
func (in *Inspector) newTabs() *tabSet {
	p := in.panels
	ts := &tabSet{refresh: map[*container.TabItem]func(){}, stale: map[*container.TabItem]bool{}}
	var items []*container.TabItem
	for _, t := range []struct {
		name    string
		icon    fyne.Resource
		content fyne.CanvasObject
		refresh func() // nil: the tab draws itself when its data comes (Compare)
	}{
		{"Attention", theme.VisibilityIcon(), p.attention.content(), p.attention.refresh},
		{"Activations", theme.ListIcon(), p.activation.content(), p.activation.refresh},
		{"Timings", theme.HistoryIcon(), p.timings.content(), p.timings.refresh},
		{"Settings", theme.SettingsIcon(), p.settings.content(), p.settings.refresh},
		{"Compare", theme.ContentCopyIcon(), p.compare.content(), nil},
		{"What if", theme.QuestionIcon(), p.whatIf.content(), nil},
	} {
		item := container.NewTabItemWithIcon(t.name, t.icon, t.content)
		items = append(items, item)
		if t.refresh != nil {
			ts.refresh[item] = t.refresh
			ts.order = append(ts.order, item)
		}
		switch t.name {
		case "Attention":
			ts.attn = item
		case "What if":
			ts.whatIf = item
		}
	}
	ts.AppTabs = container.NewAppTabs(items...)
	ts.OnSelected = in.showTab
	return ts
}

// refreshTab redraws a tab's panel if its tab is shown, and marks it stale otherwise.
func (in *Inspector) refreshTab(item *container.TabItem) {
	ts := in.tabs
	if ts.Selected() != item {
		ts.stale[item] = true
		return
	}
	delete(ts.stale, item)
	ts.refresh[item]()
}

// showTab brings a tab that was hidden while its data changed up to date.
func (in *Inspector) showTab(item *container.TabItem) {
	in.armDrag(item == in.tabs.whatIf)
	if in.tabs.stale[item] && in.Snap.Loaded() {
		in.refreshTab(item)
	}
}

// armDrag makes a drag over the image draw a mask rectangle of the What if tab (on: while
// it is shown), or do nothing.
func (in *Inspector) armDrag(on bool) {
	if !on {
		in.panels.image.onDrag(nil)
		return
	}
	in.panels.image.onDrag(in.panels.whatIf.dragRect)
}

// refreshAttention redraws the Attention tab (now if shown).
func (in *Inspector) refreshAttention() { in.refreshTab(in.tabs.attn) }

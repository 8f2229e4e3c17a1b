// Package ui is the inspector's window: the panels that show what the engine finds, around
// the machinery of ui/control (the controller that drives the engine off the UI goroutine,
// the what-if jobs, the backends offered, the row service every panel asks for attention
// rows and maps), which imports no Fyne. No model math here (engine does it), and no import
// of fyne's app package, so everything runs headless under fyne/test.
//
// doc.go: the map of the package. window.go holds the Inspector — the selection and the
// snapshot every panel draws from, and the owners of the rest (maps.go: how the selection
// becomes a map; tabs.go, strip.go, menu.go, prefs.go); each panel (imagepanel.go,
// attention.go, activations.go, timings.go, settings.go, compare.go, whatif.go) owns its
// widgets and what it keeps to draw them. Invariant: no panel reads another panel's state;
// what two panels both show comes from the Inspector or the row service. The mutation that
// would silently break it: a panel drawing from another's cache (the attention tab's top
// list from the image panel's last map) — it would show what the other panel drew last,
// for the selection of then.
package ui

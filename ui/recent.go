package ui

// recent.go keeps the recently opened checkpoints and images in the app's preferences,
// newest first, without duplicates, at most recentMax of each.

import "fyne.io/fyne/v2"

const (
	recentCheckpoints = "recent.checkpoints"
	recentImages      = "recent.images"
	recentMax         = 8
)

func recentList(p fyne.Preferences, key string) []string {
	if p == nil {
		return nil
	}
	return p.StringList(key)
}

func rememberRecent(p fyne.Preferences, key, path string) {
	if p == nil || path == "" {
		return
	}
	list := []string{path}
	for _, x := range p.StringList(key) {
		if x != path && len(list) < recentMax {
			list = append(list, x)
		}
	}
	p.SetStringList(key, list)
}

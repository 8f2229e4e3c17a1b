package ui

// owners_test.go: the Inspector is a few owners, and no panel reaches into another. A panel
// file (a panel's widgets and what it keeps to draw them) names no other panel: what two
// panels both show comes from the Inspector (the selection, the snapshot, maps.go's map of
// the selection, the row service), and a status message goes through Inspector.say. Catches:
// the attention tab ranking the image panel's last map (in.panels.image.values), an export
// reading the attention tab's statistics, a 30-field Inspector growing back.

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// panelFiles are the files of the panels.
var panelFiles = []string{"imagepanel.go", "attention.go", "matrixpane.go", "activations.go", "timings.go",
	"settings.go", "compare.go", "whatif.go", "toolbar.go", "strip.go"}

func TestNoPanelReadsAnother(t *testing.T) {
	for _, f := range panelFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, "panels.") && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d reaches into a panel: %s", f, i+1, strings.TrimSpace(line))
			}
		}
	}
}

func TestInspectorIsAFewOwners(t *testing.T) {
	if n := reflect.TypeFor[Inspector]().NumField(); n > 12 {
		t.Errorf("Inspector has %d fields: group them into owners (at most 12)", n)
	}
}

package control

// nofyne_test.go: control is the window's machinery without the window. It (and its tests)
// must import no fyne.io package, directly or through another package, so that all of it
// builds and runs where no display, GL or cgo is: go list -deps is the build's own answer.

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestImportsNoFyne(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-test", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var fyne []string
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "fyne.io/") {
			fyne = append(fyne, pkg)
		}
	}
	if len(fyne) > 0 {
		t.Errorf("control depends on %d fyne.io packages, e.g. %s", len(fyne), strings.Join(fyne[:min(3, len(fyne))], ", "))
	}
	if !strings.Contains(string(out), "github.com/turbospark/inspector/ui/control") {
		t.Errorf("go list named no control package: the check is vacuous\n%s", out)
	}
}

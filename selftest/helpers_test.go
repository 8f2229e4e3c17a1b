package selftest

// helpers_test.go: the test binary is the program's children (TestMain), and the program
// itself is built from app/ for the tests that run it as a user does.

import (
	"github.com/turbospark/inspector/internal/testfixture"

	"fmt"
	"os"
	"testing"

	"github.com/turbospark/inspector/internal/jsonx"
)

// TestMain hands a child's command line (IsChild) to the child, as the program's main does:
// the probe and the Metal section's children started from in-process code run this test
// binary (os.Executable), which would otherwise run the whole suite again, recursively.
func TestMain(m *testing.M) {
	if IsChild(os.Args[1:]) {
		if err := RunChild(os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "inspector:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	narrowToStandin()
	code := m.Run()
	removeBuilt()
	os.Exit(code)
}

// buildInspector builds the program, with the tests' hooks (selftest/testhooks.go), once per
// test process.
func buildInspector(t *testing.T) string {
	t.Helper()
	return buildInspectorTags(t, "inspectortest")
}

// buildInspectorTags builds the program with the build tags tags ("" for the release build),
// once per test process (testfixture.Program).
func buildInspectorTags(t *testing.T, tags string) string {
	t.Helper()
	return testfixture.Program(t, "../app", tags)
}

// removeBuilt removes the binaries buildInspectorTags built (TestMain, after the tests).
func removeBuilt() { testfixture.RemovePrograms() }

// needsHooks skips a test that uses the tests' hooks in this process when the test binary was
// built without them (go test without -tags inspectortest; make test has it).
func needsHooks(t *testing.T) {
	t.Helper()
	if !TestHooksBuilt {
		t.Skip("needs the tests' hooks in the test binary: go test -tags inspectortest (make test)")
	}
}

// saveReport is Options.Save writing the report to path as JSON, as --report does.
func saveReport(path string) func(r *Report) error {
	return func(r *Report) error {
		b, err := jsonx.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		return os.WriteFile(path, append(b, '\n'), 0o644)
	}
}

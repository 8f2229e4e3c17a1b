package selftest

// standin_test.go: which of this package's tests the stand-in pass runs again (make
// test-standin: INSPECTOR_TEST_GPU=cpu-standin, -standin-only). The stand-in changes a test
// only where the GPU's part is decided from the environment the test inherits: auto (or the
// window) resolving a backend in this process, or in a binary started without an
// INSPECTOR_TEST_GPU of its own — there the CPU engine plays Metal, as on a Mac. A test that
// names the CPU, runs no backend, or gives its children their own variable (probeEnv) runs
// the same either way, and the native pass holds it.
//
// The lists were made by running each test alone with every consult of the Metal decision
// (metalOK, StandinGPU) logged while INSPECTOR_TEST_GPU was unset, in the test process and its
// children; a test that logged one, or reads the variable itself (metalOnThisMachine), is a
// GPU-path test. Classify a new test the same way.
//
// Invariant: every Test function of the package is in exactly one list
// (TestStandinListsClassifyEveryTest), so a new test is classified, not missed. Mutation that
// would silently break it: a -run list in the Makefile instead — a new test that resolves auto
// would never run with the stand-in GPU, and nothing would say so.

import (
	"github.com/turbospark/inspector/internal/testfixture"

	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

// gpuPathTests run again with the stand-in GPU: selftest's Metal section runs in children
// there (it is skipped here), and they read INSPECTOR_TEST_GPU themselves.
var gpuPathTests = []string{"TestSelftest", "TestSelftestReportOffMac"}

// gpuFreeTests run the same whatever INSPECTOR_TEST_GPU says (they give the children they
// start their own, probeEnv, or run no backend): the native pass holds them.
var gpuFreeTests = []string{
	"TestChildCommandsAreDispatched", "TestChildEventsCarryNonFiniteAsText", "TestCoverageLineNamesFallbacks",
	"TestCtrlCDuringTheProbeIsNotACrash", "TestProbeFallbacksSaid", "TestProbeFaultsStartOnTheCPU",
	"TestProbeRememberedUntilRetry", "TestProbeRemembersOnlyCrashes", "TestProbeWrongKernelsStartOnTheCPU",
	"TestReleaseBuildHasNoTestHooks", "TestSelftestMetalChildFaults", "TestSelftestNonFiniteAndStrayOutputsFail",
	"TestSelftestReportsFailures", "TestSelftestStopsWhenTheGPUFailsEarly", "TestSelftestUnreportedCheckFails",
	"TestUnknownMetalSettingIsNamed", "TestWindowBackendsAfterACrash", "TestStandinListsClassifyEveryTest",
}

var standinOnly = flag.Bool("standin-only", false, "run only the tests the stand-in GPU changes (standin_test.go; make test-standin)")

// narrowToStandin, with -standin-only, makes -test.run the GPU-path tests; it refuses to run
// them without the stand-in GPU, which is their point.
func narrowToStandin() {
	flag.Parse()
	if !*standinOnly {
		return
	}
	if os.Getenv(EnvTestGPU) != "cpu-standin" {
		fmt.Fprintln(os.Stderr, "-standin-only: set "+EnvTestGPU+"=cpu-standin (make test-standin does)")
		os.Exit(2)
	}
	flag.Set("test.run", "^("+strings.Join(gpuPathTests, "|")+")$")
}

func TestStandinListsClassifyEveryTest(t *testing.T) {
	testfixture.CheckClassified(t, gpuPathTests, gpuFreeTests)
}

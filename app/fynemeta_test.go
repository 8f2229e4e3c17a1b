package main

import "testing"

// The shipped window declares the fyneDo migration (no per-Refresh stack parse), unless the
// thread checks are asked for; it always names itself, so fyne reads no FyneApp.toml.
func TestFyneMetadataDeclaresFyneDoUnlessChecksAsked(t *testing.T) {
	for _, checks := range []bool{false, true} {
		m := fyneMetadata("Title", checks)
		if got := m.Migrations["fyneDo"]; got == checks {
			t.Errorf("checks %v: fyneDo migration %v, want %v", checks, got, !checks)
		}
		if m.ID != appID || m.Name != "Title" {
			t.Errorf("checks %v: ID %q Name %q: fyne would look for a FyneApp.toml when both are empty", checks, m.ID, m.Name)
		}
	}
	t.Setenv(threadChecksEnv, "")
	if threadChecksAsked() {
		t.Errorf("thread checks asked with %s unset", threadChecksEnv)
	}
	t.Setenv(threadChecksEnv, "1")
	if !threadChecksAsked() {
		t.Errorf("thread checks not asked with %s=1", threadChecksEnv)
	}
}

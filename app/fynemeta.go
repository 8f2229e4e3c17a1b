//go:build !nogui

package main

// fynemeta.go: what the window tells fyne about itself before fyne's app is made.
//
// Every fyne call of ours runs on the main goroutine (the controller posts through fyne.Do),
// which fyne calls the "fyneDo" migration. Declaring it turns off fyne's per-call thread
// check, which finds the calling goroutine by parsing runtime.Stack: fyne runs it on every
// canvas Refresh, and a followed hover at 5,120 patches refreshes the head grid, the top
// list and the image's overlay, hundreds of objects, ~4 ms of the 16 ms a frame may take.
// The ID and Name also keep fyne from looking for a FyneApp.toml beside the binary or in the
// working folder (it does when both are empty) and taking its migrations from there.
//
// Invariant: the checks stay on where they catch mistakes: INSPECTOR_FYNE_THREAD_CHECKS=1
// leaves the migration undeclared, and the smoke test runs the window so (a fyne call off the
// main goroutine then reports "Error in Fyne call thread" on stderr, which fails it). The
// mutation that would silently break it: declaring the migration regardless — a call off
// the main goroutine would race fyne's canvas with no report anywhere.

import (
	"os"

	"fyne.io/fyne/v2"
)

// appID names the window's preferences and storage.
const appID = "com.turbospark.inspector"

// threadChecksEnv keeps fyne's thread checks on (the smoke test sets it).
const threadChecksEnv = "INSPECTOR_FYNE_THREAD_CHECKS"

// fyneMetadata is the metadata fyneapp.SetMetadata gets before fyneapp.NewWithID;
// checks keeps fyne's thread checks (the fyneDo migration undeclared).
func fyneMetadata(title string, checks bool) fyne.AppMetadata {
	return fyne.AppMetadata{
		ID:         appID,
		Name:       title,
		Version:    "0.0.1",
		Build:      1,
		Migrations: map[string]bool{"fyneDo": !checks},
	}
}

// threadChecksAsked says whether the environment asks for fyne's thread checks.
func threadChecksAsked() bool { return os.Getenv(threadChecksEnv) == "1" }

//go:build inspectortest

package quitwatch

import "os"

// HangAfterWindow says whether the program should wait forever once its window is gone, as
// Fyne's shutdown sometimes does (tests only).
func HangAfterWindow() bool { return os.Getenv(EnvTestHang) != "" }

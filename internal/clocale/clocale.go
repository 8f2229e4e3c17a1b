// Package clocale keeps Fyne quiet about a C locale with a codeset (LANG=C.UTF-8, Debian's
// default): Fyne's lang package parses the user's locale in its init, before main, with
// github.com/jeandeaual/go-locale, which takes the first of LC_ALL, LC_MESSAGES and LANG,
// treats exactly "C" and "POSIX" as no locale, and otherwise returns LANGUAGE if set, else
// that value, codeset cut: "C". golang.org/x/text/language cannot parse "C", and Fyne logs
// "Fyne error: Error parsing user locale C" (three lines on stderr) from every command of the
// binary — the CLI's too, since every package linked in is initialized.
//
// A C locale means untranslated messages, which for Fyne is English, its fallback. So when
// the locale is C or POSIX with a codeset and LANGUAGE is unset, this package's init sets
// LANGUAGE=en for the process: go-locale then returns "en", the same language Fyne falls back
// to under plain C. (GNU gettext ignores LANGUAGE under the C locale; nothing else reads it.)
//
// It must run before fyne.io/fyne/v2/lang's init. Go initializes packages in the order the
// spec fixes (since Go 1.21): repeatedly the first package, sorted by import path, whose
// imports are all initialized. This package imports only os and strings, which
// golang.org/x/text/language (an import of fyne's lang) depends on too, and its path sorts
// before golang.org/..., so it is initialized before x/text/language and hence before lang.
// app/main.go imports it for that; app's TestCLIStderrQuietUnderCLocales runs the binary under them.
//
// Keep its imports to packages x/text/language imports too (os, strings): with any other,
// the order above is no longer guaranteed by the rule, only by today's import graph.
//
// Invariant: the environment changes only when go-locale would return a C locale with a
// codeset, and only LANGUAGE, before fyne's lang package is initialized. The mutation that
// would silently break it: calling Quiet from main instead of from init — it compiles and
// sets the variable, but fyne has parsed the locale and logged by then.
package clocale

import (
	"os"
	"strings"
)

func init() { Quiet() }

// Quiet sets LANGUAGE=en where go-locale would hand Fyne a C locale with a codeset.
func Quiet() {
	if os.Getenv("LANGUAGE") != "" {
		return
	}
	if isCWithCodeset(effective()) {
		os.Setenv("LANGUAGE", "en")
	}
}

// effective is the locale go-locale reads: the first non-empty of LC_ALL, LC_MESSAGES, LANG.
func effective() string {
	for _, v := range []string{"LC_ALL", "LC_MESSAGES", "LANG"} {
		if l := os.Getenv(v); l != "" {
			return l
		}
	}
	return ""
}

// isCWithCodeset: C.UTF-8, POSIX.utf8, C.UTF-8@modifier... (plain C and POSIX are fine).
func isCWithCodeset(l string) bool {
	lang, _, _ := strings.Cut(l, ".")
	lang, _, _ = strings.Cut(lang, "@")
	return (lang == "C" || lang == "POSIX") && l != lang
}

package intervene

import "fmt"

// QuoteShort quotes what the user gave, for an error message: whole when short, else its first
// bytes and its length. A value can be a file's contents (a --mask-patches FILE of 16 MB) or a
// pasted paragraph; a message that echoes it whole is unreadable (and was 42 MB once).
func QuoteShort(s string) string {
	const keep = 60
	if len(s) <= 2*keep {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q… (%d bytes)", s[:keep], len(s)) // %q escapes a rune cut in two
}

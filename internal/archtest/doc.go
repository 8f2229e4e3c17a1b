// Package archtest checks that the import rules docs/ARCHITECTURE.md states are the code's:
// its test reads the rules from the page itself (the fenced block after "## Import rules") and
// the imports of every package of the module (go list), so the page and the code cannot drift
// apart unseen. The package holds no code of its own.
//
// Invariant: every package of the module is named by some rule, and imports only the module
// packages its rule allows. Mutation that would silently break it: a rule pattern that matches
// more than it says (a prefix "engine" matching "enginex") — an import the page forbids would
// pass (TestRulePatterns).
package archtest

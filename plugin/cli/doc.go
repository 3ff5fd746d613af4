// Package cli is the command line's own machinery, apart from any one
// command: the version a binary reports, read from the build information Go
// records (ReadVersion), suggestions for a mistyped command or flag
// (Suggest), and shell completion scripts for bash, zsh and fish made from
// the commands' flag sets (Completion). It defines no flags; cmd/sparkplug
// does.
package cli

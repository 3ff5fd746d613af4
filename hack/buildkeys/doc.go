// Package buildkeys holds the tests of the build scripts' cache keys
// (hack/tools.sh, servers.sh, helm.sh, kueue.sh, node.sh, operator.sh and
// their shared hack/lib.sh): a key changes with what makes a build (the
// pins, a script's functions, its Go environment) and with nothing else,
// so that editing a comment, a usage text or the shared skeleton rebuilds
// nothing, and editing a build step rebuilds it.
package buildkeys

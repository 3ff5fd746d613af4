// Command step is the container step of the real-node tests' workflows: a
// static binary in an image of its own (no shell), run by Argo's emissary.
//
//	step FILE WORDS...
//
// prints WORDS joined by spaces and writes them to FILE (an output
// parameter's path), creating its directory.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: step FILE WORDS...")
		os.Exit(2)
	}
	out := strings.Join(os.Args[2:], " ")
	fmt.Println(out)
	if err := os.MkdirAll(filepath.Dir(os.Args[1]), 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[1], []byte(out), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

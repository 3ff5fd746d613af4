// Command triage reads govulncheck's JSON output (-format json) on stdin
// and fails unless every vulnerability the code calls is either fixed or
// accepted, with a reason, in the file named by -accepted.
//
// A line of that file is an OSV id, spaces, and why it does not apply or
// cannot be fixed here; # starts a comment. An accepted id that the scan
// no longer reports is named, so the file does not outlive its reasons.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
)

// message is one object of govulncheck's JSON stream; only the parts
// triage reads.
type message struct {
	OSV *struct {
		ID      string `json:"id"`
		Summary string `json:"summary"`
	} `json:"osv"`
	Finding *struct {
		OSV          string `json:"osv"`
		FixedVersion string `json:"fixed_version"`
		Trace        []struct {
			Module   string `json:"module"`
			Version  string `json:"version"`
			Package  string `json:"package"`
			Function string `json:"function"`
		} `json:"trace"`
	} `json:"finding"`
}

// called is a vulnerability the code reaches: where and what fixes it.
type called struct {
	summary, module, version, fixed string
}

func main() {
	acceptedPath := flag.String("accepted", "", "file of accepted OSV ids, one per line with its reason")
	flag.Parse()
	accepted, err := readAccepted(*acceptedPath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "triage:", err)
		os.Exit(2)
	}
	found, err := readFindings(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "triage:", err)
		os.Exit(2)
	}
	os.Exit(report(os.Stdout, found, accepted))
}

func readAccepted(path string) (map[string]string, error) {
	if path == "" {
		return nil, fmt.Errorf("-accepted is required")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	accepted := map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, _ := strings.Cut(line, " ")
		if reason = strings.TrimSpace(reason); reason == "" {
			return nil, fmt.Errorf("%s:%d: %s has no reason", path, i+1, id)
		}
		accepted[id] = reason
	}
	return accepted, nil
}

// readFindings keeps the vulnerabilities whose trace reaches a function
// (govulncheck's "called" level), by id.
func readFindings(r io.Reader) (map[string]called, error) {
	summaries := map[string]string{}
	found := map[string]called{}
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var m message
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("govulncheck output: %w", err)
		}
		if m.OSV != nil {
			summaries[m.OSV.ID] = m.OSV.Summary
		}
		f := m.Finding
		if f == nil || len(f.Trace) == 0 || f.Trace[0].Function == "" {
			continue
		}
		found[f.OSV] = called{module: f.Trace[0].Module, version: f.Trace[0].Version, fixed: f.FixedVersion}
	}
	for id, c := range found {
		c.summary = summaries[id]
		found[id] = c
	}
	return found, nil
}

// report prints every called vulnerability, accepted or not, and the
// accepted ids no longer found; it returns the exit code: 1 when one is
// neither fixed nor accepted.
func report(w io.Writer, found map[string]called, accepted map[string]string) int {
	code := 0
	for _, id := range slices.Sorted(maps.Keys(found)) {
		c := found[id]
		fixed := c.fixed
		if fixed == "" {
			fixed = "no fixed version"
		}
		if reason, ok := accepted[id]; ok {
			fmt.Fprintf(w, "accepted %s (%s %s, %s): %s\n", id, c.module, c.version, fixed, reason)
			continue
		}
		code = 1
		fmt.Fprintf(w, "CALLED   %s (%s %s, fixed in %s): %s\n", id, c.module, c.version, fixed, c.summary)
	}
	for _, id := range slices.Sorted(maps.Keys(accepted)) {
		if _, ok := found[id]; !ok {
			fmt.Fprintf(w, "stale    %s is accepted but no longer called: remove it from the accepted list\n", id)
		}
	}
	if code != 0 {
		fmt.Fprintln(w, "vulnerable code is called: bump the module to its fixed version, or accept the id with a reason")
	}
	return code
}

package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// DevVersion is the version of a binary built without a version: neither
// -ldflags "-X main.version=..." nor a module version (go build in a
// clone without VCS information).
const DevVersion = "dev"

// Version is what a binary says about itself.
type Version struct {
	// Version is the -ldflags version, else the main module's version Go
	// recorded (go install module@v1.2.3, or the pseudo-version go build
	// stamps from the VCS), else DevVersion.
	Version string
	// Commit is vcs.revision, and Modified vcs.modified: the work tree
	// had uncommitted changes.
	Commit   string
	Modified bool
	// Date is vcs.time, the commit's time: Go records no build time, so
	// that a build is reproducible.
	Date string
	// GoVersion is the toolchain that built the binary; Platform its
	// GOOS/GOARCH.
	GoVersion, Platform string
}

// ReadVersion is the version of a binary whose -ldflags version is
// ldflags (DevVersion or "" when none was set) and whose build
// information is bi (nil when the binary has none).
func ReadVersion(ldflags string, bi *debug.BuildInfo) Version {
	v := Version{Version: ldflags, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if v.Version == "" {
			v.Version = DevVersion
		}
		return v
	}
	if bi.GoVersion != "" {
		v.GoVersion = bi.GoVersion
	}
	goos, goarch := runtime.GOOS, runtime.GOARCH
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Commit = s.Value
		case "vcs.time":
			v.Date = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		case "GOOS":
			goos = s.Value
		case "GOARCH":
			goarch = s.Value
		}
	}
	v.Platform = goos + "/" + goarch
	if v.Version == "" || v.Version == DevVersion {
		switch m := bi.Main.Version; {
		case m != "" && m != "(devel)":
			v.Version = m
		default:
			v.Version = DevVersion
		}
	}
	return v
}

// String is the long form, one field a line, as `sparkplug version` prints
// it.
func (v Version) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sparkplug %s\n", v.Version)
	commit := v.Commit
	if commit == "" {
		commit = "unknown"
	}
	if v.Modified {
		commit += " (modified: built with uncommitted changes)"
	}
	fmt.Fprintf(&b, "  commit:      %s\n", commit)
	date := v.Date
	if date == "" {
		date = "unknown"
	}
	fmt.Fprintf(&b, "  commit date: %s\n", date)
	fmt.Fprintf(&b, "  go:          %s\n", v.GoVersion)
	fmt.Fprintf(&b, "  platform:    %s\n", v.Platform)
	return b.String()
}

// Line is the one-line form, as `sparkplug --version` prints it.
func (v Version) Line() string {
	parts := []string{}
	if v.Commit != "" {
		c := v.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if v.Modified {
			c += "+modified"
		}
		parts = append(parts, "commit "+c)
	}
	if v.Date != "" {
		parts = append(parts, v.Date)
	}
	parts = append(parts, v.GoVersion, v.Platform)
	return fmt.Sprintf("sparkplug %s (%s)\n", v.Version, strings.Join(parts, ", "))
}

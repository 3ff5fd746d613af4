package cli

import (
	"runtime/debug"
	"testing"
)

func buildInfo(main string, settings ...string) *debug.BuildInfo {
	bi := &debug.BuildInfo{GoVersion: "go1.25.7", Main: debug.Module{Path: "github.com/sparkplug-io/sparkplug", Version: main}}
	for i := 0; i+1 < len(settings); i += 2 {
		bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
	}
	return bi
}

func TestVersionFormatting(t *testing.T) {
	vcs := []string{"vcs", "git", "vcs.revision", "4ae3133c0ffee0123456789abcdef0123456789a", "vcs.time", "2026-11-24T18:02:11Z", "GOOS", "linux", "GOARCH", "arm64"}
	tests := []struct {
		name      string
		ldflags   string
		bi        *debug.BuildInfo
		long, one string
	}{
		{
			name: "make build: -ldflags version first", ldflags: "v0.4.0", bi: buildInfo("v0.3.9", append(vcs, "vcs.modified", "false")...),
			long: "sparkplug v0.4.0\n  commit:      4ae3133c0ffee0123456789abcdef0123456789a\n  commit date: 2026-11-24T18:02:11Z\n  go:          go1.25.7\n  platform:    linux/arm64\n",
			one:  "sparkplug v0.4.0 (commit 4ae3133c0ffe, 2026-11-24T18:02:11Z, go1.25.7, linux/arm64)\n",
		},
		{
			name: "go build in a modified clone", ldflags: DevVersion, bi: buildInfo("v0.0.0-20261124180211-4ae3133c0ffe+dirty", append(vcs, "vcs.modified", "true")...),
			long: "sparkplug v0.0.0-20261124180211-4ae3133c0ffe+dirty\n  commit:      4ae3133c0ffee0123456789abcdef0123456789a (modified: built with uncommitted changes)\n  commit date: 2026-11-24T18:02:11Z\n  go:          go1.25.7\n  platform:    linux/arm64\n",
			one:  "sparkplug v0.0.0-20261124180211-4ae3133c0ffe+dirty (commit 4ae3133c0ffe+modified, 2026-11-24T18:02:11Z, go1.25.7, linux/arm64)\n",
		},
		{
			name: "go install module@version: no VCS", ldflags: DevVersion, bi: buildInfo("v0.4.0", "GOOS", "darwin", "GOARCH", "amd64"),
			long: "sparkplug v0.4.0\n  commit:      unknown\n  commit date: unknown\n  go:          go1.25.7\n  platform:    darwin/amd64\n",
			one:  "sparkplug v0.4.0 (go1.25.7, darwin/amd64)\n",
		},
		{
			name: "go build without VCS", ldflags: DevVersion, bi: buildInfo("(devel)", "GOOS", "linux", "GOARCH", "amd64"),
			long: "sparkplug dev\n  commit:      unknown\n  commit date: unknown\n  go:          go1.25.7\n  platform:    linux/amd64\n",
			one:  "sparkplug dev (go1.25.7, linux/amd64)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := ReadVersion(tt.ldflags, tt.bi)
			if got := v.String(); got != tt.long {
				t.Errorf("String:\n%s\nwant\n%s", got, tt.long)
			}
			if got := v.Line(); got != tt.one {
				t.Errorf("Line: %q, want %q", got, tt.one)
			}
		})
	}
}

// A binary without build information still says its version, Go and
// platform.
func TestVersionWithoutBuildInfo(t *testing.T) {
	v := ReadVersion("", nil)
	if v.Version != DevVersion || v.GoVersion == "" || v.Platform == "" {
		t.Errorf("%+v", v)
	}
	if v := ReadVersion("v1.0.0", nil); v.Version != "v1.0.0" {
		t.Errorf("%+v", v)
	}
}

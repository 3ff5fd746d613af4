package daemon

import (
	"bytes"
	"log/slog"
	"runtime/debug"
	"strings"
	"testing"
	"testing/fstest"
)

func TestCgroupMemoryLimit(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	for _, tc := range []struct {
		name     string
		fs       fstest.MapFS
		want     int64
		wantFile string
	}{{
		name: "v2 in a container's cgroup namespace",
		fs: fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("536870912\n"),
		},
		want: 512 << 20, wantFile: "sys/fs/cgroup/memory.max",
	}, {
		name: "v2 seen from the host's namespace: the process's own cgroup first",
		fs: fstest.MapFS{
			"proc/self/cgroup": file("0::/kubepods.slice/pod1/cri-containerd-abc.scope\n"),
			"sys/fs/cgroup/kubepods.slice/pod1/cri-containerd-abc.scope/memory.max": file("268435456\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		},
		want: 256 << 20, wantFile: "sys/fs/cgroup/kubepods.slice/pod1/cri-containerd-abc.scope/memory.max",
	}, {
		name: "v2 without a limit",
		fs: fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("max\n"),
		},
		want: 0, wantFile: "sys/fs/cgroup/memory.max",
	}, {
		name: "v1, the memory controller among others",
		fs: fstest.MapFS{
			"proc/self/cgroup": file("5:cpu,cpuacct:/x\n4:memory:/kubepods/pod1/abc\n0::/\n"),
			"sys/fs/cgroup/memory/kubepods/pod1/abc/memory.limit_in_bytes": file("134217728\n"),
		},
		want: 128 << 20, wantFile: "sys/fs/cgroup/memory/kubepods/pod1/abc/memory.limit_in_bytes",
	}, {
		name: "v1 without a limit (the largest page-rounded value)",
		fs: fstest.MapFS{
			"proc/self/cgroup":                           file("4:memory:/\n"),
			"sys/fs/cgroup/memory/memory.limit_in_bytes": file("9223372036854771712\n"),
		},
		want: 0, wantFile: "sys/fs/cgroup/memory/memory.limit_in_bytes",
	}, {
		name: "no cgroup file system",
		fs:   fstest.MapFS{},
		want: 0, wantFile: "",
	}, {
		name: "a limit that is not a number",
		fs: fstest.MapFS{
			"proc/self/cgroup":         file("0::/\n"),
			"sys/fs/cgroup/memory.max": file("lots\n"),
		},
		want: 0, wantFile: "sys/fs/cgroup/memory.max",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, file := CgroupMemoryLimit(tc.fs)
			if got != tc.want || file != tc.wantFile {
				t.Errorf("CgroupMemoryLimit = %d from %q, want %d from %q", got, file, tc.want, tc.wantFile)
			}
		})
	}
}

// The collector's limit follows the container's, unless GOMEMLIMIT says
// otherwise.
func TestLimitMemory(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	fs := fstest.MapFS{
		"proc/self/cgroup":         {Data: []byte("0::/\n")},
		"sys/fs/cgroup/memory.max": {Data: []byte("209715200\n")},
	}
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))

	t.Setenv("GOMEMLIMIT", "")
	want := int64(200 << 20 * MemoryFraction)
	if got := LimitMemory(fs, log); got != want {
		t.Errorf("LimitMemory = %d, want %d", got, want)
	}
	if got := debug.SetMemoryLimit(-1); got != want {
		t.Errorf("the collector's limit is %d, want %d", got, want)
	}
	if !strings.Contains(logs.String(), "container_limit=209715200") {
		t.Errorf("log lacks the container's limit: %s", logs.String())
	}

	debug.SetMemoryLimit(1 << 40)
	t.Setenv("GOMEMLIMIT", "300MiB")
	if got := LimitMemory(fs, log); got != 0 {
		t.Errorf("LimitMemory with GOMEMLIMIT set = %d, want 0", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<40 {
		t.Errorf("GOMEMLIMIT set, yet the collector's limit was changed to %d", got)
	}
}

package daemon

import (
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"
)

// MemoryFraction is the share of the container's memory limit that the Go
// collector keeps the process's own memory under: the rest is room for
// what the runtime does not count (the binary's pages the kernel charges
// to the container, the kernel's own buffers).
const MemoryFraction = 0.9

// LimitMemory sets the Go collector's soft memory limit
// (debug.SetMemoryLimit) to MemoryFraction of the memory limit of the
// process's cgroup, read from the root file system at root ("/" but in
// tests), unless GOMEMLIMIT is set (the runtime has applied it already) or
// no limit applies. So the collector works harder as the process nears
// its container's limit instead of being OOM-killed, and follows the limit
// when an operator raises or lowers it, where a fixed GOMEMLIMIT beside a
// raised limit would make the collector run without pause long before it.
// It returns the soft limit it set (0: none) and logs it.
func LimitMemory(root fs.FS, log *slog.Logger) int64 {
	if v, ok := os.LookupEnv("GOMEMLIMIT"); ok && v != "" {
		log.Info("memory limit", "gomemlimit", v, "from", "GOMEMLIMIT")
		return 0
	}
	limit, file := CgroupMemoryLimit(root)
	if limit <= 0 {
		log.Info("memory limit", "gomemlimit", "none", "from", "no cgroup memory limit")
		return 0
	}
	soft := int64(float64(limit) * MemoryFraction)
	debug.SetMemoryLimit(soft)
	log.Info("memory limit", "gomemlimit", soft, "container_limit", limit, "from", "/"+file)
	return soft
}

// CgroupMemoryLimit is the memory limit in bytes of the cgroup the process
// runs in, as root's /proc/self/cgroup and /sys/fs/cgroup say (cgroup v2,
// else v1), and the file it was read from; 0 where none applies (no
// cgroup, "max", or v1's page-rounded largest value).
func CgroupMemoryLimit(root fs.FS) (int64, string) {
	self, _ := fs.ReadFile(root, "proc/self/cgroup")
	var v2, v1 string
	for _, line := range strings.Split(string(self), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case hasController(parts[1], "memory"):
			v1 = parts[2]
		}
	}
	// The process's own cgroup, then the mount's root, which is the
	// container's own where the container has a cgroup namespace.
	var candidates []string
	if v2 != "" {
		candidates = append(candidates, path.Join("sys/fs/cgroup", v2, "memory.max"))
	}
	candidates = append(candidates, "sys/fs/cgroup/memory.max")
	if v1 != "" {
		candidates = append(candidates, path.Join("sys/fs/cgroup/memory", v1, "memory.limit_in_bytes"))
	}
	candidates = append(candidates, "sys/fs/cgroup/memory/memory.limit_in_bytes")
	for _, name := range candidates {
		b, err := fs.ReadFile(root, name)
		if err != nil {
			continue
		}
		return parseLimit(strings.TrimSpace(string(b))), name
	}
	return 0, ""
}

func hasController(list, name string) bool {
	for _, c := range strings.Split(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// parseLimit reads a cgroup memory limit: "max" (v2) and v1's "no limit"
// (the largest page-rounded int64) are none.
func parseLimit(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n >= math.MaxInt64/2 {
		return 0
	}
	return n
}

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// cgroupMemoryLimits are where a container sees its memory limit: cgroup
// v2 (its own cgroup's memory.max, at the root under a private cgroup
// namespace), then v1 (runc mounts the container's memory cgroup as the
// hierarchy's root).
func cgroupMemoryLimits() []string {
	var paths []string
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if p, ok := strings.CutPrefix(line, "0::"); ok && p != "/" {
				paths = append(paths, "/sys/fs/cgroup"+p+"/memory.max")
			}
		}
	}
	return append(paths, "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")
}

// exceedMemoryLimit allocates and touches memory until the kernel kills the
// process for exceeding its cgroup's limit. Without a limit it refuses
// (the test machine is shared); should the process outlive four times its
// limit, it gives up with an error.
func exceedMemoryLimit() error {
	limit, err := memoryLimit()
	if err != nil {
		return err
	}
	const chunk = 16 << 20
	var held [][]byte
	for total := int64(0); total < 4*limit; total += chunk {
		b := make([]byte, chunk)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		held = append(held, b)
	}
	return fmt.Errorf("allocated %d MiB over a limit of %d MiB and was not killed", len(held)*chunk>>20, limit>>20)
}

func memoryLimit() (int64, error) {
	for _, path := range cgroupMemoryLimits() {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(s, 10, 64)
		if s == "max" || err != nil || n >= 1<<60 {
			break
		}
		return n, nil
	}
	return 0, errors.New("the container has no memory limit to exceed")
}

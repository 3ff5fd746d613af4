//go:build e2e

package images

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// SparkStandInRef names the Spark stand-in's image: what a Spark step's
// image (spark.image, driver.image, executor.image) is set to.
const SparkStandInRef = "e2e.sparkplug.test/spark:standin"

// Where Spark's images (apache/spark, docker-library's spark) keep things.
const (
	sparkEntrypoint = "/opt/entrypoint.sh"
	sparkWorkDir    = "/opt/spark/work-dir"
	sparkUID        = "185"
)

// SparkStandIn builds e2e/cmd/sparkstandin of the repository at repoRoot as
// a static linux/amd64 binary and its image, SparkStandInRef, in dir.
//
// The image is laid out as Spark's: the binary is /opt/entrypoint.sh, the
// ENTRYPOINT, so a pod's args (driver ..., executor) reach it as they reach
// Spark's entrypoint script; USER 185 (spark in /etc/passwd, as Spark's
// image names it) and WORKDIR /opt/spark/work-dir (group-writable, as
// Spark's Dockerfile makes it), SPARK_HOME=/opt/spark. There is no shell:
// a pod that overrides the command with a script does not run.
func SparkStandIn(ctx context.Context, repoRoot, dir string) (Image, error) {
	bin := filepath.Join(dir, "sparkstandin")
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./e2e/cmd/sparkstandin")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := build.CombinedOutput(); err != nil {
		return Image{}, fmt.Errorf("build the Spark stand-in: %w\n%s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		return Image{}, err
	}
	entries := append(etcFiles(
		"root:x:0:0:root:/root:/sbin/nologin\nspark:x:185:185::/opt/spark:/sbin/nologin\n",
		"root:x:0:\nspark:x:185:\n",
	),
		entry{name: "opt", mode: 0o755, dir: true},
		entry{name: sparkEntrypoint[1:], mode: 0o755, data: b},
		entry{name: "opt/spark", mode: 0o755, dir: true},
		entry{name: "opt/spark/conf", mode: 0o755, dir: true},
		entry{name: sparkWorkDir[1:], mode: 0o775, dir: true},
	)
	cfg := v1.Config{
		Entrypoint: []string{sparkEntrypoint},
		User:       sparkUID,
		WorkingDir: sparkWorkDir,
		Env:        []string{pathEnv, "SPARK_HOME=/opt/spark"},
		Labels:     map[string]string{"org.opencontainers.image.title": "sparkplug e2e Spark stand-in"},
	}
	return writeImage(filepath.Join(dir, "spark-standin.tar"), SparkStandInRef, cfg, entries, "e2e/images: COPY sparkstandin "+sparkEntrypoint)
}

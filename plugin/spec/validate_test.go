package spec

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// validSpec is a defaulted spec with no problems; each case of
// TestValidate breaks one rule of it.
func validSpec() *SparkApplicationSpec {
	s := &SparkApplicationSpec{
		Type:                TypeScala,
		Image:               ptr("docker.io/apache/spark:3.5.1"),
		MainClass:           ptr("org.apache.spark.examples.SparkPi"),
		MainApplicationFile: ptr("local:///opt/spark/examples/jars/spark-examples.jar"),
		Volumes:             []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	SetDefaults(s)
	return s
}

func TestValidateValidSpec(t *testing.T) {
	checkErrs(t, Validate(validSpec()), nil)
}

// validateCase breaks one rule of validSpec (mutate) and lists the
// errors Validate must give for it.
type validateCase struct {
	name   string
	mutate func(s *SparkApplicationSpec)
	want   []wantErr
}

// runValidateCases runs each case as a subtest on a fresh validSpec.
func runValidateCases(t *testing.T, tests []validateCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			tt.mutate(s)
			checkErrs(t, Validate(s), tt.want)
		})
	}
}

// TestValidate: the type, mode, main file and class, images, memory, CPU,
// executor instances and dynamic allocation.
func TestValidate(t *testing.T) {
	type spec = SparkApplicationSpec
	runValidateCases(t, []validateCase{
		// type
		{"type not supported", func(s *spec) { s.Type = "scala" },
			[]wantErr{{"spark.type", `Unsupported value: "scala": supported values: "Java", "Scala", "Python", "R"`}}},
		{"type empty", func(s *spec) { s.Type = "" },
			[]wantErr{{"spark.type", "Required value: give Java, Scala, Python or R"}}},

		// mode
		{"mode client is valid", func(s *spec) { s.Mode = ModeClient }, nil},
		{"mode in-cluster-client rejected with why", func(s *spec) { s.Mode = ModeInClusterClient },
			[]wantErr{{"spark.mode", `Invalid value: "in-cluster-client": is not a deploy mode of spark-submit`}}},
		{"mode unknown", func(s *spec) { s.Mode = "local" },
			[]wantErr{{"spark.mode", `Unsupported value: "local": supported values: "cluster", "client"`}}},

		// mainApplicationFile and mainClass
		{"mainApplicationFile missing", func(s *spec) { s.MainApplicationFile = nil },
			[]wantErr{{"spark.mainApplicationFile", "Required value: give the jar, Python or R file to run"}}},
		{"mainApplicationFile blank", func(s *spec) { s.MainApplicationFile = ptr("  ") },
			[]wantErr{{"spark.mainApplicationFile", "Required value"}}},
		{"mainClass missing for Java", func(s *spec) { s.Type, s.MainClass = TypeJava, nil },
			[]wantErr{{"spark.mainClass", "Required value: a Java application needs the fully qualified class to run"}}},
		{"mainClass missing for a Python file", func(s *spec) { s.MainClass, s.MainApplicationFile = nil, ptr("s3a://bucket/job.py") },
			[]wantErr{{"spark.mainClass", "mainApplicationFile is a Python file: set type: Python"}}},
		{"mainClass set for Python", func(s *spec) { s.Type, s.MainApplicationFile = TypePython, ptr("local:///app/job.py") },
			[]wantErr{{"spark.mainClass", "Forbidden: a Python application has no main class; remove mainClass"}}},
		{"mainClass set for R", func(s *spec) { s.Type = TypeR },
			[]wantErr{{"spark.mainClass", "Forbidden: a R application has no main class"}}},
		{"Python without mainClass is valid", func(s *spec) { s.Type, s.MainClass = TypePython, nil }, nil},

		// images
		{"image missing", func(s *spec) { s.Image = nil },
			[]wantErr{{"spark.image", "Required value: give the Spark container image, or both spark.driver.image and spark.executor.image"}}},
		{"image missing with only a driver image", func(s *spec) { s.Image, s.Driver.Image = nil, ptr("d:1") },
			[]wantErr{{"spark.image", "Required value"}}},
		{"image missing with both role images is valid", func(s *spec) { s.Image, s.Driver.Image, s.Executor.Image = nil, ptr("d:1"), ptr("e:1") }, nil},
		{"image with a space", func(s *spec) { s.Image = ptr("spark 3.5") },
			[]wantErr{{"spark.image", "must be a container image reference"}}},
		{"executor image blank", func(s *spec) { s.Executor.Image = ptr("") },
			[]wantErr{{"spark.executor.image", "must be a container image reference"}}},
		{"imagePullPolicy", func(s *spec) { s.ImagePullPolicy = ptr("always") },
			[]wantErr{{"spark.imagePullPolicy", `Unsupported value: "always": supported values: "Always", "IfNotPresent", "Never"`}}},
		{"imagePullSecrets", func(s *spec) { s.ImagePullSecrets = []string{"regcred", "My_Secret"} },
			[]wantErr{{"spark.imagePullSecrets[1]", `Invalid value: "My_Secret": is not a Secret name: a lowercase RFC 1123 subdomain`}}},

		// memory
		{"memory not a size", func(s *spec) { s.Driver.Memory = ptr("12zz") },
			[]wantErr{{"spark.driver.memory", `spark.driver.memory: Invalid value: "12zz": is not a Kubernetes quantity or Spark size like 512m`}}},
		{"memory as a fraction", func(s *spec) { s.Executor.MemoryOverhead = ptr("1.5g") },
			[]wantErr{{"spark.executor.memoryOverhead", `Invalid value: "1.5g": is not a Kubernetes quantity or Spark size like 512m: Spark sizes take no fractions`}}},
		{"memoryLimit negative", func(s *spec) { s.Driver.MemoryLimit = ptr("-1Gi") },
			[]wantErr{{"spark.driver.memoryLimit", "must not be negative"}}},
		{"memory zero", func(s *spec) { s.Executor.Memory = ptr("0m") },
			[]wantErr{{"spark.executor.memory", "must be more than 0 bytes"}}},
		{"memory sizes of both kinds are valid", func(s *spec) {
			s.Driver.Memory, s.Driver.MemoryOverhead, s.Driver.MemoryLimit = ptr("2048k"), ptr("0"), ptr("3Gi")
			s.Executor.Memory, s.Executor.MemoryOverhead = ptr("1Gi"), ptr("384")
		}, nil},

		// CPU
		{"cores zero", func(s *spec) { s.Driver.Cores = ptr[int32](0) },
			[]wantErr{{"spark.driver.cores", "Invalid value: 0: must be at least 1"}}},
		{"coreLimit not a quantity", func(s *spec) { s.Executor.CoreLimit = ptr("two") },
			[]wantErr{{"spark.executor.coreLimit", `Invalid value: "two": is not a Kubernetes CPU quantity like 500m or 2`}}},
		{"coreRequest zero", func(s *spec) { s.Driver.CoreRequest = ptr("0") },
			[]wantErr{{"spark.driver.coreRequest", "must be more than 0 CPU"}}},
		{"coreRequest above coreLimit", func(s *spec) { s.Executor.CoreRequest, s.Executor.CoreLimit = ptr("2"), ptr("1500m") },
			[]wantErr{{"spark.executor.coreRequest", "must not exceed coreLimit (1500m)"}}},
		{"cores above coreLimit", func(s *spec) { s.Driver.Cores, s.Driver.CoreLimit = ptr[int32](2), ptr("1") },
			[]wantErr{{"spark.driver.coreLimit", "must be at least cores (2)"}}},
		{"coreRequest below cores within coreLimit is valid", func(s *spec) {
			s.Driver.Cores, s.Driver.CoreRequest, s.Driver.CoreLimit = ptr[int32](2), ptr("500m"), ptr("1")
		}, nil},

		// executor instances and dynamic allocation
		{"instances zero", func(s *spec) { s.Executor.Instances = ptr[int32](0) },
			[]wantErr{{"spark.executor.instances", "must be at least 1; 0 executors is allowed only with spark.dynamicAllocation.enabled"}}},
		{"instances zero with dynamic allocation is valid", func(s *spec) {
			s.Executor.Instances, s.DynamicAllocation = ptr[int32](0), &DynamicAllocation{Enabled: true}
		}, nil},
		{"instances negative with dynamic allocation", func(s *spec) {
			s.Executor.Instances, s.SparkConf = ptr[int32](-1), map[string]string{"spark.dynamicAllocation.enabled": "true"}
		}, []wantErr{{"spark.executor.instances", "must be 0 or more"}}},
		{"dynamic allocation min above max", func(s *spec) {
			s.Executor.Instances = nil
			s.DynamicAllocation = &DynamicAllocation{Enabled: true, MinExecutors: ptr[int32](5), MaxExecutors: ptr[int32](2)}
		}, []wantErr{
			{"spark.dynamicAllocation.minExecutors", "must not exceed maxExecutors (2)"},
			{"spark.dynamicAllocation.maxExecutors", "must be at least the initial number of executors"},
		}},
		{"dynamic allocation max below instances", func(s *spec) {
			s.Executor.Instances = ptr[int32](4)
			s.DynamicAllocation = &DynamicAllocation{Enabled: true, MaxExecutors: ptr[int32](3)}
		}, []wantErr{{"spark.dynamicAllocation.maxExecutors", "(4)"}}},
		{"dynamic allocation max zero", func(s *spec) {
			s.DynamicAllocation = &DynamicAllocation{Enabled: true, MaxExecutors: ptr[int32](0)}
		}, []wantErr{{"spark.dynamicAllocation.maxExecutors", "must be at least 1"}}},
		{"disabled dynamic allocation is not checked", func(s *spec) {
			s.DynamicAllocation = &DynamicAllocation{MaxExecutors: ptr[int32](0)}
		}, nil},
	})
}

func TestValidateReportsEverythingAtOnce(t *testing.T) {
	s := validSpec()
	s.Type = "Go"
	s.Image = nil
	s.Driver.Memory = ptr("lots")
	s.Executor.Instances = ptr[int32](0)
	s.Driver.PodName = ptr("x")
	checkErrs(t, Validate(s), []wantErr{
		{"spark.driver.podName", "not supported yet"},
		{"spark.type", "Unsupported value"},
		{"spark.image", "Required value"},
		{"spark.driver.memory", "is not a Kubernetes quantity"},
		{"spark.executor.instances", "must be at least 1"},
	})
}

func TestValidateNil(t *testing.T) {
	checkErrs(t, Validate(nil), []wantErr{{"spark", "the spark body is empty"}})
}

func TestImages(t *testing.T) {
	s := &SparkApplicationSpec{Image: ptr("all:1")}
	if s.DriverImage() != "all:1" || s.ExecutorImage() != "all:1" {
		t.Errorf("images = %q, %q; want all:1", s.DriverImage(), s.ExecutorImage())
	}
	s.Driver.Image, s.Executor.Image = ptr("d:1"), ptr("")
	if s.DriverImage() != "d:1" || s.ExecutorImage() != "all:1" {
		t.Errorf("images = %q, %q; want d:1, all:1", s.DriverImage(), s.ExecutorImage())
	}
}

func TestPendingTimeoutDefault(t *testing.T) {
	s := &SparkApplicationSpec{}
	if got := s.PendingTimeout(); got != DefaultPendingTimeout {
		t.Fatalf("default pending timeout %s, want %s", got, DefaultPendingTimeout)
	}
	v := "90s"
	s.Sparkplug = &SparkplugOptions{PendingTimeout: &v}
	if got := s.PendingTimeout(); got.Seconds() != 90 {
		t.Fatalf("pending timeout %s, want 90s", got)
	}
}

// The body's launcher wins, client mode is native, then the plugin's
// default, native when it has none.
func TestLauncherFor(t *testing.T) {
	for _, tc := range []struct {
		name, plugin, body string
		mode               DeployMode
		want               string
	}{
		{"nothing set", "", "", ModeCluster, LauncherNative},
		{"the plugin's default", LauncherSparkSubmit, "", ModeCluster, LauncherSparkSubmit},
		{"the body's native wins", LauncherSparkSubmit, LauncherNative, ModeCluster, LauncherNative},
		{"the body's spark-submit wins", LauncherNative, LauncherSparkSubmit, ModeCluster, LauncherSparkSubmit},
		{"client mode is native whatever the plugin's default", LauncherSparkSubmit, "", ModeClient, LauncherNative},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &SparkApplicationSpec{Mode: tc.mode}
			if tc.body != "" {
				s.Sparkplug = &SparkplugOptions{Launcher: ptr(tc.body)}
			}
			if got := s.LauncherFor(tc.plugin); got != tc.want {
				t.Errorf("LauncherFor(%q) = %q, want %q", tc.plugin, got, tc.want)
			}
		})
	}
}

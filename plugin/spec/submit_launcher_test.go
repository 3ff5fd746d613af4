package spec

import (
	"testing"
)

// The spark-submit launcher refuses what would steer spark-submit, which
// runs in the plugin's pod with the plugin's token (issue 20, finding 1):
// a primary resource spark-submit parses as an option, a main class for
// which it parses the arguments as options, local files it would upload or
// ship, and code it would load. The native launcher, which runs no
// spark-submit in the plugin's pod, accepts every one of these bodies.
func TestSubmitLauncherRefusesWhatSteersSparkSubmit(t *testing.T) {
	type spec = SparkApplicationSpec
	tests := []struct {
		name   string
		mutate func(s *spec)
		want   []wantErr
	}{
		{"a remote and an in-image file", func(s *spec) {
			s.Deps.Jars = []string{"https://repo.example.com/a.jar", "local:///opt/b.jar"}
			s.Deps.Files = []string{"s3a://bucket/x.conf", "gs://b/y"}
			s.Deps.Archives = []string{"hdfs://nn/env.tgz#env"}
			s.SparkConf = map[string]string{"spark.files": "https://x/y.txt, local:///z"}
		}, nil},
		{"spark-internal", func(s *spec) { s.MainApplicationFile = ptr("spark-internal") }, nil},
		// SparkSubmitOptionParser.parse: --conf=... is an option with its
		// value; SparkSubmitArguments.handleUnknown refuses any other
		// argument starting with '-'.
		{"an option as the primary resource", func(s *spec) {
			s.MainApplicationFile = ptr("--conf=spark.kubernetes.driver.pod.name=victim")
		}, []wantErr{{"spark.mainApplicationFile", "read by spark-submit as one of its options"}}},
		{"client mode as the primary resource", func(s *spec) { s.MainApplicationFile = ptr("--deploy-mode=client") },
			[]wantErr{{"spark.mainApplicationFile", "starting with '-'"}}},
		{"a switch as the primary resource", func(s *spec) { s.MainApplicationFile = ptr("-v") },
			[]wantErr{{"spark.mainApplicationFile", "starting with '-'"}}},
		// SparkSubmitCommandBuilder: these classes turn on
		// allowsMixedArguments.
		{"the REPL as the main class", func(s *spec) {
			s.MainClass = ptr("org.apache.spark.repl.Main")
			s.Arguments = []string{"--deploy-mode", "client"}
		}, []wantErr{{"spark.mainClass", "reads the application's arguments as its own options"}}},
		{"the Thrift server as the main class", func(s *spec) {
			s.MainClass = ptr("org.apache.spark.sql.hive.thriftserver.HiveThriftServer2")
		}, []wantErr{{"spark.mainClass", "use the native launcher"}}},
		{"a local primary resource", func(s *spec) { s.MainApplicationFile = ptr("/var/run/secrets/kubernetes.io/serviceaccount/token") },
			[]wantErr{{"spark.mainApplicationFile", "use local:// for a file in the image, or a remote URL"}}},
		{"a file: primary resource", func(s *spec) { s.MainApplicationFile = ptr("FILE:///app.jar") },
			[]wantErr{{"spark.mainApplicationFile", "a file of the plugin's pod"}}},
		{"local dependencies", func(s *spec) {
			s.Deps.Files = []string{"https://x/a", "file:///var/run/secrets/kubernetes.io/serviceaccount/token"}
			s.Deps.Jars = []string{"https://x/a.jar,/etc/passwd"} // Spark splits at commas
			s.Deps.PyFiles = []string{"deps.zip"}
			s.Deps.Archives = []string{"https://x/a b.tgz"} // java.net.URI refuses the space: a local file
		}, []wantErr{
			{"spark.deps.jars[0]", `"/etc/passwd"`},
			{"spark.deps.files[1]", "spark-submit would upload"},
			{"spark.deps.pyFiles[0]", `"deps.zip"`},
			{"spark.deps.archives[0]", `"https://x/a b.tgz"`},
		}},
		{"local dependencies and the upload path in sparkConf", func(s *spec) {
			s.SparkConf = map[string]string{
				"spark.files":                       "https://x/a,file:/token",
				"spark.archives":                    "https://x/%zz.tgz",
				"spark.kubernetes.file.upload.path": "s3a://attacker/loot",
			}
		}, []wantErr{
			{"spark.sparkConf[spark.archives]", "spark-submit would upload"},
			{"spark.sparkConf[spark.files]", `"file:/token"`},
			{"spark.sparkConf[spark.kubernetes.file.upload.path]", "would upload files of the plugin's pod there"},
		}},
		{"files spark-submit ships to the driver", func(s *spec) {
			s.SparkConf = map[string]string{
				"spark.kubernetes.authenticate.driver.caCertFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
				"spark.kubernetes.kerberos.krb5.path":             "/var/run/secrets/kubernetes.io/serviceaccount/token",
				"spark.kerberos.keytab":                           "/etc/keytab",
				"spark.yarn.keytab":                               "local:///opt/keytab",
			}
		}, []wantErr{
			{"spark.sparkConf[spark.kerberos.keytab]", "a file of the plugin's pod"},
			{"spark.sparkConf[spark.kubernetes.authenticate.driver.caCertFile]", "ships it to the driver"},
			{"spark.sparkConf[spark.kubernetes.kerberos.krb5.path]", "ships it to the driver"},
		}},
		{"code in spark-submit's JVM and its credentials", func(s *spec) {
			s.Deps.Packages = []string{"com.example:evil:1.0"}
			s.SparkConf = map[string]string{
				"spark.kubernetes.driver.pod.featureSteps":            "com.example.Evil",
				"spark.jars.ivySettings":                              "/etc/ivy.xml",
				"spark.kubernetes.authenticate.submission.oauthToken": "t",
				"spark.kubernetes.context":                            "admin@prod",
			}
		}, []wantErr{
			{"spark.deps.packages[0]", "puts their jars on its own classpath"},
			{"spark.sparkConf[spark.jars.ivySettings]", "a path in the plugin's pod"},
			{"spark.sparkConf[spark.kubernetes.authenticate.submission.oauthToken]", "the plugin's own API server credentials"},
			{"spark.sparkConf[spark.kubernetes.context]", "a kubeconfig of one context, and no other: remove it"},
			{"spark.sparkConf[spark.kubernetes.driver.pod.featureSteps]", "would load these classes"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Run("plugin default", func(t *testing.T) {
				s := validSpec()
				tt.mutate(s)
				checkErrs(t, append(Validate(s), validateWithDefaults(s, PluginDefaults{Launcher: LauncherSparkSubmit})...), tt.want)
			})
			t.Run("body", func(t *testing.T) {
				s := validSpec()
				tt.mutate(s)
				s.Sparkplug = &SparkplugOptions{Launcher: ptr(LauncherSparkSubmit)}
				checkErrs(t, append(Validate(s), validateWithDefaults(s, PluginDefaults{})...), tt.want)
			})
			t.Run("native", func(t *testing.T) {
				s := validSpec()
				tt.mutate(s)
				checkErrs(t, append(Validate(s), validateWithDefaults(s, PluginDefaults{})...), nil)
			})
		})
	}
}

// localToSparkSubmit follows KubernetesUtils.isLocalAndResolvable over
// Utils.resolveURI: no scheme or file: is local, and so is what
// java.net.URI cannot parse.
func TestLocalToSparkSubmit(t *testing.T) {
	for uri, want := range map[string]bool{
		"local:///opt/app.jar":       false,
		"https://x.example/a.jar":    false,
		"s3a://b/k%20ey.jar":         false,
		"hdfs://nn:8020/a.tgz#env":   false,
		"spark-internal":             false,
		"/opt/app.jar":               true,
		"app.jar":                    true,
		"file:/a":                    true,
		"File:///a":                  true,
		"a.tgz#env":                  true,
		"https://x/a b":              true,
		"https://x/a\tb":             true,
		"https://x/%2":               true,
		"https://x/a#b#c":            true,
		"https://x/{a}":              true,
		"https://[::1]/a.jar":        true,
		"https://x/a\u00a0b":         true,
		"https://x.example/\u00e9":   false,
		"1https://x":                 true,
		"C:\\Users\\a.jar":           true,
		"s3a://bucket/key?x=1&y=2":   false,
		"gs://b/k;v=1,@$!~*'()+":     false,
		"https://x/a" + "\x00" + "b": true,
	} {
		if got := localToSparkSubmit(uri); got != want {
			t.Errorf("localToSparkSubmit(%q) = %v, want %v", uri, got, want)
		}
	}
}

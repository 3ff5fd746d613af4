package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
	"github.com/sparkplug-io/sparkplug/plugin/submit"
)

// Issue #30's words (cred, creds, auth, pat, private) are hidden in what
// render prints, with either launcher, by the rule set the plugin's logs
// use; a path whose letters hold pat is shown.
func TestWriteRedactsTheShortWords(t *testing.T) {
	conf := `sparkConf:
  spark.kubernetes.driverEnv.GITHUB_PAT: leak01
  spark.ui.filters.param.auth: leak02
  spark.driver.extraJavaOptions: "-Dcreds=leak03 -Dpath=/opt/shown1"
  spark.executorEnv.SSH_PRIVATE: leak04
  spark.executor.extraClassPath: /opt/shown2
driver:
  env: [{name: GITHUB_PAT, value: leak05}, {name: PATH, value: /opt/shown3}]
arguments: [--creds, leak06, --path, /opt/shown4]
`
	for _, launcher := range []string{spec.LauncherNative, spec.LauncherSparkSubmit} {
		t.Run(launcher, func(t *testing.T) {
			o := Options{Defaults: spec.PluginDefaults{Launcher: launcher}, Submit: submit.Options{SparkHome: "/opt/spark", RequestTimeout: 30 * time.Second}}
			steps, err := Render([]byte(body+conf), newBuilder(t), o)
			if err != nil {
				t.Fatal(err)
			}
			if err := Errors("input", steps); err != nil {
				t.Fatal(err)
			}
			if (steps[0].Submit != nil) != (launcher == spec.LauncherSparkSubmit) {
				t.Fatalf("launcher %s: spark-submit run %v", launcher, steps[0].Submit != nil)
			}
			var out bytes.Buffer
			if err := Write(&out, steps); err != nil {
				t.Fatal(err)
			}
			for _, leak := range []string{"leak01", "leak02", "leak03", "leak04", "leak05", "leak06"} {
				if strings.Contains(out.String(), leak) {
					t.Errorf("render shows %s:\n%s", leak, out.String())
				}
			}
			for _, shown := range []string{"/opt/shown1", "/opt/shown2", "/opt/shown3", "/opt/shown4"} {
				if !strings.Contains(out.String(), shown) {
					t.Errorf("render hides %s:\n%s", shown, out.String())
				}
			}
		})
	}
}

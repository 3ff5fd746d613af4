package render

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkplug-io/sparkplug/plugin/redact"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
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

// What render prints hides secret values, as the plugin's logs do: the
// sensitive keys of spark.properties, the environment of the driver pod
// and of the executor pod template, a DSN's password. The objects the
// plugin creates keep them.
func TestWriteRedactsSecrets(t *testing.T) {
	input := body + `sparkConf:
  spark.hadoop.fs.s3a.secret.key: hunter2
  spark.executorEnv.DB_URL: "app:s3cr3t@tcp(db:3306)/sales"
driver:
  env: [{name: DB_PASSWORD, value: hunter3}, {name: REGION, value: eu-west-1}]
executor:
  env: [{name: API_TOKEN, value: hunter4}]
`
	steps, err := Render([]byte(input), newBuilder(t), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Errors("input", steps); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(&out, steps); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"hunter2", "s3cr3t", "hunter3", "hunter4"} {
		if strings.Contains(out.String(), secret) {
			t.Errorf("render shows %q:\n%s", secret, out.String())
		}
	}
	if !strings.Contains(out.String(), "eu-west-1") || !strings.Contains(out.String(), "spark.hadoop.fs.s3a.secret.key="+redact.Redacted) {
		t.Errorf("render hides too much, or not where it should:\n%s", out.String())
	}
	if !strings.Contains(steps[0].Objects.ConfigMap.Data[spark.PropertiesFile], "hunter2") {
		t.Error("the objects themselves lost the value: only what is printed is redacted")
	}
}

// gapsBody plants a secret in every place render used to print in the
// clear (issue #20, finding 6): a -D password that spark.properties
// writes with \=, quoted -D values, application arguments (flag=value,
// flag value, JDBC URLs), init container args and env, annotations, and
// the env of the pod templates spark-submit is handed.
const gapsBody = body + `arguments:
  - --db-password=leak01
  - --password
  - leak02
  - jdbc:postgresql://h/db?user=u&password=leak03
  - jdbc:mysql://u:leak04@h/db
sparkConf:
  spark.driver.extraJavaOptions: -Xss4m -Dx.password=leak05 -Dtrust.storePassword="leak06 x" -Dapi.token='leak07'
  spark.executorEnv.JDBC: jdbc:postgresql://h/db?user=u&password=leak08
  spark.executorEnv.URL: https://user:leak09@repo.example.com/x
driver:
  env: [{name: DB_PASSWORD, value: leak10}, {name: REGION, value: eu-west-1}]
  annotations: {example.com/api-token: leak11, example.com/dsn: "postgres://u:leak12@db/x"}
  initContainers:
    - name: fetch
      image: busybox
      args: [--token, leak13, --secret=leak14]
      env: [{name: AWS_SECRET_ACCESS_KEY, value: leak15}]
executor:
  env: [{name: API_TOKEN, value: leak16}]
  annotations: {example.com/password: leak17}
`

// leaks names the planted secrets of gapsBody render prints.
func leaks(out string) []string {
	var found []string
	for i := 1; i <= 17; i++ {
		if s := fmt.Sprintf("leak%02d", i); strings.Contains(out, s) {
			found = append(found, s)
		}
	}
	return found
}

// Neither launcher's render prints a planted secret, wherever in the
// objects or the spark-submit run it is.
func TestWriteRedactsEveryPlantedSecret(t *testing.T) {
	for _, launcher := range []string{spec.LauncherNative, spec.LauncherSparkSubmit} {
		t.Run(launcher, func(t *testing.T) {
			steps, err := Render([]byte(gapsBody), newBuilder(t), Options{Defaults: spec.PluginDefaults{Launcher: launcher}})
			if err != nil {
				t.Fatal(err)
			}
			if err := Errors("input", steps); err != nil {
				t.Fatal(err)
			}
			if (steps[0].Submit != nil) != (launcher == spec.LauncherSparkSubmit) {
				t.Fatalf("launcher %s not taken", launcher)
			}
			var out bytes.Buffer
			if err := Write(&out, steps); err != nil {
				t.Fatal(err)
			}
			if found := leaks(out.String()); len(found) > 0 {
				t.Errorf("render shows %q:\n%s", found, out.String())
			}
			for _, shown := range []string{"eu-west-1", "-Xss4m", "jdbc:postgresql://h/db?user=u", "busybox"} {
				if !strings.Contains(out.String(), shown) {
					t.Errorf("render hides %q, which is no secret:\n%s", shown, out.String())
				}
			}
		})
	}
}

// The one line render prints for a failed step shows no secret either.
func TestErrorsAreRedacted(t *testing.T) {
	err := Errors("f.yaml", []Step{{Template: "a", Err: errors.New("bad: --db-password=leak01")}, {Template: "b"}})
	if err == nil || strings.Contains(err.Error(), "leak01") || !strings.Contains(err.Error(), "f.yaml: template a: bad: --db-password=") {
		t.Errorf("Errors = %v", err)
	}
	if Errors("f.yaml", []Step{{Template: "b"}}) != nil {
		t.Error("Errors of steps that built is not nil")
	}
}

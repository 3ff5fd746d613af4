package redact

import (
	"reflect"
	"slices"
	"testing"
)

func TestSensitive(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"spark.hadoop.fs.s3a.secret.key", true},
		{"spark.hadoop.fs.s3a.access.key", true},
		{"spark.hadoop.fs.s3a.session.token", true},
		{"spark.ssl.keyPassword", true},
		{"spark.ssl.keyStorePassword", true},
		{"spark.ssl.keyStore", true}, // a path, but "key": caught on the safe side
		{"spark.hadoop.fs.azure.account.key.acct.blob.core.windows.net", true},
		{"spark.hadoop.google.cloud.auth.service.account.json.keyfile", false}, // the path of the key file
		{"spark.kubernetes.driverEnv.AWS_SECRET_ACCESS_KEY", true},
		{"spark.executorEnv.APIKEY", true},
		{"spark.kubernetes.driverEnv.DB_PASSWD", true},
		{"spark.authenticate.secret", true},
		{"spark.hadoop.fs.gs.auth.client.secret", true},
		{"spark.kubernetes.driverEnv.GOOGLE_APPLICATION_CREDENTIALS", true},
		{"spark.kubernetes.driver.secretKeyRef.DB_PASSWORD", true},
		{"spark.kubernetes.executor.secretKeyRef.USER", true},
		{"spark.kubernetes.driver.secrets.gcp-sa", true},
		{"spark.kubernetes.authenticate.submission.oauthTokenFile", false},
		{"spark.kubernetes.authenticate.submission.clientKeyFile", false},
		{"spark.kubernetes.authenticate.submission.caCertFile", false},
		{"spark.kerberos.keytab", false},
		{"spark.kubernetes.kerberos.krb5.path", false},
		{"spark.kubernetes.driver.pod.name", false},
		{"spark.kubernetes.driver.label.sparkplug.io/workflow-uid", false},
		{"spark.executor.memory", false},
		{"spark.jars", false},
		{"", false},
	} {
		if got := Sensitive(tc.key); got != tc.want {
			t.Errorf("Sensitive(%q) = %v, want %v (words %q)", tc.key, got, tc.want, keyWords(tc.key))
		}
	}
}

func TestKeyWords(t *testing.T) {
	for key, want := range map[string][]string{
		"spark.ssl.keyStorePassword":                       {"spark", "ssl", "key", "store", "password"},
		"spark.kubernetes.driverEnv.AWS_SECRET_ACCESS_KEY": {"spark", "kubernetes", "driver", "env", "aws", "secret", "access", "key"},
		"spark.hadoop.fs.s3a.access.key":                   {"spark", "hadoop", "fs", "s3a", "access", "key"},
		"oauthTokenFile":                                   {"oauth", "token", "file"},
	} {
		if got := keyWords(key); !reflect.DeepEqual(got, want) {
			t.Errorf("keyWords(%q) = %q, want %q", key, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	args := []string{
		"--master", "k8s://https://10.0.0.1:443",
		"--conf", "spark.hadoop.fs.s3a.secret.key=AKIAsecret",
		"--conf", "spark.executor.memory=1g",
		"--conf", "spark.kubernetes.driver.secretKeyRef.DB=db:password",
		"--conf", "spark.jars=https://user:hunter2@repo.example.com/lib.jar,https://repo.example.com/other.jar",
		"--conf", "spark.novalue",
		"--name", "spark.hadoop.fs.s3a.secret.key=not-a-conf",
		"https://deploy:t0ken@example.com/app.jar",
		"--password", "plain",
	}
	orig := append([]string(nil), args...)
	got := Args(args)
	want := []string{
		"--master", "k8s://https://10.0.0.1:443",
		"--conf", "spark.hadoop.fs.s3a.secret.key=<redacted>",
		"--conf", "spark.executor.memory=1g",
		"--conf", "spark.kubernetes.driver.secretKeyRef.DB=<redacted>",
		"--conf", "spark.jars=https://user:<redacted>@repo.example.com/lib.jar,https://repo.example.com/other.jar",
		"--conf", "spark.novalue",
		// Whatever it is an argument of, name=value with a sensitive
		// name is hidden.
		"--name", "spark.hadoop.fs.s3a.secret.key=<redacted>",
		"https://deploy:<redacted>@example.com/app.jar",
		// An application's argument after an option named so is hidden.
		"--password", "<redacted>",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Redact:\ngot  %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(args, orig) {
		t.Errorf("Redact changed its input: %q", args)
	}
}

func TestEnv(t *testing.T) {
	env := []string{"AWS_SECRET_ACCESS_KEY=abc", "KUBECONFIG=/tmp/k", "HTTPS_PROXY=http://u:pw@proxy:3128", "PATH=/bin", "EMPTY"}
	got := Env(env)
	want := []string{"AWS_SECRET_ACCESS_KEY=" + Redacted, "KUBECONFIG=/tmp/k", "HTTPS_PROXY=http://u:" + Redacted + "@proxy:3128", "PATH=/bin", "EMPTY"}
	if !slices.Equal(got, want) {
		t.Errorf("Env = %q, want %q", got, want)
	}
	if env[0] != "AWS_SECRET_ACCESS_KEY=abc" {
		t.Error("Env changed its input")
	}
}

// The cases the field found: each was shown in the clear before.
func TestRedactCatchesWhatTheFieldFound(t *testing.T) {
	for _, tc := range []struct{ key, value, want string }{
		{"spark.kubernetes.driverEnv.DB_PASS", "hunter2", "spark.kubernetes.driverEnv.DB_PASS=" + Redacted},
		{"spark.hadoop.fs.azure.sas.data.acct.blob.core.windows.net", "sv=2020&sig=abc", "spark.hadoop.fs.azure.sas.data.acct.blob.core.windows.net=" + Redacted},
		{"spark.executorEnv.DB_URL", "app:s3cr3t@tcp(db:3306)/sales", "spark.executorEnv.DB_URL=app:" + Redacted + "@tcp(db:3306)/sales"},
		{"spark.executorEnv.HEADER", "Bearer eyJhbGciOi.x.y", "spark.executorEnv.HEADER=Bearer " + Redacted},
		{"spark.executorEnv.AUTH", "Bearer eyJhbGciOi.x.y", "spark.executorEnv.AUTH=" + Redacted},
		{"spark.driver.extraJavaOptions", "-Xss4m -Djavax.net.ssl.trustStorePassword=changeit -Dlog4j.level=INFO",
			"spark.driver.extraJavaOptions=-Xss4m -Djavax.net.ssl.trustStorePassword=" + Redacted + " -Dlog4j.level=INFO"},
		{"spark.kubernetes.container.image", "apache/spark:3.5.3@sha256:0123abcd", "spark.kubernetes.container.image=apache/spark:3.5.3@sha256:0123abcd"},
		{"spark.jars.packages", "org.apache.hadoop:hadoop-aws:3.3.4", "spark.jars.packages=org.apache.hadoop:hadoop-aws:3.3.4"},
	} {
		got := Args([]string{"--conf", tc.key + "=" + tc.value})[1]
		if got != tc.want {
			t.Errorf("Args(--conf %s=%s) = %q, want %q", tc.key, tc.value, got, tc.want)
		}
	}
}

// A line with a secret is shown escaped as sparkplug writes it (: too).
func TestProperties(t *testing.T) {
	in := "#Spark properties\nspark.hadoop.fs.s3a.secret.key=abc\nspark.executor.memory=4g\nspark.executorEnv.DSN=u:pw@tcp(db)/x\n"
	want := "#Spark properties\nspark.hadoop.fs.s3a.secret.key=" + Redacted + "\nspark.executor.memory=4g\nspark.executorEnv.DSN=u\\:" + Redacted + "@tcp(db)/x\n"
	if got := Properties(in); got != want {
		t.Errorf("Properties =\n%s\nwant\n%s", got, want)
	}
}

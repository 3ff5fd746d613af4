package redact

import (
	"strings"
	"testing"
)

// The keys the rules judge, with the harmless ones that must stay shown.
func TestSensitiveTable(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		// Issue #20's shapes and their neighbours.
		{"db-password", true},
		{"password", true},
		{"x.password", true},
		{"trust.storePassword", true},
		{"storepass", true}, // keytool
		{"keypass", true},
		{"DB_PWD", true},
		{"ssl.key.passphrase", true},
		{"Authorization", true},
		{"sig", true}, // an Azure SAS URL's signature
		{"api.token", true},
		{"example.com/api-token", true},
		{"spark.kubernetes.driver.secretKeyRef.DB_CONFIG_FILE", true}, // a reference, hidden on the safe side
		// Issue #30's words, whole words of a key only.
		{"creds", true},
		{"cred", true},
		{"spark.kubernetes.driverEnv.GITHUB_PAT", true},
		{"my.pat", true},
		{"githubPat", true},
		{"spark.ui.filters.param.auth", true},
		{"spark.executorEnv.BASIC_AUTH", true},
		{"spark.executorEnv.SSH_PRIVATE", true},
		{"spark.hadoop.fs.gs.auth.service.account.private.key.id", true},
		{"db-creds", true},
		// Shown: the same letters inside other words.
		{"path", false},
		{"PATH", false},
		{"spark.kubernetes.file.upload.path", false},
		{"spark.executor.extraClassPath", false},
		{"spark.sql.sources.partitionOverwriteMode", false},
		{"patch", false},
		{"spark.sql.legacy.compat", false},
		{"pattern", false},
		{"spark.authenticate", false},
		{"spark.authenticate.enableSaslEncryption", false},
		{"spark.hadoop.hadoop.security.authentication", false},
		{"author", false},
		{"incredible", false},
		{"credit.limit", false},
		{"privateer", false},
		{"sigma", false},
		{"spark.executorEnv.AWS_PROFILE", false},
		{"spark.hadoop.google.cloud.auth.service.account.json.keyfile", false},
		// Shown: names of files and paths, names that only resemble.
		{"spark.kubernetes.driver.secrets.gcp-sa.path", false},
		{"spark.ssl.keyStore.file", false},
		{"spark.kubernetes.authenticate.driver.serviceAccountName", false},
		{"spark.kubernetes.driver.podTemplateFile", false},
		{"user", false},
		{"spark.app.name", false},
		{"passive", false},
		{"signal", false},
	} {
		if got := Sensitive(tc.key); got != tc.want {
			t.Errorf("Sensitive(%q) = %v, want %v (words %q)", tc.key, got, tc.want, keyWords(tc.key))
		}
	}
}

// valueCases are texts with a planted secret (every one is "s3cr3t", or
// holds it) and what Value makes of them; texts with nothing to hide come
// back as they are.
var valueCases = []struct{ in, want string }{
	// -D properties: bare, escaped as spark.properties writes them,
	// quoted.
	{"-Xss4m -Dx.password=s3cr3t -Dlog.level=INFO", "-Xss4m -Dx.password=<redacted> -Dlog.level=INFO"},
	{`-Dx.password\=s3cr3t -Dy\=1`, `-Dx.password\=<redacted> -Dy\=1`},
	{`-Dpassword="s3cr3t and more" -Da=b`, `-Dpassword="<redacted>" -Da=b`},
	{`-Dpassword='s3cr3t and more' -Da=b`, `-Dpassword='<redacted>' -Da=b`},
	{`-Dpassword=\"s3cr3t and more\" -Da=b`, `-Dpassword=\"<redacted>\" -Da=b`},
	{`-Dpassword="s3cr3t unclosed`, `-Dpassword="<redacted>`},
	// Application arguments.
	{"--db-password=s3cr3t", "--db-password=<redacted>"},
	{"--password s3cr3t --user bob", "--password <redacted> --user bob"},
	{`--token "s3cr3t x" --user bob`, `--token "<redacted>" --user bob`},
	{"-storepass s3cr3t", "-storepass <redacted>"},
	{"--password --verbose", "--password --verbose"},
	// JDBC and other URLs, DSNs.
	{"jdbc:postgresql://h/db?user=u&password=s3cr3t&ssl=true", "jdbc:postgresql://h/db?user=u&password=<redacted>&ssl=true"},
	{"jdbc:sqlserver://h;user=u;password=s3cr3t;encrypt=true", "jdbc:sqlserver://h;user=u;password=<redacted>;encrypt=true"},
	{"jdbc:mysql://u:s3cr3t@h/db", "jdbc:mysql://u:<redacted>@h/db"},
	{"jdbc:oracle:thin:scott/s3cr3t@h:1521/db", "jdbc:oracle:thin:scott/<redacted>@h:1521/db"},
	{"https://acct.blob.core.windows.net/c?sv=2020&sig=s3cr3t", "https://acct.blob.core.windows.net/c?sv=2020&sig=<redacted>"},
	{"app:s3cr3t@tcp(db:3306)/sales", "app:<redacted>@tcp(db:3306)/sales"},
	// Variables, headers, JSON.
	{"PGPASSWORD=s3cr3t psql", "PGPASSWORD=<redacted> psql"},
	{"AWS_SECRET_ACCESS_KEY=s3cr3t", "AWS_SECRET_ACCESS_KEY=<redacted>"},
	{"GITHUB_PAT=s3cr3t git clone", "GITHUB_PAT=<redacted> git clone"},
	{"-Xss4m -Dcreds=s3cr3t -Dpath=/opt", "-Xss4m -Dcreds=<redacted> -Dpath=/opt"},
	{"--creds s3cr3t --path /opt", "--creds <redacted> --path /opt"},
	{`{"auth":"s3cr3t","path":"/opt"}`, `{"auth":"<redacted>","path":"/opt"}`},
	{"Authorization: Bearer s3cr3t", "Authorization: Bearer <redacted>"},
	{`{"user":"u","password":"s3cr3t"}`, `{"user":"u","password":"<redacted>"}`},
	{`{"token" : "s3\"cr3t"}`, `{"token" : "<redacted>"}`},
	// An API server's message quoting a rejected value.
	{`Pod "x" is invalid: spec.containers[0].args: Invalid value: "--password=s3cr3t"`,
		`Pod "x" is invalid: spec.containers[0].args: Invalid value: "--password=<redacted>"`},

	// Nothing to hide: shown as it is.
	{"spark:3.5.3@sha256:0123abcd", "spark:3.5.3@sha256:0123abcd"},
	{"org.apache.hadoop:hadoop-aws:3.3.4", "org.apache.hadoop:hadoop-aws:3.3.4"},
	{"spark.kubernetes.authenticate.submission.oauthTokenFile=/var/run/token", "spark.kubernetes.authenticate.submission.oauthTokenFile=/var/run/token"},
	{"spec.volumes[0].secret.secretName: Required value", "spec.volumes[0].secret.secretName: Required value"},
	{`secrets "db-creds" not found`, `secrets "db-creds" not found`},
	{"-Xss4m -Dlog4j.configuration=file:/opt/log4j.properties", "-Xss4m -Dlog4j.configuration=file:/opt/log4j.properties"},
	{"jdbc:postgresql://h/db?user=u&ssl=true", "jdbc:postgresql://h/db?user=u&ssl=true"},
	{"driver pi-1234-driver of node w-1: RUNNING", "driver pi-1234-driver of node w-1: RUNNING"},
	{"--class org.example.Main --verbose", "--class org.example.Main --verbose"},
	{"--path /opt/pat --patch 1 -Dpattern=x", "--path /opt/pat --patch 1 -Dpattern=x"},
	{"spark.kubernetes.file.upload.path=s3a://b/up", "spark.kubernetes.file.upload.path=s3a://b/up"},
	{"password=", "password="},
	{"", ""},
}

func TestValueTable(t *testing.T) {
	for _, tc := range valueCases {
		got := Value(tc.in)
		if got != tc.want {
			t.Errorf("Value(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
		if again := Value(got); again != got {
			t.Errorf("Value is not idempotent on %q: %q", got, again)
		}
		if strings.Contains(got, "s3cr3t") || strings.Contains(got, "cr3t") {
			t.Errorf("Value(%q) = %q shows the secret", tc.in, got)
		}
	}
}

// The same shapes as separate arguments: an application's arguments, an
// init container's args.
func TestArgsTable(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{[]string{"--password", "s3cr3t"}, []string{"--password", Redacted}},
		{[]string{"-c", "spark.ssl.keyPassword=s3cr3t x"}, []string{"-c", "spark.ssl.keyPassword=" + Redacted}},
		{[]string{"--conf=spark.ssl.keyPassword=s3cr3t x"}, []string{"--conf=spark.ssl.keyPassword=" + Redacted}},
		{[]string{"--token", "s3cr3t x"}, []string{"--token", Redacted}},
		{[]string{"--db-password=s3cr3t"}, []string{"--db-password=" + Redacted}},
		{[]string{"jdbc:mysql://u:s3cr3t@h/db"}, []string{"jdbc:mysql://u:" + Redacted + "@h/db"}},
		{[]string{"--keytab", "/etc/krb5.keytab", "--token-file", "/t"}, []string{"--keytab", "/etc/krb5.keytab", "--token-file", "/t"}},
		{[]string{"--secret", "--verbose"}, []string{"--secret", "--verbose"}},
		// Issue #30: spark-submit's argv as the launcher logs it.
		{[]string{"--creds", "s3cr3t"}, []string{"--creds", Redacted}},
		{[]string{"--conf", "spark.kubernetes.driverEnv.GITHUB_PAT=s3cr3t"}, []string{"--conf", "spark.kubernetes.driverEnv.GITHUB_PAT=" + Redacted}},
		{[]string{"--conf", "spark.ui.filters.param.auth=s3cr3t"}, []string{"--conf", "spark.ui.filters.param.auth=" + Redacted}},
		{[]string{"--conf", "spark.driver.extraJavaOptions=-Dcreds=s3cr3t"}, []string{"--conf", "spark.driver.extraJavaOptions=-Dcreds=" + Redacted}},
		{[]string{"--conf", "spark.executorEnv.SSH_PRIVATE=s3cr3t"}, []string{"--conf", "spark.executorEnv.SSH_PRIVATE=" + Redacted}},
		{[]string{"--conf", "spark.kubernetes.file.upload.path=s3a://b/pat", "--path", "/opt"}, []string{"--conf", "spark.kubernetes.file.upload.path=s3a://b/pat", "--path", "/opt"}},
	} {
		got := Args(tc.in)
		if strings.Join(got, "\x00") != strings.Join(tc.want, "\x00") {
			t.Errorf("Args(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// spark.properties as sparkplug writes it (= and : escaped in values),
// and keys escaped every way Properties.load reads them.
func TestPropertiesTable(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`spark.driver.extraJavaOptions=-Xss4m -Dx.password\=s3cr3t`, `spark.driver.extraJavaOptions=-Xss4m -Dx.password\=<redacted>`},
		{`spark.executorEnv.URL=https\://u\:s3cr3t@h/x`, `spark.executorEnv.URL=https\://u\:<redacted>@h/x`},
		{`spark.executorEnv.JDBC=jdbc\:postgresql\://h/db?user\=u&password\=s3cr3t`, `spark.executorEnv.JDBC=jdbc\:postgresql\://h/db?user\=u&password\=<redacted>`},
		{`spark.ssl.key\u0050assword=s3cr3t`, `spark.ssl.keyPassword=<redacted>`},
		{`spark.ssl.keyPassword:s3cr3t`, `spark.ssl.keyPassword=<redacted>`},
		{`spark.ssl.keyPassword s3cr3t`, `spark.ssl.keyPassword=<redacted>`},
		{`spark.ssl.key\ Password=s3cr3t`, `spark.ssl.key\ Password=<redacted>`},
		{"spark.ssl.keyPass\\\n    word=s3cr3t", `spark.ssl.keyPassword=<redacted>`},
		{"spark.driver.extraJavaOptions=-Xss4m \\\n  -Dpassword\\=s3cr3t", `spark.driver.extraJavaOptions=-Xss4m -Dpassword\=<redacted>`},
		// Nothing to hide: as it is, escapes and all.
		{`spark.jars.packages=org.apache.hadoop\:hadoop-aws\:3.3.4`, `spark.jars.packages=org.apache.hadoop\:hadoop-aws\:3.3.4`},
		{"#comment\n! also", "#comment\n! also"},
		{"#Spark properties, password=s3cr3t", "#Spark properties, password=<redacted>"},
	} {
		got := Properties(tc.in)
		if got != tc.want {
			t.Errorf("Properties(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
}

// Value never panics, and what it shows it shows again as it is: a
// redacted text goes through every exit (a message, then an Event, then
// a log line) unchanged.
func FuzzValue(f *testing.F) {
	for _, tc := range valueCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		once := Value(s)
		if twice := Value(once); twice != once {
			t.Errorf("Value(%q) = %q, again %q", s, once, twice)
		}
	})
}

package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// validateSubmitInputs checks what the spark-submit launcher hands to
// spark-submit, which runs in the plugin's pod with the plugin's token, so
// that no body steers it:
//
//   - nothing of the body is parsed as one of spark-submit's options: the
//     primary resource may not start with '-' (spark-submit would read it
//     as an option, and the arguments after it too), and the main class
//     may not be one for which spark-submit reads options among the
//     application's arguments (spark.SubmitMixedArgumentClasses);
//   - no file of the plugin's pod leaves it: no local path (no scheme, or
//     file:) as the primary resource or a dependency, which spark-submit
//     uploads, no spark.kubernetes.file.upload.path, no conf naming a local
//     file spark-submit ships to the driver (spark.SubmitLocalFileConf, a
//     local spark.SubmitKeytabConf);
//   - no code of the body runs in spark-submit's JVM: no packages (their
//     jars go on spark-submit's own classpath), no driver feature steps;
//   - nothing of the body chooses spark-submit's connection to the API
//     server: no spark.kubernetes.authenticate.submission.*, no
//     spark.kubernetes.context.
//
// It runs whenever the step's launcher is spark-submit, the body's or the
// plugin's default, so the plugin and sparkplug render refuse the same
// bodies.
func validateSubmitInputs(s *SparkApplicationSpec) field.ErrorList {
	var errs field.ErrorList
	if f := ptrOr(s.MainApplicationFile); f != "" {
		p := rootPath.Child("mainApplicationFile")
		switch {
		case strings.HasPrefix(f, "-"):
			errs = append(errs, field.Invalid(p, f, "with the spark-submit launcher, a value starting with '-' is read by spark-submit as one of its options, not as the application's file (and so are the arguments after it): give a path or URL"))
		case localToSparkSubmit(f):
			errs = append(errs, field.Invalid(p, f, localFileDetail))
		}
	}
	if c := ptrOr(s.MainClass); slices.Contains(spark.SubmitMixedArgumentClasses, c) {
		errs = append(errs, field.Invalid(rootPath.Child("mainClass"), c, "with the spark-submit launcher and this class, spark-submit reads the application's arguments as its own options: use the native launcher (sparkplug.launcher: native)"))
	}

	dp := rootPath.Child("deps")
	for _, l := range []struct {
		name  string
		items []string
	}{{"jars", s.Deps.Jars}, {"files", s.Deps.Files}, {"pyFiles", s.Deps.PyFiles}, {"archives", s.Deps.Archives}} {
		for i, item := range l.items {
			if local := firstLocal(item); local != "" {
				errs = append(errs, field.Invalid(dp.Child(l.name).Index(i), local, localFileDetail))
			}
		}
	}
	for i, item := range s.Deps.Packages {
		errs = append(errs, field.Forbidden(dp.Child("packages").Index(i), fmt.Sprintf("%q: %s", item, packagesDetail)))
	}

	cp := rootPath.Child("sparkConf")
	for _, k := range sortedKeys(s.SparkConf) {
		v := s.SparkConf[k]
		switch {
		case k == spark.ConfJars, k == spark.ConfFiles, k == spark.ConfPyFiles, k == spark.ConfArchives, slices.Contains(spark.SubmitKeytabConf, k):
			if local := firstLocal(v); local != "" {
				errs = append(errs, field.Invalid(cp.Key(k), local, localFileDetail))
			}
		case k == spark.ConfFileUploadPath:
			errs = append(errs, field.Forbidden(cp.Key(k), "with the spark-submit launcher, spark-submit would upload files of the plugin's pod there: give dependencies as local:// paths in the image or as remote URLs"))
		case slices.Contains(spark.SubmitLocalFileConf, k):
			errs = append(errs, field.Forbidden(cp.Key(k), "with the spark-submit launcher, spark-submit reads this file in the plugin's pod and ships it to the driver: use the native launcher, or mount the file into the driver (driver.secrets, volumes)"))
		case k == spark.ConfJarsPackages:
			errs = append(errs, field.Forbidden(cp.Key(k), packagesDetail))
		case k == spark.ConfJarsIvy, k == spark.ConfJarsIvySettings:
			errs = append(errs, field.Forbidden(cp.Key(k), "with the spark-submit launcher, this is a path in the plugin's pod: use the native launcher"))
		case k == spark.ConfDriverFeatureSteps:
			errs = append(errs, field.Forbidden(cp.Key(k), "with the spark-submit launcher, spark-submit would load these classes in the plugin's pod: use the native launcher"))
		case strings.HasPrefix(k, spark.ConfAuthSubmissionPrefix):
			errs = append(errs, field.Forbidden(cp.Key(k), "sparkplug gives spark-submit the plugin's own API server credentials: remove it"))
		case k == spark.ConfKubernetesContext:
			errs = append(errs, field.Forbidden(cp.Key(k), "with the spark-submit launcher, sparkplug gives spark-submit the plugin's own connection to the API server, a kubeconfig of one context, and no other: remove it (the driver runs in the workflow's namespace either way)"))
		}
	}
	return errs
}

const (
	localFileDetail = "with the spark-submit launcher, a path without a scheme or with file: is a file of the plugin's pod, which spark-submit would upload: use local:// for a file in the image, or a remote URL (https://, s3a://, ...)"
	packagesDetail  = "with the spark-submit launcher, spark-submit resolves packages in the plugin's pod and puts their jars on its own classpath: give the jars as remote URLs in deps.jars, put them in the image (local://), or use the native launcher"
)

// firstLocal is the first entry of a comma-separated list of dependencies
// (Spark splits and trims them: Utils.stringToSeq) that is local to
// spark-submit, or "".
func firstLocal(list string) string {
	for _, e := range strings.Split(list, ",") {
		if e = strings.TrimSpace(e); e != "" && localToSparkSubmit(e) {
			return e
		}
	}
	return ""
}

// uriScheme is an RFC 2396 scheme and its colon, as java.net.URI reads it.
var uriScheme = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*):`)

// localToSparkSubmit says whether Spark takes a dependency for a file of
// the submitting process: KubernetesUtils.isLocalAndResolvable, which is
// true when Utils.resolveURI gives no scheme or file:. resolveURI falls
// back to a local file when java.net.URI refuses the string, so anything
// URI might refuse (a space, a control character, a bad %-escape, a
// character RFC 2396 does not allow) counts as local: a remote URL here
// must be one that URI parses. spark-internal is no file.
func localToSparkSubmit(uri string) bool {
	if uri == spark.NoResource {
		return false
	}
	m := uriScheme.FindStringSubmatch(uri)
	if m == nil || strings.EqualFold(m[1], "file") {
		return true
	}
	return !javaURIChars(uri)
}

// javaURIChars says whether every character of s is one java.net.URI
// accepts in a URI: RFC 2396's unreserved, reserved and escaped
// characters, one '#', and non-ASCII characters that are neither spaces
// nor controls; a '%' must start a two-digit hex escape. '[' and ']',
// which URI takes only around an IPv6 host, are refused everywhere.
func javaURIChars(s string) bool {
	if strings.Count(s, "#") > 1 {
		return false
	}
	for i, r := range s {
		switch {
		case r == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
		case r >= 0x80:
			if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
				return false
			}
		case r <= ' ' || r == 0x7f || strings.ContainsRune(`"<>[\]^`+"`{|}", r):
			return false
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

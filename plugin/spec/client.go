package spec

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// clientOwnedSparkConf are the sparkConf keys a client-mode body may not
// set, on top of ownedSparkConf, and why.
var clientOwnedSparkConf = map[string]string{
	spark.ConfDriverBindAddress: "in client mode sparkplug passes it to spark-submit as the driver pod's IP, as Spark's image does in cluster mode; the executors reach the driver at spark.driver.host",
}

// validateClientMode checks what only client mode asks of a body. The
// driver pod runs spark-submit --deploy-mode client, which decides how to
// run the application from the primary resource: a Python or R
// application only from a file of that language, by its extension, as
// SparkSubmit.isPython and isR read it.
func validateClientMode(s *SparkApplicationSpec) field.ErrorList {
	if s.Mode != ModeClient {
		return nil
	}
	var errs field.ErrorList
	for _, k := range sortedKeys(s.SparkConf) {
		if why, owned := clientOwnedSparkConf[k]; owned {
			errs = append(errs, field.Forbidden(rootPath.Child("sparkConf").Key(k), why))
		}
	}
	if s.MainApplicationFile == nil {
		return errs
	}
	file := strings.TrimSpace(*s.MainApplicationFile)
	var want []string
	switch s.Type {
	case TypePython:
		want = []string{".py"}
	case TypeR:
		want = []string{".R", ".r"}
	default:
		return errs
	}
	if file == "" || hasAnySuffix(file, want) {
		return errs
	}
	errs = append(errs, field.Invalid(rootPath.Child("mainApplicationFile"), *s.MainApplicationFile,
		fmt.Sprintf("in client mode spark-submit runs a %s application only from a file ending in %s (it picks the %s runner by the extension)", s.Type, strings.Join(want, " or "), s.Type)))
	return errs
}

func hasAnySuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

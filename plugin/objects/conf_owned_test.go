package objects

import (
	"errors"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Every conf key the builder overwrites is rejected in sparkConf, so a
// user's value is never silently replaced.
func TestOwnedConfIsRejectedBySpecValidation(t *testing.T) {
	for _, k := range OwnedConf() {
		body := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","sparkConf":{"` + k + `":"x"}}`
		_, err := spec.Parse([]byte(body))
		if !refused(err, "spark.sparkConf["+k+"]") {
			t.Errorf("sparkConf[%s] is not rejected: %v", k, err)
		}
	}
}

// refused reports whether err is an invalid body with a problem at path,
// which its message may cut.
func refused(err error, path string) bool {
	var invalid *spec.InvalidError
	if !errors.As(err, &invalid) {
		return false
	}
	for _, e := range invalid.Errs {
		if e.Field == path {
			return true
		}
	}
	return false
}

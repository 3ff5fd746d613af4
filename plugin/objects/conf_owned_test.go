package objects

import (
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

// Every conf key the builder overwrites is rejected in sparkConf, so a
// user's value is never silently replaced.
func TestOwnedConfIsRejectedBySpecValidation(t *testing.T) {
	for _, k := range OwnedConf() {
		body := `{"type":"Scala","image":"spark:3.5.3","mainClass":"Pi","mainApplicationFile":"local:///pi.jar","sparkConf":{"` + k + `":"x"}}`
		_, err := spec.Parse([]byte(body))
		if err == nil || !strings.Contains(err.Error(), "spark.sparkConf["+k+"]") {
			t.Errorf("sparkConf[%s] is not rejected: %v", k, err)
		}
	}
}

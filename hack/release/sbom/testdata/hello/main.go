// Command hello is the sbom test's known binary: it links two modules of
// sparkplug's go.mod, github.com/google/go-cmp and sigs.k8s.io/yaml.
package main

import (
	"fmt"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func main() {
	b, _ := yaml.Marshal(map[string]string{"hello": "world"})
	fmt.Print(string(b), cmp.Diff("a", "b"))
}

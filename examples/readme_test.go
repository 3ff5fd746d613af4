package examples

import (
	"regexp"
	"strings"
	"testing"

	preview "github.com/sparkplug-io/sparkplug/plugin/render"
)

// The README's samples of strict decoding are what sparkplug render
// prints: the misspelled field's input and the message it fails with, and
// the invalid value's message, each rendered from the input the README
// names.
func TestReadmeSampleErrorsAreRenders(t *testing.T) {
	// Markdown joins a code span's lines with a space.
	text := strings.ReplaceAll(readme(t), "\n", " ")
	misspelled := regexp.MustCompile("`(driver: \\{[^`]+\\})` fails with `([^`]+)`").FindStringSubmatch(text)
	if misspelled == nil {
		t.Fatal("README.md has no \"`driver: {...}` fails with `...`\" sample")
	}
	invalid := regexp.MustCompile("`(spark\\.driver\\.([a-zA-Z]+): Invalid value: \"([^\"]+)\": [^`]+)`").FindStringSubmatch(text)
	if invalid == nil {
		t.Fatal("README.md has no \"`spark.driver.FIELD: Invalid value: ...`\" sample")
	}
	samples := []struct{ driver, want string }{
		{misspelled[1], misspelled[2]},
		{"driver: {" + invalid[2] + ": " + invalid[3] + "}", invalid[1]},
	}
	b := newBuilder(t)
	for _, s := range samples {
		body := "type: Scala\nimage: spark:4.0.4\nmainClass: A\nmainApplicationFile: local:///a.jar\n" + s.driver + "\n"
		steps, err := preview.Render([]byte(body), b, preview.Options{})
		if err != nil {
			t.Fatalf("render %q: %v", body, err)
		}
		got := preview.Errors("README.md", steps)
		if got == nil || !strings.Contains(got.Error(), s.want) {
			t.Errorf("%s: sparkplug render prints %v; README.md says %q", s.driver, got, s.want)
		}
	}
}

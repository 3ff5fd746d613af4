package main

import (
	"bytes"
	"strings"
	"testing"
)

// stream is govulncheck -format json output in miniature: one called
// vulnerability per id in calledIDs, one only imported (no function).
func stream(calledIDs ...string) string {
	var b strings.Builder
	for _, id := range calledIDs {
		b.WriteString(`{"osv":{"id":"` + id + `","summary":"s of ` + id + `"}}` + "\n")
		b.WriteString(`{"finding":{"osv":"` + id + `","fixed_version":"v1.2.3","trace":[{"module":"m","version":"v1.0.0","package":"m/p","function":"F"}]}}` + "\n")
	}
	b.WriteString(`{"finding":{"osv":"GO-IMPORTED","trace":[{"module":"m","version":"v1.0.0","package":"m/p"}]}}` + "\n")
	return b.String()
}

func TestReport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		called   []string
		accepted map[string]string
		code     int
		want     []string
	}{
		{"called and not accepted fails", []string{"GO-1"}, nil, 1, []string{"CALLED   GO-1 (m v1.0.0, fixed in v1.2.3): s of GO-1"}},
		{"accepted passes and says why", []string{"GO-1"}, map[string]string{"GO-1": "not reached"}, 0, []string{"accepted GO-1", "not reached"}},
		{"imported only is no finding", nil, nil, 0, nil},
		{"stale acceptance is named", nil, map[string]string{"GO-OLD": "x"}, 0, []string{"stale    GO-OLD"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, err := readFindings(strings.NewReader(stream(tc.called...)))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := found["GO-IMPORTED"]; ok {
				t.Error("a vulnerability in an imported package but not called was counted")
			}
			var out bytes.Buffer
			if code := report(&out, found, tc.accepted); code != tc.code {
				t.Errorf("exit code %d, want %d:\n%s", code, tc.code, out.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
}

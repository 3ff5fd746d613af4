package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMetricsAreServed(t *testing.T) {
	m := New()
	m.Request("200", "Running", 3*time.Millisecond)
	m.Request("200", "Running", time.Millisecond)
	m.Driver("launched", "")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`sparkplug_template_execute_requests_total{code="200",phase="Running"} 2`,
		`sparkplug_template_execute_duration_seconds_count{code="200"} 2`,
		`sparkplug_driver_actions_total{action="launched",reason=""} 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.Request("200", "", time.Millisecond) // must not panic
	m.Driver("launched", "")
}

package metrics

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// A request of a client-go clientset made after New shows in every
// registry's rest_client_requests_total, with its code and method.
func TestKubernetesClientRequestsAreCounted(t *testing.T) {
	m1, m2 := New(), New()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	}))
	defer api.Close()
	kube, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	before := scrape(t, m1)
	for range 3 {
		if _, err := kube.CoreV1().Pods("ns").Get(context.Background(), "p", metav1.GetOptions{}); err == nil {
			t.Fatal("the stand-in API server answered 404; want an error")
		}
	}
	host := strings.TrimPrefix(api.URL, "http://")
	want := `rest_client_requests_total{code="404",host="` + host + `",method="GET"} 3`
	for i, m := range []*Metrics{m1, m2} {
		if got := scrape(t, m); !strings.Contains(got, want) {
			t.Errorf("registry %d lacks %q; before the requests it had:\n%s", i+1, want, grep(before, "rest_client"))
		}
	}
	if got := scrape(t, m1); !strings.Contains(got, `rest_client_rate_limiter_duration_seconds_count{host="`+host+`",verb="GET"} 3`) {
		t.Errorf("no rate limiter wait recorded for the 3 requests:\n%s", grep(got, "rest_client_rate_limiter_duration_seconds_count"))
	}
}

func scrape(t *testing.T, m *Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

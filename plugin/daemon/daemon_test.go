package daemon

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
)

// --pprof-addr serves Go's heap profile, which the scale benchmark reads.
func TestPprofServesTheHeapProfile(t *testing.T) {
	addr, stop, err := ServePprof("127.0.0.1:0", edge.DefaultLimits(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap profile") {
		t.Errorf("HTTP %d:\n%.300s", resp.StatusCode, body)
	}
}

package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
	"github.com/sparkplug-io/sparkplug/plugin/request"
)

// An error the agent is answered with shows no secret the core's words
// quote (package redact).
func TestErrorRepliesAreRedacted(t *testing.T) {
	for _, err := range []error{
		fmt.Errorf("%w: template: --db-password=leak01", request.ErrBadRequest),
		errors.New("cannot reach https://u:leak01@h/x"),
	} {
		e := New(&fakeCore{err: err}, tokenFile(t, "secret-token\n"), readyFunc(func() error { return nil }), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
		req := httptest.NewRequest(http.MethodPost, edge.ExecutePath, strings.NewReader(validBody))
		req.Header.Set("Authorization", "Bearer secret-token")
		rec := httptest.NewRecorder()
		e.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK || strings.Contains(rec.Body.String(), "leak01") || !strings.Contains(rec.Body.String(), "redacted") {
			t.Errorf("%d %s", rec.Code, rec.Body)
		}
	}
}

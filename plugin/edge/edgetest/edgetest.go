package edgetest

import (
	_ "embed"
	"encoding/json"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/edge"
)

//go:embed requests.json
var requests []byte

// Case is one template.execute body and the answer to it.
type Case struct {
	Name, Body string
	// Reply is the 200 reply, or "" when the body is a bad request.
	Reply string
}

// Cases are the bodies of requests.json, at least 20 of them.
func Cases(t testing.TB) []Case {
	t.Helper()
	var cases []Case
	if err := json.Unmarshal(requests, &cases); err != nil || len(cases) < 20 {
		t.Fatalf("edgetest requests.json: %d cases, %v", len(cases), err)
	}
	return cases
}

// Reply is what a server answered: status, body and the headers that
// matter here.
type Reply struct {
	Code                               int
	Body, ContentType, Allow, Location string
}

// Route is a method and path and the answer to them, with the token sent.
type Route struct {
	Method, Path string
	Want         Reply
}

// Routes are gin's answers (HandleMethodNotAllowed,
// RedirectTrailingSlash) for the paths the agent's servers serve: 405
// with Allow on a known path, a redirect for a trailing slash, 404
// elsewhere, "ok" on /healthz and /readyz; never 404 on template.execute.
// A HEAD answer's body is as a handler writes it; over HTTP it is empty.
func Routes() []Route {
	const (
		text    = "text/plain"
		textUTF = "text/plain; charset=utf-8"
		notHere = "404 page not found"
		notThis = "405 method not allowed"
	)
	return []Route{
		{"GET", edge.ExecutePath, Reply{405, notThis, text, "POST", ""}},
		{"PUT", edge.ExecutePath, Reply{405, notThis, text, "POST", ""}},
		{"HEAD", edge.ExecutePath, Reply{405, notThis, text, "POST", ""}},
		{"OPTIONS", edge.ExecutePath, Reply{405, notThis, text, "POST", ""}},
		{"POST", "/healthz", Reply{405, notThis, text, "GET", ""}},
		{"HEAD", "/healthz", Reply{405, notThis, text, "GET", ""}},
		{"GET", "/healthz", Reply{200, "ok", textUTF, "", ""}},
		{"GET", "/readyz", Reply{200, "ok", textUTF, "", ""}},
		{"GET", "/metrics", Reply{404, notHere, text, "", ""}},
		{"GET", "/", Reply{404, notHere, text, "", ""}},
		{"POST", "/api/v1/template.exec", Reply{404, notHere, text, "", ""}},
		{"POST", "/api/v1/other", Reply{404, notHere, text, "", ""}},
		{"POST", "/healthz/", Reply{404, notHere, text, "", ""}},
		{"POST", edge.ExecutePath + "/", Reply{307, "", "", "", edge.ExecutePath}},
		{"GET", "/healthz/", Reply{301, "<a href=\"/healthz\">Moved Permanently</a>.\n\n", "text/html; charset=utf-8", "", "/healthz"}},
	}
}

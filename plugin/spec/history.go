package spec

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// HistoryPathPrefix is where Spark's History Server serves an
// application's UI: /history/<application id>, with /<attempt id> after
// it only for cluster managers that number attempts (YARN). On Kubernetes
// Spark gives an application no attempt id, so /history/<id>/ is its page
// (HistoryServer.UI_PATH_PREFIX and getAttemptURI in Spark's
// core/src/main/scala/org/apache/spark/deploy/history/HistoryServer.scala).
const HistoryPathPrefix = "/history/"

// MaxHistoryServerURLBytes caps a History Server URL. Every node's
// history-ui output repeats it, and Argo keeps outputs in the Workflow
// object, so what a body or a flag can make an output grow is bounded; a
// real History Server's address is a few dozen bytes.
const MaxHistoryServerURLBytes = 1024

// historyPathChars are the characters a History Server URL's path may
// hold: RFC 3986's unreserved ones, percent-escapes and slashes. Nothing
// that a page, a shell or a YAML file showing the output could read as
// more than a URL (quotes, angle brackets, parentheses, semicolons).
var historyPathChars = regexp.MustCompile(`^[A-Za-z0-9._~%/-]*$`)

const historyURLExample = "e.g. https://spark-history.example.com or http://spark-history.spark.svc:18080"

// CheckHistoryServerURL checks the base URL of a Spark History Server:
// absolute http or https with a host (a port and a path allowed, for a
// server behind a proxy), no user, query or fragment, at most
// MaxHistoryServerURLBytes, written exactly as it will be sent. Each
// error says what to write instead.
func CheckHistoryServerURL(s string) error {
	if len(s) > MaxHistoryServerURLBytes {
		return fmt.Errorf("is %d bytes long, more than the %d a History Server's URL may have: give its base URL, %s", len(s), MaxHistoryServerURLBytes, historyURLExample)
	}
	if strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return errors.New("must not contain spaces or control characters: give the History Server's base URL, " + historyURLExample)
	}
	if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
		return errors.New("must be an absolute URL starting with http:// or https://, " + historyURLExample)
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("is not a URL: %v; %s", err, historyURLExample)
	}
	switch {
	case u.User != nil:
		return errors.New("must not hold a user or password: every reader of the workflow sees the URL; let the History Server or a proxy in front of it authenticate")
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#"):
		return errors.New("must not hold a query or a fragment: sparkplug appends " + HistoryPathPrefix + "<application id>/ to it; give the History Server's base URL, " + historyURLExample)
	case u.Hostname() == "":
		return errors.New("has no host: " + historyURLExample)
	}
	if err := checkHistoryHost(u); err != nil {
		return err
	}
	// The path as written (no query or fragment follows it), which the
	// parser would have escaped.
	if i := strings.IndexByte(s[len(u.Scheme)+len("://"):], '/'); i >= 0 {
		if p := s[len(u.Scheme)+len("://")+i:]; !historyPathChars.MatchString(p) {
			return fmt.Errorf("path %q: a path may hold letters, digits, '-', '.', '_', '~', '/' and %%-escapes only", p)
		}
	}
	// The last guard: nothing the parser would have rewritten (escaped,
	// dropped) is left, so the output repeats exactly what was checked.
	if u.String() != s {
		return fmt.Errorf("is not written as it would be sent (%q): write it so", u.String())
	}
	return nil
}

// checkHistoryHost checks a URL's host as a browser or a client needs it:
// an IP address or a DNS name, and a port in range.
func checkHistoryHost(u *url.URL) error {
	host := u.Hostname()
	if net.ParseIP(host) == nil {
		if msgs := validation.IsDNS1123Subdomain(strings.ToLower(host)); len(msgs) > 0 {
			return fmt.Errorf("host %q is neither a DNS name nor an IP address: %s", host, strings.Join(msgs, "; "))
		}
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q: want 1 to 65535", p)
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return errors.New("has a ':' after the host but no port: remove it, or give the port")
	}
	return nil
}

// HistoryUIURL is the page of application appID on the Spark History
// Server at base (its trailing slashes dropped): base/history/<appID>/.
// It is "" when there is no History Server, when base is not a URL
// CheckHistoryServerURL accepts, or when appID is not one Spark or
// sparkplug gives (a Kubernetes label value, as the spark-app-selector
// label holds it), so nothing read from the cluster can add to the path.
func HistoryUIURL(base, appID string) string {
	if base == "" || appID == "" || len(validation.IsValidLabelValue(appID)) > 0 || CheckHistoryServerURL(base) != nil {
		return ""
	}
	return strings.TrimRight(base, "/") + HistoryPathPrefix + appID + "/"
}

// HistoryServerURL is the base URL of the step's Spark History Server,
// "" for none: sparkplug.historyServerURL, which ParseWith fills from the
// plugin's --history-server-url when the body sets none.
func (s *SparkApplicationSpec) HistoryServerURL() string {
	if s == nil || s.Sparkplug == nil || s.Sparkplug.HistoryServerURL == nil {
		return ""
	}
	return *s.Sparkplug.HistoryServerURL
}

// validateHistoryServerURL checks the body's sparkplug.historyServerURL;
// "" turns the plugin's off for the step and needs no check.
func validateHistoryServerURL(p *field.Path, v *string) field.ErrorList {
	if v == nil || *v == "" {
		return nil
	}
	if err := CheckHistoryServerURL(*v); err != nil {
		return field.ErrorList{field.Invalid(p, *v, err.Error()+`; or "" for no history-ui output`)}
	}
	return nil
}

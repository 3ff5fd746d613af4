package spec

import (
	"errors"
	"strings"
	"testing"

	"github.com/sparkplug-io/sparkplug/plugin/setting"
)

func TestCheckHistoryServerURL(t *testing.T) {
	tests := []struct{ url, fail string }{
		{url: "https://spark-history.example.com"},
		{url: "https://spark-history.example.com/"},
		{url: "http://spark-history.spark.svc:18080"},
		{url: "http://spark-history.spark.svc.cluster.local:18080/"},
		{url: "https://tools.example.com/spark-history"},
		{url: "https://tools.example.com/a%2Fb/spark-history/"},
		{url: "http://10.0.0.5:18080"},
		{url: "http://[fd00::5]:18080"},
		{url: "https://Spark-History.Example.com"},

		{url: "spark-history.example.com", fail: "must be an absolute URL starting with http:// or https://"},
		{url: "//spark-history.example.com", fail: "must be an absolute URL"},
		{url: "HTTPS://spark-history.example.com", fail: "must be an absolute URL"},
		{url: "ftp://spark-history.example.com", fail: "must be an absolute URL"},
		{url: "javascript:alert(1)", fail: "must be an absolute URL"},
		{url: "https://", fail: "has no host"},
		{url: "https:///history", fail: "has no host"},
		{url: "https://:18080", fail: "has no host"},
		{url: "https://example.com?x=1", fail: "must not hold a query or a fragment"},
		{url: "https://example.com/?", fail: "must not hold a query or a fragment"},
		{url: "https://example.com/#x", fail: "must not hold a query or a fragment"},
		{url: "https://example.com#", fail: "must not hold a query or a fragment"},
		{url: "https://admin:secret@example.com", fail: "must not hold a user or password"},
		{url: "https://example.com/a b", fail: "must not contain spaces or control characters"},
		{url: "https://example.com/a\nb", fail: "must not contain spaces or control characters"},
		{url: "https://example.com/\u0085", fail: "must not contain spaces or control characters"},
		{url: "https://exa_mple.com", fail: `host "exa_mple.com" is neither a DNS name nor an IP address`},
		{url: "https://ünï.example.com", fail: "is neither a DNS name nor an IP address"},
		{url: "https://example.com:0", fail: `port "0": want 1 to 65535`},
		{url: "https://example.com:99999", fail: `port "99999": want 1 to 65535`},
		{url: "https://example.com:", fail: "has a ':' after the host but no port"},
		{url: "https://example.com/a\"onclick=\"x", fail: "a path may hold letters, digits"},
		{url: "https://example.com/<script>", fail: "a path may hold letters, digits"},
		{url: "https://example.com/a'b", fail: "a path may hold letters, digits"},
		{url: "https://example.com/a;b", fail: "a path may hold letters, digits"},
		{url: "https://example.com/%zz", fail: "is not a URL"},
		{url: "https://example.com/" + strings.Repeat("a", MaxHistoryServerURLBytes), fail: "bytes long, more than the 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.url[:min(len(tt.url), 60)], func(t *testing.T) {
			err := CheckHistoryServerURL(tt.url)
			switch {
			case tt.fail == "" && err != nil:
				t.Fatalf("CheckHistoryServerURL(%q): %v", tt.url, err)
			case tt.fail != "" && (err == nil || !strings.Contains(err.Error(), tt.fail)):
				t.Fatalf("CheckHistoryServerURL(%q) = %v; want an error containing %q", tt.url, err, tt.fail)
			}
		})
	}
}

// The page of an application is the base URL, without its trailing
// slashes, then Spark's /history/<id>/; an id that is no label value (so
// no id Spark or sparkplug gives) or a base that is not a checked URL
// gives no page at all.
func TestHistoryUIURL(t *testing.T) {
	const id = "spark-00112233445566778899aabbccddeeff"
	tests := []struct{ base, id, want string }{
		{"https://spark-history.example.com", id, "https://spark-history.example.com/history/" + id + "/"},
		{"https://spark-history.example.com/", id, "https://spark-history.example.com/history/" + id + "/"},
		{"https://tools.example.com/spark-history//", id, "https://tools.example.com/spark-history/history/" + id + "/"},
		{"http://spark-history.spark.svc:18080", "spark-application-1700000000000", "http://spark-history.spark.svc:18080/history/spark-application-1700000000000/"},
		{"", id, ""},
		{"https://spark-history.example.com", "", ""},
		{"https://spark-history.example.com", "../../admin", ""},
		{"https://spark-history.example.com", "spark-1/../x", ""},
		{"https://spark-history.example.com", "spark-1?x=<script>", ""},
		{"https://spark-history.example.com", strings.Repeat("a", 64), ""},
		{"javascript:alert(1)//", id, ""},
		{"https://example.com/" + strings.Repeat("a", MaxHistoryServerURLBytes), id, ""},
	}
	for _, tt := range tests {
		if got := HistoryUIURL(tt.base, tt.id); got != tt.want {
			t.Errorf("HistoryUIURL(%.40q, %.40q) = %q, want %q", tt.base, tt.id, got, tt.want)
		}
	}
}

const historyBody = `{"type":"Scala","image":"spark:3.5.3","mainClass":"C","mainApplicationFile":"local:///a.jar"`

// The plugin's --history-server-url is every step's unless the step's
// sparkplug.historyServerURL says otherwise; "" turns it off for the step.
func TestHistoryServerURLDefaultsAndOverride(t *testing.T) {
	plugin := PluginDefaults{HistoryServerURL: "https://history.example.com"}
	tests := []struct {
		name     string
		body     string
		defaults PluginDefaults
		want     string
	}{
		{"none anywhere", historyBody + `}`, PluginDefaults{}, ""},
		{"the plugin's", historyBody + `}`, plugin, "https://history.example.com"},
		{"the plugin's, with other sparkplug settings", historyBody + `,"sparkplug":{"pendingTimeout":"5m"}}`, plugin, "https://history.example.com"},
		{"the step's over the plugin's", historyBody + `,"sparkplug":{"historyServerURL":"http://shs.team-a.svc:18080"}}`, plugin, "http://shs.team-a.svc:18080"},
		{"the step's without the plugin's", historyBody + `,"sparkplug":{"historyServerURL":"http://shs.team-a.svc:18080"}}`, PluginDefaults{}, "http://shs.team-a.svc:18080"},
		{"turned off for the step", historyBody + `,"sparkplug":{"historyServerURL":""}}`, plugin, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseWith([]byte(tt.body), tt.defaults)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.HistoryServerURL(); got != tt.want {
				t.Errorf("HistoryServerURL() = %q, want %q", got, tt.want)
			}
		})
	}
}

// A bad URL in a body fails the step naming the field and the fix, with
// what it echoes of the value bounded as every echoed value is.
func TestHistoryServerURLInABodyIsChecked(t *testing.T) {
	tests := []struct{ value, msg string }{
		{`"spark-history:18080"`, `Invalid value: "spark-history:18080": must be an absolute URL starting with http:// or https://, e.g. https://spark-history.example.com`},
		{`"https://h.example.com/?user=x"`, `must not hold a query or a fragment: sparkplug appends /history/<application id>/ to it`},
		{`"https://h.example.com/` + strings.Repeat("a", 2000) + `"`, `bytes long, more than the 1024 a History Server's URL may have`},
	}
	for _, tt := range tests {
		_, err := ParseWith([]byte(historyBody+`,"sparkplug":{"historyServerURL":`+tt.value+`}}`), PluginDefaults{HistoryServerURL: "https://history.example.com"})
		var invalid *InvalidError
		if !errors.As(err, &invalid) {
			t.Fatalf("%.40s: err = %v, want *InvalidError", tt.value, err)
		}
		checkErrs(t, invalid.Errs, []wantErr{{"spark.sparkplug.historyServerURL", tt.msg}})
		if !strings.Contains(err.Error(), `or "" for no history-ui output`) {
			t.Errorf("message %q does not say how to turn it off", err)
		}
		if len(err.Error()) > 1024 {
			t.Errorf("message of %d bytes echoes the whole value", len(err.Error()))
		}
	}
	_, err := Parse([]byte(historyBody + `,"sparkplug":{"historyServerURL":42}}`))
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("a number: err = %v, want *InvalidError", err)
	}
	checkErrs(t, invalid.Errs, []wantErr{{"spark.sparkplug.historyServerURL", "string"}})
}

// The flag is checked as the field is, and its refusal names the flag.
func TestPluginDefaultsValidateTheHistoryServerURL(t *testing.T) {
	if err := (PluginDefaults{HistoryServerURL: "http://spark-history.spark.svc:18080/"}).Validate(); err != nil {
		t.Fatal(err)
	}
	err := PluginDefaults{HistoryServerURL: "spark-history:18080"}.Validate()
	var se *setting.Error
	if !errors.As(err, &se) || se.Name != "history-server-url" || !strings.Contains(se.Problem, `"spark-history:18080": must be an absolute URL`) {
		t.Fatalf("err = %v, want a refusal of history-server-url", err)
	}
	err = PluginDefaults{HistoryServerURL: "https://h.example.com/" + strings.Repeat("a", 4000)}.Validate()
	if err == nil || len(err.Error()) > 1024 {
		t.Fatalf("a long bad value: %d bytes of error, want a bounded refusal: %.100v", len(err.Error()), err)
	}
}

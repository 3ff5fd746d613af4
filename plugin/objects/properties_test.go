package objects

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestEscapeProperty(t *testing.T) {
	for _, tc := range []struct {
		in       string
		key, val string // escaped as a key and as a value
	}{
		{"plain.key", "plain.key", "plain.key"},
		{"k8s://https://h:443", `k8s\://https\://h\:443`, `k8s\://https\://h\:443`},
		{"a=b", `a\=b`, `a\=b`},
		{"#!", `\#\!`, `\#\!`},
		{`C:\dir`, `C\:\\dir`, `C\:\\dir`},
		{" lead and inner", `\ lead\ and\ inner`, `\ lead and inner`},
		{"tab\tnl\ncr\rff\f", `tab\tnl\ncr\rff\f`, `tab\tnl\ncr\rff\f`},
		{"é", `\u00E9`, `\u00E9`},
		{"😀", `\uD83D\uDE00`, `\uD83D\uDE00`}, // UTF-16 surrogates, as Java writes them
		{"\x01", `\u0001`, `\u0001`},
		{"-XX:+UseG1GC -Da=b", `-XX\:+UseG1GC\ -Da\=b`, `-XX\:+UseG1GC -Da\=b`},
		{"", "", ""},
	} {
		if got := escapeProperty(tc.in, true); got != tc.key {
			t.Errorf("key %q: got %s, want %s", tc.in, got, tc.key)
		}
		if got := escapeProperty(tc.in, false); got != tc.val {
			t.Errorf("value %q: got %s, want %s", tc.in, got, tc.val)
		}
	}
}

func TestRenderPropertiesIsSortedAndReadsBack(t *testing.T) {
	conf := map[string]string{
		"spark.b":        "2",
		"spark.a":        "1",
		"spark.odd key":  " v = 1: #x!\ttab\nline é 😀 \\",
		"spark.empty":    "",
		"spark.trailing": "x ",
	}
	out := renderProperties(conf, "a comment")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "#a comment" {
		t.Errorf("first line %q, want the comment", lines[0])
	}
	var keys []string
	got := map[string]string{}
	for _, l := range lines[1:] {
		k, v := loadLine(t, l)
		keys = append(keys, k)
		got[k] = v
	}
	if strings.Join(keys, ",") != "spark.a,spark.b,spark.empty,spark.odd key,spark.trailing" {
		t.Errorf("keys in order %v, want sorted", keys)
	}
	for k, v := range conf {
		if got[k] != v {
			t.Errorf("%q reads back as %q, want %q", k, got[k], v)
		}
	}
}

// loadLine parses one line as java.util.Properties.load does (the subset
// renderProperties writes: no continuation lines, '=' separator).
func loadLine(t *testing.T, line string) (string, string) {
	t.Helper()
	units := utf16.Encode([]rune(line))
	var key, val []uint16
	cur := &key
	for i := 0; i < len(units); i++ {
		u := units[i]
		if u == '=' && cur == &key {
			cur = &val
			continue
		}
		if u != '\\' {
			*cur = append(*cur, u)
			continue
		}
		i++
		if i >= len(units) {
			t.Fatalf("dangling backslash in %q", line)
		}
		switch units[i] {
		case 't':
			*cur = append(*cur, '\t')
		case 'n':
			*cur = append(*cur, '\n')
		case 'r':
			*cur = append(*cur, '\r')
		case 'f':
			*cur = append(*cur, '\f')
		case 'u':
			n, err := strconv.ParseUint(string(utf16.Decode(units[i+1:i+5])), 16, 16)
			if err != nil {
				t.Fatalf("bad \\u escape in %q", line)
			}
			*cur = append(*cur, uint16(n))
			i += 4
		default:
			*cur = append(*cur, units[i])
		}
	}
	if cur != &val {
		t.Fatalf("no separator in %q", line)
	}
	return string(utf16.Decode(key)), string(utf16.Decode(val))
}

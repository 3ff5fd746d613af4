package objects

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
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
	for _, l := range lines[1:] {
		k, _, _ := strings.Cut(l, "=")
		keys = append(keys, k)
	}
	if strings.Join(keys, ",") != `spark.a,spark.b,spark.empty,spark.odd\ key,spark.trailing` {
		t.Errorf("keys in order %v, want sorted", keys)
	}
	got := loadProperties(t, out)
	for k, v := range conf {
		if got[k] != v {
			t.Errorf("%q reads back as %q, want %q", k, got[k], v)
		}
	}
}

// Keys a body may give sparkConf (anything but '=' and control
// characters, which spec refuses) reach the driver as written: what
// spark.properties holds, read as java.util.Properties.load reads it, is
// the conf, whatever ':', spaces, backslashes or comment marks it has.
func TestSparkPropertiesReadBackAsTheConf(t *testing.T) {
	s := body(t)
	s.SparkConf = map[string]string{
		"spark.a:b":            "1",
		"spark.a b":            " 2 ",
		`spark.a\b`:            `C:\x`,
		"#spark.comment":       "3",
		"!spark.bang":          "4",
		" spark.lead":          "5",
		"spark.trail ":         "6",
		"spark.é:😀":            "7",
		"spark.x\\":            "8",
		"spark.tab\t":          "\t9",
		"spark.key#with!marks": "v#!=:",
	}
	objs, err := newBuilder(t).Cluster(s, goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	got := loadProperties(t, objs.ConfigMap.Data[spark.PropertiesFile])
	for k, v := range s.SparkConf {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("sparkConf %q = %q reads back as %q (present: %v)", k, v, g, ok)
		}
	}
	// What a key cut at its ':' or space would give.
	for _, k := range []string{"spark.a", "spark.é", "spark.trail", "spark.lead", "spark.tab", "spark.key"} {
		if v, ok := got[k]; ok {
			t.Errorf("spark.properties reads as holding %q = %q, a piece of a key", k, v)
		}
	}
}

// The faithful reader's own rules, on text Properties.store never writes.
func TestLoadProperties(t *testing.T) {
	in := "# comment \\\n" +
		"  ! another\r\n" +
		"\t\f\n" +
		"a=1\n" +
		"b : 2\n" +
		"c 3\n" +
		"d\n" +
		"e = x\\\n    y\\\r\n z\n" +
		"f\\ g=\\u0041\\q\\\\\n" +
		"h=odd\\\\\\\nnext\n" +
		"i=even\\\\\n" +
		"j==:k\r" +
		"l\t=\tv \f"
	want := map[string]string{
		"a": "1", "b": "2", "c": "3", "d": "", "e": "xyz", "f g": `Aq\`,
		"h": `odd\next`, "i": `even\`, "j": "=:k", "l": "v \f",
	}
	got := loadProperties(t, in)
	if len(got) != len(want) {
		t.Errorf("%d keys %q, want %d", len(got), got, len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q = %q, want %q", k, got[k], v)
		}
	}
}

// loadProperties reads text as java.util.Properties.load(Reader) does,
// following its Javadoc (Java 17):
//   - natural lines end at \n, \r or \r\n; a line of only white space
//     (space, \t, \f) is blank, one whose first non-white-space character
//     is '#' or '!' a comment: both are skipped, and a comment is never
//     continued;
//   - a line ending in an odd number of backslashes continues on the next,
//     whose leading white space is dropped, with the backslash and the line
//     terminator;
//   - the key runs from the first non-white-space character to the first
//     unescaped '=', ':' or white space; white space after it is skipped,
//     then one '=' or ':', then white space again; the rest is the value;
//   - in key and value \t \n \r \f and \uXXXX are escapes, a backslash
//     before any other character is dropped (\\ is a backslash); a
//     malformed \uXXXX is an error.
func loadProperties(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	src := []rune(text)
	isWhite := func(r rune) bool { return r == ' ' || r == '\t' || r == '\f' }
	for pos := 0; pos < len(src); {
		// One logical line, its continuations joined, escapes kept.
		var logical []rune
		first := true
		for {
			for pos < len(src) && isWhite(src[pos]) {
				pos++ // leading white space, also of a continuation
			}
			start := pos
			for pos < len(src) && src[pos] != '\n' && src[pos] != '\r' {
				pos++
			}
			line := src[start:pos]
			if pos < len(src) && src[pos] == '\r' && pos+1 < len(src) && src[pos+1] == '\n' {
				pos++
			}
			if pos < len(src) {
				pos++
			}
			if first && (len(line) == 0 || line[0] == '#' || line[0] == '!') {
				break // blank or comment
			}
			first = false
			slashes := 0
			for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
				slashes++
			}
			if slashes%2 == 1 && pos < len(src) {
				logical = append(logical, line[:len(line)-1]...)
				continue
			}
			if slashes%2 == 1 {
				line = line[:len(line)-1] // a continuation at the end of the stream
			}
			logical = append(logical, line...)
			break
		}
		if first {
			continue
		}
		// The key ends at the first unescaped '=', ':' or white space.
		keyEnd, valStart := len(logical), len(logical)
		for i := 0; i < len(logical); i++ {
			if logical[i] == '\\' {
				i++
				continue
			}
			if logical[i] == '=' || logical[i] == ':' || isWhite(logical[i]) {
				keyEnd = i
				j := i
				for j < len(logical) && isWhite(logical[j]) {
					j++
				}
				if j < len(logical) && (logical[j] == '=' || logical[j] == ':') {
					j++
				}
				for j < len(logical) && isWhite(logical[j]) {
					j++
				}
				valStart = j
				break
			}
		}
		out[unescapeProperty(t, logical[:keyEnd])] = unescapeProperty(t, logical[valStart:])
	}
	return out
}

// unescapeProperty is the escape processing of Properties.load.
func unescapeProperty(t *testing.T, s []rune) string {
	t.Helper()
	var units []uint16
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			units = append(units, utf16.Encode(s[i:i+1])...)
			continue
		}
		i++
		switch s[i] {
		case 't':
			units = append(units, '\t')
		case 'n':
			units = append(units, '\n')
		case 'r':
			units = append(units, '\r')
		case 'f':
			units = append(units, '\f')
		case 'u':
			if i+5 > len(s) {
				t.Fatalf("malformed \\uxxxx encoding in %q", string(s))
			}
			n, err := strconv.ParseUint(string(s[i+1:i+5]), 16, 16)
			if err != nil {
				t.Fatalf("malformed \\uxxxx encoding in %q", string(s))
			}
			units = append(units, uint16(n))
			i += 4
		default:
			units = append(units, utf16.Encode(s[i:i+1])...)
		}
	}
	return string(utf16.Decode(units))
}

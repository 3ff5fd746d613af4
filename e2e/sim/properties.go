package sim

import (
	"bufio"
	"strings"
)

// parseProperties reads a Java properties file as Spark does
// (java.util.Properties.load): key and value separated by the first
// unescaped '=', ':' or whitespace, backslash escapes, '#' and '!'
// comments. Line continuations are not needed for what sparkplug writes and
// are not supported.
func parseProperties(s string) map[string]string {
	props := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		key, rest := splitKey(line)
		props[unescape(key)] = unescape(rest)
	}
	return props
}

// splitKey splits a logical line at the separator after the key.
func splitKey(line string) (key, value string) {
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case '\\':
			i++ // the escaped character is part of the key
		case '=', ':', ' ', '\t', '\f':
			value = strings.TrimLeft(line[i+1:], " \t\f")
			if c != '=' && c != ':' && value != "" && (value[0] == '=' || value[0] == ':') {
				value = strings.TrimLeft(value[1:], " \t\f")
			}
			return line[:i], value
		}
	}
	return line, ""
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i == len(s)-1 {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

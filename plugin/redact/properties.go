package redact

import (
	"strconv"
	"strings"
)

// Properties returns a Java properties text (spark.properties,
// spark-defaults.conf) to show: the value of every Sensitive key is
// Redacted, every other value, and every comment, goes through Value. It reads the text as
// java.util.Properties.load does (key and value separated by =, : or
// white space, escapes such as \= and \u0070 undone, a line ending in a
// backslash continued on the next), so neither an escaped key nor an
// escaped value (-Dx.password\=secret, as spark.properties is written)
// hides a secret. A line with nothing to hide is shown as it is; one with
// something is shown as one key=value line, escaped as sparkplug writes
// it.
func Properties(text string) string {
	lines := strings.Split(text, "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		first := i
		logical := strings.TrimLeft(lines[i], " \t\f")
		if logical == "" || logical[0] == '#' || logical[0] == '!' {
			out = append(out, Value(lines[i]))
			continue
		}
		for continued(logical) && i+1 < len(lines) {
			i++
			logical = logical[:len(logical)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		key, value := splitProperty(strings.TrimSuffix(logical, "\r"))
		shown := value
		if Sensitive(key) {
			shown = Redacted
		} else {
			shown = Value(value)
		}
		if shown == value {
			out = append(out, lines[first:i+1]...)
			continue
		}
		out = append(out, escape(key, true)+"="+escape(shown, false))
	}
	return strings.Join(out, "\n")
}

// continued says whether a natural line goes on on the next: it ends in
// an odd number of backslashes.
func continued(line string) bool {
	line = strings.TrimSuffix(line, "\r")
	n := len(line) - len(strings.TrimRight(line, `\`))
	return n%2 == 1
}

// splitProperty splits a logical line into its key and value, both
// unescaped, as Properties.load does.
func splitProperty(line string) (key, value string) {
	end := len(line)
	for i := 0; i < len(line); i++ {
		c := line[i]
		if c == '\\' {
			i++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = i
			break
		}
	}
	rest := strings.TrimLeft(line[end:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	return unescape(line[:end]), unescape(rest)
}

// unescape undoes the escapes of a properties key or value: \uXXXX, \t,
// \n, \r, \f, and a backslash before any other character.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	var units []uint16
	flush := func() {
		for len(units) > 0 {
			r := rune(units[0])
			n := 1
			if len(units) > 1 && 0xD800 <= units[0] && units[0] < 0xDC00 && 0xDC00 <= units[1] && units[1] < 0xE000 {
				r = (rune(units[0])-0xD800)<<10 + (rune(units[1]) - 0xDC00) + 0x10000
				n = 2
			}
			b.WriteRune(r)
			units = units[n:]
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			flush()
			b.WriteByte(s[i])
			continue
		}
		i++
		if s[i] == 'u' && i+4 < len(s) {
			if u, err := strconv.ParseUint(s[i+1:i+5], 16, 16); err == nil {
				units = append(units, uint16(u))
				i += 4
				continue
			}
		}
		flush()
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
	flush()
	return b.String()
}

// escape writes a key or value as Properties.store does (and
// sparkplug's spark.properties is written), so that Properties.load reads
// it back: backslash, line breaks, =, :, # and ! escaped, and white space
// in a key or at the start of a value. Characters outside ASCII are left
// as they are: this is for reading.
func escape(s string, key bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '=', ':', '#', '!':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\f':
			b.WriteString(`\f`)
		case ' ':
			if key || i == 0 {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

package sparkconf

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// Load parses a Java properties file as java.util.Properties.load(Reader)
// does, which is how Spark reads spark.properties
// (Utils.getPropertiesFromFile, UTF-8):
//
//   - natural lines end at \n, \r or \r\n; leading spaces, tabs and form
//     feeds are skipped; blank lines and lines starting with '#' or '!' are
//     ignored;
//   - a line ending in an odd number of backslashes continues on the next
//     one, whose leading white space is skipped;
//   - the key ends at the first unescaped '=', ':' or white space; white
//     space and one '=' or ':' after it are skipped;
//   - \t \n \r \f and \uXXXX (UTF-16 code units, surrogate pairs joined)
//     are escapes, any other escaped character stands for itself.
//
// A later key replaces an earlier one. A malformed \u escape is an error,
// as it is in Java.
func Load(text string) (map[string]string, error) {
	props := map[string]string{}
	for _, line := range logicalLines(text) {
		key, value := splitKeyValue(utf16.Encode([]rune(line)))
		k, err := unescape(key)
		if err != nil {
			return nil, err
		}
		v, err := unescape(value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		props[k] = v
	}
	return props, nil
}

// isSpace is white space as Properties.load sees it.
func isSpace[T byte | uint16](c T) bool { return c == ' ' || c == '\t' || c == '\f' }

// logicalLines joins continued natural lines and drops blank and comment
// lines; escapes are left for splitKeyValue and unescape.
func logicalLines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	var out []string
	var cur strings.Builder
	continued := false
	for _, natural := range strings.Split(text, "\n") {
		l := strings.TrimLeftFunc(natural, func(r rune) bool { return r < 0x80 && isSpace(byte(r)) })
		if !continued && (l == "" || l[0] == '#' || l[0] == '!') {
			continue
		}
		backslashes := len(l) - len(strings.TrimRight(l, `\`))
		if backslashes%2 == 1 {
			cur.WriteString(l[:len(l)-1])
			continued = true
			continue
		}
		cur.WriteString(l)
		out = append(out, cur.String())
		cur.Reset()
		continued = false
	}
	if continued { // a backslash at the end of the file is dropped
		out = append(out, cur.String())
	}
	return out
}

// splitKeyValue splits a logical line after its key and the separator.
func splitKeyValue(line []uint16) (key, value []uint16) {
	keyLen, valueStart, hasSep, escaped := 0, len(line), false, false
	for ; keyLen < len(line); keyLen++ {
		c := line[keyLen]
		if !escaped && (c == '=' || c == ':') {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if !escaped && isSpace(c) {
			valueStart = keyLen + 1
			break
		}
		escaped = c == '\\' && !escaped
	}
	for ; valueStart < len(line); valueStart++ {
		c := line[valueStart]
		if isSpace(c) {
			continue
		}
		if !hasSep && (c == '=' || c == ':') {
			hasSep = true
			continue
		}
		break
	}
	return line[:keyLen], line[min(valueStart, len(line)):]
}

// unescape resolves the escapes of a key or value (Properties.loadConvert).
func unescape(s []uint16) (string, error) {
	out := make([]uint16, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i == len(s)-1 {
			break // a lone backslash at the end stands for nothing
		}
		i++
		switch s[i] {
		case 't':
			out = append(out, '\t')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 'f':
			out = append(out, '\f')
		case 'u':
			if i+4 >= len(s) {
				return "", fmt.Errorf("malformed \\uxxxx encoding")
			}
			var u uint16
			for _, h := range s[i+1 : i+5] {
				d, ok := hexDigit(h)
				if !ok {
					return "", fmt.Errorf("malformed \\uxxxx encoding")
				}
				u = u<<4 | d
			}
			out = append(out, u)
			i += 4
		default:
			out = append(out, s[i])
		}
	}
	return string(utf16.Decode(out)), nil
}

func hexDigit(c uint16) (uint16, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

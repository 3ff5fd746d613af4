package objects

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf16"
)

// renderProperties writes conf in java.util.Properties syntax, as
// Properties.store does, with the keys sorted so the same conf always gives
// the same bytes: one comment line, then key=value lines.
//
// Escaping follows Properties.saveConvert: backslash, tab, newline, carriage
// return, form feed, '=', ':', '#' and '!' are escaped; a space is escaped
// anywhere in a key and at the start of a value; characters outside
// printable ASCII are written as \uXXXX (UTF-16 code units, as
// store(OutputStream) does), which Properties.load reads back whatever the
// file's encoding.
func renderProperties(conf map[string]string, comment string) string {
	var b strings.Builder
	if comment != "" {
		// Only sparkplug's own words and DNS names: nothing to escape.
		b.WriteString("#" + comment + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(conf)) {
		b.WriteString(escapeProperty(k, true))
		b.WriteByte('=')
		b.WriteString(escapeProperty(conf[k], false))
		b.WriteByte('\n')
	}
	return b.String()
}

// escapeProperty is java.util.Properties.saveConvert with escUnicode true.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, u := range utf16.Encode([]rune(s)) {
		switch {
		case u > 61 && u < 127:
			if u == '\\' {
				b.WriteString(`\\`)
			} else {
				b.WriteByte(byte(u))
			}
		case u == ' ':
			if i == 0 || key {
				b.WriteString(`\ `)
			} else {
				b.WriteByte(' ')
			}
		case u == '\t':
			b.WriteString(`\t`)
		case u == '\n':
			b.WriteString(`\n`)
		case u == '\r':
			b.WriteString(`\r`)
		case u == '\f':
			b.WriteString(`\f`)
		case u == '=', u == ':', u == '#', u == '!':
			b.WriteByte('\\')
			b.WriteByte(byte(u))
		case u < 0x20 || u > 0x7e:
			fmt.Fprintf(&b, `\u%04X`, u)
		default:
			b.WriteByte(byte(u))
		}
	}
	return b.String()
}

package mdlinks

import (
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode"
)

// Problem is a link that leads nowhere.
type Problem struct {
	File string // slash-separated, relative to the root checked
	Line int
	Link string
	Why  string
}

func (p Problem) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", p.File, p.Line, p.Link, p.Why)
}

// skipDirs are directories never searched for Markdown files.
var skipDirs = map[string]bool{".git": true, "bin": true, "node_modules": true, "vendor": true}

// Files lists the Markdown files under root, slash-separated and relative
// to it, leaving out skipDirs and the relative directories in skip.
func Files(root string, skip ...string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if p != root && (skipDirs[d.Name()] || contains(skip, rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			files = append(files, rel)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Check reads each Markdown file (relative to root) and returns the links
// in them that lead nowhere, in file and line order.
func Check(root string, files []string) ([]Problem, error) {
	c := checker{root: root, anchors: map[string]map[string]bool{}}
	var problems []Problem
	for _, f := range files {
		src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		for _, l := range Links(string(src)) {
			if why := c.check(f, l.Dest); why != "" {
				problems = append(problems, Problem{File: f, Line: l.Line, Link: l.Dest, Why: why})
			}
		}
	}
	return problems, nil
}

type checker struct {
	root    string
	anchors map[string]map[string]bool // by file, relative to root
}

// check says why dest, a link in the file from, leads nowhere, or "".
func (c *checker) check(from, dest string) string {
	if dest == "" {
		return "empty link"
	}
	if u, err := url.Parse(dest); err == nil && u.Scheme != "" {
		return "" // http, https, mailto, ...: not fetched
	}
	if strings.HasPrefix(dest, "//") {
		return ""
	}
	target, frag, _ := strings.Cut(dest, "#")
	if i := strings.IndexByte(target, '?'); i >= 0 {
		target = target[:i]
	}
	p, err := url.PathUnescape(target)
	if err != nil {
		return fmt.Sprintf("bad path: %v", err)
	}
	file := from
	if p != "" {
		if strings.HasPrefix(p, "/") {
			file = path.Clean(strings.TrimPrefix(p, "/"))
		} else {
			file = path.Join(path.Dir(from), p)
		}
		if file == ".." || strings.HasPrefix(file, "../") {
			return "outside the repository"
		}
		if _, err := os.Stat(filepath.Join(c.root, filepath.FromSlash(file))); err != nil {
			return fmt.Sprintf("no file %s", file)
		}
	}
	if frag == "" || !strings.HasSuffix(file, ".md") {
		return "" // a line anchor of a source file, say: GitHub's, not checked
	}
	anchor, err := url.PathUnescape(frag)
	if err != nil {
		return fmt.Sprintf("bad anchor: %v", err)
	}
	anchors, err := c.anchorsOf(file)
	if err != nil {
		return err.Error()
	}
	if !anchors[anchor] {
		return fmt.Sprintf("no heading #%s in %s", anchor, file)
	}
	return ""
}

func (c *checker) anchorsOf(file string) (map[string]bool, error) {
	if a, ok := c.anchors[file]; ok {
		return a, nil
	}
	src, err := os.ReadFile(filepath.Join(c.root, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	a := Anchors(string(src))
	c.anchors[file] = a
	return a, nil
}

// Link is a link destination and the line it is on.
type Link struct {
	Line int
	Dest string
}

var (
	inline  = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>\n]*>|[^\s)]*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)`)
	refDef  = regexp.MustCompile(`(?m)^ {0,3}\[[^\]\n]+\]:[ \t]*(<[^>\n]*>|\S+)`)
	htmlRef = regexp.MustCompile(`<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*"([^"]*)"`)
	htmlID  = regexp.MustCompile(`<[a-zA-Z][^>]*?\b(?:id|name)\s*=\s*"([^"]*)"`)
	heading = regexp.MustCompile(`^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
)

// Links returns the link destinations of a Markdown text, outside code.
func Links(src string) []Link {
	text := prose(src)
	var links []Link
	add := func(idx [][]int) {
		for _, m := range idx {
			dest := strings.TrimSuffix(strings.TrimPrefix(text[m[2]:m[3]], "<"), ">")
			links = append(links, Link{Line: 1 + strings.Count(text[:m[2]], "\n"), Dest: dest})
		}
	}
	add(inline.FindAllStringSubmatchIndex(text, -1))
	add(refDef.FindAllStringSubmatchIndex(text, -1))
	add(htmlRef.FindAllStringSubmatchIndex(text, -1))
	sort.SliceStable(links, func(i, j int) bool { return links[i].Line < links[j].Line })
	return links
}

// Anchors returns the anchors of a Markdown text: its headings' slugs by
// GitHub's rules, and the HTML ids and names outside code.
func Anchors(src string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	lines := strings.Split(src, "\n")
	for i, line := range strings.Split(prose(src), "\n") {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		// The heading's own text, code spans included (prose blanked them).
		raw := heading.FindStringSubmatch(lines[i])
		slug := Slug(raw[2])
		if n, dup := seen[slug]; dup {
			seen[slug] = n + 1
			anchors[fmt.Sprintf("%s-%d", slug, n+1)] = true
			continue
		}
		seen[slug] = 0
		anchors[slug] = true
	}
	for _, m := range htmlID.FindAllStringSubmatch(prose(src), -1) {
		anchors[m[1]] = true
	}
	return anchors
}

var (
	linkText  = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]\([^)]*\)`)
	htmlTag   = regexp.MustCompile(`<[^>]+>`)
	emphasis  = regexp.MustCompile(`(^|[^\p{L}\p{N}])_+|_+([^\p{L}\p{N}]|$)`)
	backticks = regexp.MustCompile("`+")
)

// Slug is GitHub's anchor of a heading written as text: its rendered
// text (links as their text, no code-span backticks, emphasis or HTML
// tags) lower-cased, every character but letters, digits, '-', '_' and
// spaces dropped, and each space made '-'.
func Slug(text string) string {
	text = linkText.ReplaceAllString(text, "$1")
	text = htmlTag.ReplaceAllString(text, "")
	text = backticks.ReplaceAllStringFunc(text, func(string) string { return "" })
	text = emphasis.ReplaceAllString(text, "$1$2")
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// prose is src with fenced code blocks and code spans blanked: every
// character of them but newlines made a space, so offsets and line
// numbers stay those of src.
func prose(src string) string {
	b := []byte(src)
	blank := func(from, to int) {
		for i := from; i < to; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
	}
	// Fenced code blocks: a line opening with ``` or ~~~ (indented
	// any amount, as inside list items) up to a line closing it with at
	// least as many of the same character.
	var fence string
	start := 0
	off := 0
	for _, line := range strings.SplitAfter(src, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:runLen(t)]
			start = off
		case fence != "" && strings.HasPrefix(t, fence) && strings.TrimLeft(t, fence[:1]) == "":
			blank(start, off+len(line))
			fence = ""
		}
		off += len(line)
	}
	if fence != "" {
		blank(start, len(b))
	}
	// Code spans: a run of backticks up to the next run of as many, within
	// a paragraph.
	s := string(b)
	for i := 0; i < len(s); {
		if s[i] != '`' {
			i++
			continue
		}
		n := runLen(s[i:])
		end := -1
		for j := i + n; j < len(s); {
			if s[j] == '`' {
				m := runLen(s[j:])
				if m == n {
					end = j + m
					break
				}
				j += m
				continue
			}
			if s[j] == '\n' && strings.HasPrefix(strings.TrimLeft(s[j+1:], " \t"), "\n") {
				break // a blank line ends the paragraph
			}
			j++
		}
		if end < 0 {
			i += n
			continue
		}
		blank(i, end)
		i = end
	}
	return string(b)
}

// runLen is how many times s repeats its first byte at its start.
func runLen(s string) int {
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	return n
}

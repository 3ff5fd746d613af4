// Package mdlinks checks the relative links of the repository's Markdown
// files: every link, image and reference definition whose destination is
// no URL must name a file or directory that exists, and a #fragment must
// name a heading (or an HTML id or name) of the Markdown file it points
// into. External http(s) links are not fetched.
//
// Anchors follow GitHub's rules: a heading's rendered text, lower-cased,
// with everything but letters, digits, spaces, '-' and '_' dropped and
// spaces made '-'; the second heading of the same anchor gets "-1", the
// third "-2". Links and headings inside fenced code blocks and code spans
// are not read.
//
// `make verify` runs TestRepositoryLinks, which fails naming file:line for
// each link that leads nowhere.
package mdlinks

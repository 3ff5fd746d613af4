// Package setting names what is wrong with a plugin-wide setting. The
// packages that check settings (execute, spec, submit, sidecar) speak of a
// setting by its canonical name, which `sparkplug serve` and `render`
// spell as a flag (--requeue-pending) and other front ends may spell
// their own way; nothing below cmd/ names a command-line flag.
package setting

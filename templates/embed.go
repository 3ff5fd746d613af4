package templates

import "embed"

//go:embed *.yaml
var FS embed.FS

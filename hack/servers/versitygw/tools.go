//go:build tools

// Package tools pins versitygw, the S3-compatible server the e2e tests of
// driver-log archiving store logs in. It is never compiled into sparkplug.
package tools

import (
	_ "github.com/versity/versitygw/cmd/versitygw"
)

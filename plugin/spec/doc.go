// Package spec is the `spark` body of a plugin step: the Go types that accept
// the Spark operator's SparkApplication v1beta2 `spec` field names, strict
// decoding that names the path of every unknown field, the operator's
// defaults, and validation that reports every problem at once with its field
// path and what would be valid.
//
// The rest of sparkplug only ever sees a body that went through Parse:
// decoded, defaulted and valid. Fields sparkplug does not honour yet are
// rejected by validation with a message that names them, never ignored.
package spec

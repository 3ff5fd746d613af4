// Package spec is the `spark` body of a plugin step: the Go types that accept
// the Spark operator's SparkApplication v1beta2 `spec` field names, strict
// decoding that names the path of every unknown field (Decode), the
// operator's defaults (SetDefaults), and validation that reports every
// problem at once with its field path and what would be valid (Validate).
//
// The rest of sparkplug only ever sees a body that went through Parse, or
// ParseWith under the plugin's own defaults (PluginDefaults: the serve
// flags a body's sparkplug block overrides, which it fills in): decoded,
// defaulted and valid. Fields sparkplug does not honour yet are listed
// once, in Unsupported, and rejected with a message that names them, never
// ignored.
//
// Files: types.go (the body), body.go (finding it in a template), parse.go,
// decode.go with fields.go (the JSON fields of a Go type) and suggest.go
// ("did you mean"), defaults.go, validate.go (the application),
// validate_pod.go (driver and executor), validate_meta.go (labels,
// annotations, names), sparkplug.go (the body's sparkplug block: launcher,
// pending timeout), plugin_defaults.go, monitoring.go, ui.go, ingress.go
// (IngressURL: the URL formats of the Ingresses the Spark operator makes),
// batchscheduler.go, sizes.go (ParseMemory, ParseMemoryLimit and SparkSize
// read the memory fields, which take both Spark sizes, 512m, and Kubernetes
// quantities, 1Gi), support.go (Unsupported), template.go (the pod
// template), images.go, client.go (client mode). The sparkConf values
// sparkplug reads (executor counts, cores, memory, dynamic allocation) are
// read as Spark reads them, by package confvalue; validate.go refuses what
// Spark would refuse or read otherwise, naming the key.
package spec

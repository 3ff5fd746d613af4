// Package redact is sparkplug's one set of rules for hiding secret values
// in what it shows: the spark-submit command line and environment it logs
// and `sparkplug render` prints, the spark.properties and pod templates
// render prints, and the values a node's message echoes. Sensitive judges
// a key (a conf key, an environment variable, a -D property); Value hides
// the secrets a value carries whatever its key (a URL's or a DSN's
// password, a bearer token, a sensitive -D property). It is pure.
package redact

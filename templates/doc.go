// Package templates holds the YAML skeletons of the objects sparkplug
// launches, embedded in the binary as FS.
//
// A skeleton carries only what is the same for every run: the driver
// container's name, its termination message policy, the bind-address
// environment variable Spark's entrypoint needs, restartPolicy Never, and the
// executor container's name in the executor pod template. plugin/objects decodes
// each file once at start-up into a typed corev1.Pod and builds every run's
// objects on a deep copy; user values are set on the typed objects, never
// substituted into the YAML.
//
// An operator may replace the skeletons by mounting a directory with files of
// the same names and handing it to objects.New as os.DirFS: anything added
// there, such as a default toleration or a log-shipping sidecar, appears on
// every driver or executor. plugin/objects rejects a skeleton that loses the
// container names or sets what a run must own (names, restartPolicy).
package templates

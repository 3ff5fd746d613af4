// Package spark holds the vocabulary of Spark on Kubernetes and of sparkplug's
// own bookkeeping in one place: label keys, container names, conf keys, file
// paths and the Spark application states; the one table of reserved labels
// and keys (reserved.go); WorkflowRef, the one reference to the Workflow a
// run belongs to; the plugin's name and the one rule for which templates
// are its steps (plugin.go).
//
// Every other package names these words through the constants here, so a
// reader can see at a glance which labels sparkplug writes and which ones it
// reads back, and a change to Spark's conventions is a change to one file.
// Nothing in this package has behaviour beyond string constants and tiny,
// pure helpers.
package spark

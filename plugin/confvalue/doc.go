// Package confvalue reads sparkConf values as Spark reads them, or refuses
// them, so that sparkplug and Spark never read one value two ways.
//
// Spark reads a typed conf entry (ConfigBuilder's intConf, booleanConf,
// doubleConf, bytesConf) by trimming it as Java's String.trim does (only
// characters up to U+0020, never U+00A0 or other Unicode spaces), then
// Integer.parseInt, Scala's toBoolean (true or false in any case),
// Double.parseDouble, or JavaUtils.byteStringAs (ASCII digits and a binary
// unit). Int, Bool, Double and Bytes do the same; where Spark's reading
// depends on something sparkplug cannot know (digits of other scripts,
// which the JVM's Unicode version decides) or Spark's own readers disagree
// (spark-submit's checks read some keys untrimmed), they refuse the value
// with an *Error naming the key and the fix. Problems applies them to the
// keys sparkplug reads (keys.go), for validation and for the builder.
//
// Standard library only: package spec, objects and decide all read through it.
package confvalue

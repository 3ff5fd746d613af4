package state

import (
	"strings"
	"testing"
)

func TestLastMeaningfulLine(t *testing.T) {
	tests := []struct {
		name, msg, want string
	}{
		{name: "empty", msg: "", want: ""},
		{name: "blank lines only", msg: "\n  \n\t\n", want: ""},
		{name: "plain last line", msg: "starting\nloading data\ndone with 3 rows\n\n", want: "done with 3 rows"},
		{name: "CRLF line ends", msg: "first\r\nsecond\r\n", want: "second"},
		{
			name: "Java uncaught exception wins over the later Caused by and log lines",
			msg:  javaTrace,
			want: "java.lang.IllegalArgumentException: bad input",
		},
		{
			name: "the uncaught exception wins over exceptions logged after it",
			msg:  javaTrace + "25/03/01 12:00:02 WARN Utils: java.io.IOException: Stream closed during shutdown\n",
			want: "java.lang.IllegalArgumentException: bad input",
		},
		{
			name: "Python traceback: the final exception line",
			msg:  pythonTrace,
			want: "ValueError: bad input: column 'id' is empty",
		},
		{
			name: "Python chained traceback: the last exception",
			msg: `Traceback (most recent call last):
  File "job.py", line 3, in <module>
    open("/data/in.csv")
FileNotFoundError: [Errno 2] No such file or directory: '/data/in.csv'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "job.py", line 5, in <module>
    raise RuntimeError("input missing")
RuntimeError: input missing
`,
			want: "RuntimeError: input missing",
		},
		{
			name: "PySpark AnalysisException",
			msg: `  File "/opt/spark/python/lib/pyspark.zip/pyspark/errors/exceptions/captured.py", line 185, in deco
    raise converted from None
pyspark.errors.exceptions.captured.AnalysisException: [PATH_NOT_FOUND] Path does not exist: s3a://bucket/in.
25/03/01 12:00:03 INFO SparkContext: Invoking stop() from shutdown hook`,
			want: "pyspark.errors.exceptions.captured.AnalysisException: [PATH_NOT_FOUND] Path does not exist: s3a://bucket/in.",
		},
		{
			name: "py4j Java error: the Java exception after the colon",
			msg: `py4j.protocol.Py4JJavaError: An error occurred while calling o42.csv.
: java.io.FileNotFoundException: /data/in.csv (No such file or directory)
	at java.base/java.io.FileInputStream.open0(Native Method)
	at java.base/java.io.FileInputStream.open(FileInputStream.java:219)`,
			want: "java.io.FileNotFoundException: /data/in.csv (No such file or directory)",
		},
		{
			name: "logged exception without an uncaught one: the top-level line, not the cause",
			msg: `25/03/01 ERROR Main: job failed
org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 failed 4 times
	at org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2672)
Caused by: java.lang.ArithmeticException: / by zero
	at com.example.Main$.$anonfun$main$1(Main.scala:20)
25/03/01 INFO ShutdownHookManager: Shutdown hook called`,
			want: "org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 failed 4 times",
		},
		{
			name: "only a Caused by line names an exception",
			msg:  "25/03/01 ERROR Main: job failed\nCaused by: java.net.UnknownHostException: metastore\n\tat java.net.InetAddress.getAllByName(InetAddress.java:1)\nexiting",
			want: "java.net.UnknownHostException: metastore",
		},
		{
			name: "argparse-style error line",
			msg:  "usage: job.py [-h] --date DATE\njob.py: error: the following arguments are required: --date\n",
			want: "job.py: error: the following arguments are required: --date",
		},
		{
			name: "JVM error",
			msg:  "Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space\n\tat java.util.Arrays.copyOf(Arrays.java:3332)\n",
			want: "java.lang.OutOfMemoryError: Java heap space",
		},
		{
			name: "stack frames naming exceptions never count",
			msg:  "something went wrong\n\tat org.example.ExceptionHandler.handle(ExceptionHandler.java:10)\n    raise Exception('x')",
			want: "something went wrong",
		},
		{
			name: "only stack frames left: the last one",
			msg:  "\tat org.apache.spark.rdd.RDD.iterator(RDD.scala:329)\n\tat org.apache.spark.scheduler.Task.run(Task.scala:141)\n",
			want: "at org.apache.spark.scheduler.Task.run(Task.scala:141)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LastMeaningfulLine(tt.msg); got != tt.want {
				t.Errorf("LastMeaningfulLine() =\n  %q\nwant\n  %q", got, tt.want)
			}
		})
	}
}

func TestLastMeaningfulLineIsBounded(t *testing.T) {
	long := "java.lang.IllegalStateException: " + strings.Repeat("é", 400)
	got := LastMeaningfulLine("x\n" + long + "\n")
	if n := len([]rune(got)); n != maxDetail {
		t.Fatalf("len = %d runes, want %d", n, maxDetail)
	}
	if !strings.HasPrefix(got, "java.lang.IllegalStateException: éé") || !strings.HasSuffix(got, "é...") {
		t.Errorf("got %q, want the line's start cut with ...", got)
	}
}

package main

import (
	"bytes"
	"context"
	"maps"
	"reflect"
	"testing"
	"time"
)

// The driver reads the command line sparkplug gives the driver container
// (the golden SparkPi's, with test arguments), with what Spark's
// entrypoint adds.
func TestParseDriverCommand(t *testing.T) {
	driver, _, _ := golden(t, "spark-pi")
	args := append([]string{"--conf", "spark.driver.bindAddress=10.0.0.1", "--deploy-mode", "client"}, driver.Spec.Containers[0].Args[1:]...)
	args = append(args, "--exit=3", "--sleep=1500ms", "--message=pi is 3", "--min-executors=1", "--oom", "--executor-oom")
	got, err := parseDriverCommand(args)
	if err != nil {
		t.Fatal(err)
	}
	want := driverCommand{
		propertiesFile: "/opt/spark/conf/spark.properties",
		conf:           map[string]string{"spark.driver.bindAddress": "10.0.0.1"},
		class:          "org.apache.spark.examples.SparkPi",
		resource:       "local:///opt/spark/examples/jars/spark-examples_2.12-3.5.1.jar",
		app:            appArgs{exit: 3, sleep: 1500 * time.Millisecond, message: "pi is 3", minExecutors: 1, oom: true, executorOOM: true, ignored: []string{"5000"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseDriverCommand =\n%+v, want\n%+v", got, want)
	}
}

func TestParseDriverCommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--properties-file", "p"},                     // no resource
		{"--class", "C", "r.jar"},                      // no properties file
		{"--properties-file"},                          // no value
		{"--properties-file", "p", "--conf", "x", "r"}, // --conf without =
		{"--properties-file=p", "r", "--exit=256"},     // not an exit code
		{"--properties-file=p", "r", "--sleep=soon"},   // not a duration
		{"--properties-file=p", "--verbose", "r", "--oom=yes"},
	} {
		if _, err := parseDriverCommand(args); err == nil {
			t.Errorf("parseDriverCommand(%q): no error", args)
		}
	}
	c, err := parseDriverCommand([]string{"--verbose", "--properties-file=p", "--conf=a=b=c", "spark-internal"})
	if err != nil || c.resource != "spark-internal" || !maps.Equal(c.conf, map[string]string{"a": "b=c"}) {
		t.Errorf("parseDriverCommand = %+v, %v", c, err)
	}
}

func TestDriverAddress(t *testing.T) {
	for url, want := range map[string]string{
		"spark://CoarseGrainedScheduler@app-driver-svc.ns.svc:7078": "app-driver-svc.ns.svc:7078",
		"spark://CoarseGrainedScheduler@[fd00::1]:7078":             "[fd00::1]:7078",
		"spark://CoarseGrainedScheduler@10.1.2.3:40000":             "10.1.2.3:40000",
		"":                        "",
		"http://x@host:1":         "",
		"spark://host:7078":       "",
		"spark://E@host":          "",
		"spark://E@host:0":        "",
		"spark://E@:7078":         "",
		"spark://E@host:notaport": "",
	} {
		got, err := driverAddress(url)
		if got != want || (err != nil) != (want == "") {
			t.Errorf("driverAddress(%q) = %q, %v; want %q", url, got, err, want)
		}
	}
}

func TestParseSparkDuration(t *testing.T) {
	for v, want := range map[string]time.Duration{"30s": 30 * time.Second, "30": 30 * time.Second, "500ms": 500 * time.Millisecond, "2min": 2 * time.Minute, "1h": time.Hour} {
		if got, err := parseSparkDuration(v); err != nil || got != want {
			t.Errorf("parseSparkDuration(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := parseSparkDuration("soon"); err == nil {
		t.Error("parseSparkDuration(soon): no error")
	}
}

func TestRegistrationRoundTrip(t *testing.T) {
	r := registration{execID: "2", appID: "spark-1", pod: "app-exec-2"}
	got, err := parseRegistration(r.String())
	if err != nil || got != r {
		t.Errorf("parseRegistration(%q) = %+v, %v", r.String(), got, err)
	}
	if _, err := parseRegistration("HELLO"); err == nil {
		t.Error("parseRegistration(HELLO): no error")
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"spark-submit"}, &out, &errOut); code != 2 || errOut.Len() == 0 {
		t.Errorf("run(spark-submit) = %d, %q", code, errOut.String())
	}
}

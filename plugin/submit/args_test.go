package submit

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

type optionCase struct {
	name string
	in   Input
	want []string
}

// runOption table-tests one option function. Every case's Spec defaults
// to an empty Scala body and Conf to an empty conf.
func runOption(t *testing.T, o option, cases []optionCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in
			if in.Spec == nil {
				in.Spec = &spec.SparkApplicationSpec{Type: spec.TypeScala}
			}
			if in.Conf == nil {
				in.Conf = map[string]string{}
			}
			got := o(&in)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func body(f func(s *spec.SparkApplicationSpec)) *spec.SparkApplicationSpec {
	s := &spec.SparkApplicationSpec{Type: spec.TypeScala}
	f(s)
	return s
}

func TestMasterOption(t *testing.T) {
	runOption(t, masterOption, []optionCase{
		{"rest config host", Input{Master: "https://10.96.0.1:443"}, []string{"--master", "k8s://https://10.96.0.1:443"}},
		{"no host: the in-cluster name", Input{}, []string{"--master", "k8s://https://kubernetes.default.svc"}},
		{"host without a scheme", Input{Master: "api.example.com:6443"}, []string{"--master", "k8s://https://api.example.com:6443"}},
		{"already k8s://", Input{Master: "k8s://https://api:6443/"}, []string{"--master", "k8s://https://api:6443"}},
	})
}

func TestDeployModeOption(t *testing.T) {
	runOption(t, deployModeOption, []optionCase{
		{"always cluster", Input{}, []string{"--deploy-mode", "cluster"}},
	})
}

func TestNameOption(t *testing.T) {
	runOption(t, nameOption, []optionCase{
		{"spark.app.name", Input{Conf: map[string]string{spark.ConfAppName: "Nightly ETL"}}, []string{"--name", "Nightly ETL"}},
		{"none", Input{}, nil},
	})
}

func TestClassOption(t *testing.T) {
	runOption(t, classOption, []optionCase{
		{"JVM main class", Input{Spec: body(func(s *spec.SparkApplicationSpec) { s.MainClass = ptr.To("com.example.Etl") })}, []string{"--class", "com.example.Etl"}},
		{"JVM without one", Input{}, nil},
		{"Python: spark-submit picks PythonRunner", Input{Spec: body(func(s *spec.SparkApplicationSpec) {
			s.Type, s.MainClass = spec.TypePython, ptr.To("ignored")
		})}, nil},
		{"R", Input{Spec: body(func(s *spec.SparkApplicationSpec) { s.Type = spec.TypeR })}, nil},
	})
}

func TestProxyUserOption(t *testing.T) {
	runOption(t, proxyUserOption, []optionCase{
		{"set", Input{Spec: body(func(s *spec.SparkApplicationSpec) { s.ProxyUser = ptr.To("etl") })}, []string{"--proxy-user", "etl"}},
		{"empty", Input{Spec: body(func(s *spec.SparkApplicationSpec) { s.ProxyUser = ptr.To("") })}, nil},
		{"unset", Input{}, nil},
	})
}

func TestConfOption(t *testing.T) {
	runOption(t, confOption, []optionCase{
		{"sorted, one --conf each, values as they are", Input{Conf: map[string]string{
			"spark.b": "x=y", "spark.a": "1", "spark.c": "with space",
		}}, []string{"--conf", "spark.a=1", "--conf", "spark.b=x=y", "--conf", "spark.c=with space"}},
		{"keys spark-submit sets itself or other options set are left out", Input{Conf: map[string]string{
			spark.ConfMaster: spark.DefaultMaster, spark.ConfSubmitDeployMode: "cluster", spark.ConfAppName: "n",
			spark.ConfAppID: "spark-1", spark.ConfDriverHost: "svc.ns.svc", spark.ConfSubmitInDriver: "true",
			spark.ConfExecutorPodTemplateFile: "/opt/spark/pod-template/pod-spec-template.yml", spark.ConfExecutorPodTemplateContName: "spark-kubernetes-executor",
			spark.ConfDriverPodTemplateFile: "/x", ConfWaitAppCompletion: "true", ConfRequestTimeout: "1",
			spark.ConfDriverPodName: "p-driver",
		}}, []string{"--conf", "spark.kubernetes.driver.pod.name=p-driver"}},
		{"spark.jars without the primary resource", Input{
			Spec: body(func(s *spec.SparkApplicationSpec) { s.MainApplicationFile = ptr.To("file:///app.jar") }),
			Conf: map[string]string{spark.ConfJars: "s3a://b/lib.jar,file:///app.jar"},
		}, []string{"--conf", "spark.jars=s3a://b/lib.jar"}},
		{"spark.jars with only the primary resource is left out", Input{
			Spec: body(func(s *spec.SparkApplicationSpec) { s.MainApplicationFile = ptr.To("file:///app.jar") }),
			Conf: map[string]string{spark.ConfJars: "file:///app.jar"},
		}, nil},
	})
}

func TestDriverMetadataOption(t *testing.T) {
	driver := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Labels: map[string]string{
			spark.LabelAppSelector: "spark-0123", spark.LabelRole: spark.RoleDriver, spark.LabelAppName: "n", spark.LabelVersion: "3.5.3",
			spark.LabelWorkflowUID: "uid-1", "team": "data", "queue": "root.etl",
		},
		Annotations: map[string]string{
			spark.AnnotationNodeID: "wf-1", "example.com/run": "etl spark-0123",
		},
	}}
	runOption(t, driverMetadataOption, []optionCase{
		{"the built driver's labels and annotations but Spark's own, sparkplug's last", Input{Driver: driver}, []string{
			"--conf", "spark.kubernetes.driver.label.queue=root.etl",
			"--conf", "spark.kubernetes.driver.label.team=data",
			"--conf", "spark.kubernetes.driver.annotation.example.com/run=etl spark-0123",
			"--conf", "spark.kubernetes.driver.label.sparkplug.io/workflow-uid=uid-1",
			"--conf", "spark.kubernetes.driver.annotation.sparkplug.io/node-id=wf-1",
		}},
		{"sparkplug's keys are passed even where the conf has them: the last --conf wins", Input{Driver: driver, Conf: map[string]string{
			"spark.kubernetes.driver.label.sparkplug.io/workflow-uid": "victim-uid",
			"spark.kubernetes.driver.annotation.sparkplug.io/node-id": "victim-node",
		}}, []string{
			"--conf", "spark.kubernetes.driver.label.queue=root.etl",
			"--conf", "spark.kubernetes.driver.label.team=data",
			"--conf", "spark.kubernetes.driver.annotation.example.com/run=etl spark-0123",
			"--conf", "spark.kubernetes.driver.label.sparkplug.io/workflow-uid=uid-1",
			"--conf", "spark.kubernetes.driver.annotation.sparkplug.io/node-id=wf-1",
		}},
		{"a key the conf has keeps the conf's value ({{APP_ID}} for Spark to fill)", Input{Driver: driver, Conf: map[string]string{
			"spark.kubernetes.driver.label.team":                 "data",
			"spark.kubernetes.driver.annotation.example.com/run": "etl {{APP_ID}}",
		}}, []string{
			"--conf", "spark.kubernetes.driver.label.queue=root.etl",
			"--conf", "spark.kubernetes.driver.label.sparkplug.io/workflow-uid=uid-1",
			"--conf", "spark.kubernetes.driver.annotation.sparkplug.io/node-id=wf-1",
		}},
		{"no driver", Input{}, nil},
	})
}

// The Spark operator's labels on the built driver are passed with
// sparkplug's own, last, so a value the conf has for them loses.
func TestDriverMetadataOptionOperatorLabels(t *testing.T) {
	driver := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
		spark.LabelAppSelector: "spark-0123", spark.LabelAppName: "etl",
		spark.LabelOperatorAppName: "etl", spark.LabelOperatorSubmissionID: "spark-0123",
		spark.LabelWorkflowUID: "uid-1", "team": "data",
	}}}
	want := []string{
		"--conf", "spark.kubernetes.driver.label.team=data",
		"--conf", "spark.kubernetes.driver.label.sparkoperator.k8s.io/app-name=etl",
		"--conf", "spark.kubernetes.driver.label.sparkoperator.k8s.io/submission-id=spark-0123",
		"--conf", "spark.kubernetes.driver.label.sparkplug.io/workflow-uid=uid-1",
	}
	runOption(t, driverMetadataOption, []optionCase{
		{"passed with sparkplug's", Input{Driver: driver}, want},
		{"passed last even where the conf has them", Input{Driver: driver, Conf: map[string]string{
			"spark.kubernetes.driver.label.sparkoperator.k8s.io/app-name":      "other",
			"spark.kubernetes.driver.label.sparkoperator.k8s.io/submission-id": "other",
		}}, want},
	})
}

func TestPodTemplateOption(t *testing.T) {
	runOption(t, podTemplateOption, []optionCase{
		{"both files", Input{DriverTemplateFile: "/tmp/d.yaml", ExecutorTemplateFile: "/tmp/e.yaml"}, []string{
			"--conf", "spark.kubernetes.driver.podTemplateFile=/tmp/d.yaml",
			"--conf", "spark.kubernetes.driver.podTemplateContainerName=spark-kubernetes-driver",
			"--conf", "spark.kubernetes.executor.podTemplateFile=/tmp/e.yaml",
			"--conf", "spark.kubernetes.executor.podTemplateContainerName=spark-kubernetes-executor",
		}},
		{"none written", Input{}, nil},
	})
}

func TestSubmissionOption(t *testing.T) {
	runOption(t, submissionOption, []optionCase{
		{"never waits for the application", Input{}, []string{"--conf", "spark.kubernetes.submission.waitAppCompletion=false"}},
		{"request timeout in milliseconds", Input{RequestTimeout: 45 * time.Second}, []string{
			"--conf", "spark.kubernetes.submission.waitAppCompletion=false",
			"--conf", "spark.kubernetes.submission.connectionTimeout=45000",
			"--conf", "spark.kubernetes.submission.requestTimeout=45000",
		}},
	})
}

func TestAuthOption(t *testing.T) {
	runOption(t, authOption, []optionCase{
		{"sorted files", Input{AuthConf: map[string]string{ConfAuthOAuthTokenFile: "/t", ConfAuthCACertFile: "/ca"}}, []string{
			"--conf", "spark.kubernetes.authenticate.submission.caCertFile=/ca",
			"--conf", "spark.kubernetes.authenticate.submission.oauthTokenFile=/t",
		}},
		{"none", Input{}, nil},
	})
}

func TestMainApplicationFileOption(t *testing.T) {
	runOption(t, mainApplicationFileOption, []optionCase{
		{"the file", Input{Spec: body(func(s *spec.SparkApplicationSpec) { s.MainApplicationFile = ptr.To("local:///a.jar") })}, []string{"local:///a.jar"}},
		{"JVM without one: spark-internal", Input{}, []string{"spark-internal"}},
		{"Python without one: nothing (validation requires it)", Input{Spec: body(func(s *spec.SparkApplicationSpec) { s.Type = spec.TypePython })}, nil},
	})
}

func TestArgumentsOption(t *testing.T) {
	runOption(t, argumentsOption, []optionCase{
		{"as they are, spaces and = included", Input{Spec: body(func(s *spec.SparkApplicationSpec) { s.Arguments = []string{"--date", "a b=c", ""} })}, []string{"--date", "a b=c", ""}},
		{"none", Input{}, nil},
	})
}

// The options run in the Spark operator's order; the primary resource and
// the application's arguments come last, where spark-submit wants them.
func TestOptionsOrder(t *testing.T) {
	var names []string
	for _, o := range options {
		name := runtime.FuncForPC(reflect.ValueOf(o).Pointer()).Name()
		names = append(names, name[strings.LastIndex(name, ".")+1:])
	}
	want := []string{"masterOption", "deployModeOption", "nameOption", "classOption", "proxyUserOption", "confOption",
		"driverMetadataOption", "podTemplateOption", "submissionOption", "authOption", "mainApplicationFileOption", "argumentsOption"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("options %v, want %v", names, want)
	}
	in := &Input{Spec: body(func(s *spec.SparkApplicationSpec) {
		s.MainApplicationFile, s.Arguments = ptr.To("local:///a.jar"), []string{"--conf", "x=y"}
	}), Conf: map[string]string{"spark.a": "1"}}
	args := Args(in)
	if got := args[len(args)-3:]; !reflect.DeepEqual(got, []string{"local:///a.jar", "--conf", "x=y"}) {
		t.Fatalf("argv ends %q: an application argument that looks like an option must follow the resource", got)
	}
}

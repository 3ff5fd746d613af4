package objects

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
	"github.com/sparkplug-io/sparkplug/plugin/spec"
)

func ingressesOf(objs *Set) []*networkingv1.Ingress {
	var out []*networkingv1.Ingress
	for _, o := range objs.Extra {
		if ing, ok := o.(*networkingv1.Ingress); ok {
			out = append(out, ing)
		}
	}
	return out
}

// Every Ingress and driverIngressOptions Service is owned by the driver
// once it exists, and carries sparkplug's labels, by which the workflow's
// cache finds it.
func TestIngressObjectsAreCompanions(t *testing.T) {
	for _, in := range []string{"ui-ingress", "client-mode-ingress", "driver-ingress"} {
		t.Run(in, func(t *testing.T) {
			r := goldenRuns["default"]
			objs, err := newBuilder(t).Build(readBody(t, "testdata/"+in+".input.yaml"), r)
			if err != nil {
				t.Fatal(err)
			}
			if len(ingressesOf(objs)) != 1 {
				t.Fatalf("%d Ingresses, want 1", len(ingressesOf(objs)))
			}
			created := objs.Driver.DeepCopy()
			created.UID = "driver-uid"
			OwnedBy(objs, created)
			for _, o := range objs.Extra {
				if refs := o.GetOwnerReferences(); len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != "driver-uid" || !ptr.Deref(refs[0].Controller, false) {
					t.Errorf("%T %s owners %+v, want the driver pod", o, o.GetName(), refs)
				}
				if o.GetLabels()[spark.LabelWorkflowUID] != r.Workflow.UID || o.GetLabels()[spark.LabelAppSelector] != objs.Driver.Labels[spark.LabelAppSelector] {
					t.Errorf("%T %s labels %v, want the workflow's uid and the application id", o, o.GetName(), o.GetLabels())
				}
				if !strings.HasPrefix(o.GetName(), NamesFor(r).Prefix+"-") {
					t.Errorf("%T %s is not named after the run", o, o.GetName())
				}
			}
		})
	}
}

// The UI Ingress leads to the UI Service's port; a driverIngressOptions
// Ingress to its entry's Service, which forwards to the same port of the
// driver.
func TestIngressBackends(t *testing.T) {
	objs, err := newBuilder(t).Build(readBody(t, "testdata/ui-ingress.input.yaml"), goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	n := NamesFor(goldenRuns["default"])
	ing := ingressesOf(objs)[0]
	b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
	if ing.Name != n.UIIngress || b.Name != n.UIService || b.Port.Number != 80 {
		t.Errorf("UI Ingress %s to %s:%d, want %s to %s:80", ing.Name, b.Name, b.Port.Number, n.UIIngress, n.UIService)
	}

	objs, err = newBuilder(t).Build(readBody(t, "testdata/driver-ingress.input.yaml"), goldenRuns["default"])
	if err != nil {
		t.Fatal(err)
	}
	ing = ingressesOf(objs)[0]
	b = ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service
	if ing.Name != n.DriverIngress(4041) || b.Name != n.DriverIngressService(4041) || b.Port.Number != 4041 {
		t.Errorf("driver Ingress %s to %s:%d, want %s to %s:4041", ing.Name, b.Name, b.Port.Number, n.DriverIngress(4041), n.DriverIngressService(4041))
	}
	for _, o := range objs.Extra {
		if svc, ok := o.(*corev1.Service); ok && svc.Spec.Ports[0].TargetPort.IntValue() != int(svc.Spec.Ports[0].Port) {
			t.Errorf("Service %s forwards %d to %s, want the same port", svc.Name, svc.Spec.Ports[0].Port, svc.Spec.Ports[0].TargetPort.String())
		}
	}
}

// spark.ui.proxyBase is the path of the UI's Ingress when it has one
// other than the root, unless sparkConf says otherwise; the operator sets
// it only when it is unset too.
func TestUIProxyBase(t *testing.T) {
	r := goldenRuns["default"]
	n := NamesFor(r)
	tests := []struct {
		name, format         string
		sparkConf            map[string]string
		proxyBase, redirect  string
		withoutUIServiceMode bool
	}{
		{name: "path", format: "spark.example.com/{{$appNamespace}}/{{$appName}}", proxyBase: "/data/" + n.Prefix, redirect: "/"},
		{name: "path with the application id", format: "/spark/{{$appId}}", proxyBase: "/spark/" + n.AppID, redirect: "/"},
		{name: "host only", format: "{{$appName}}.spark.example.com"},
		{name: "the root", format: "spark.example.com/"},
		{name: "the body's own", format: "spark.example.com/{{$appName}}", sparkConf: map[string]string{spark.ConfUIProxyBase: "/mine", spark.ConfUIProxyRedirectURI: "https://proxy"}, proxyBase: "/mine", redirect: "https://proxy"},
		{name: "no UI Service", format: "spark.example.com/{{$appName}}", withoutUIServiceMode: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := body(t)
			if !tt.withoutUIServiceMode {
				s.SparkUIOptions = &spec.SparkUIConfiguration{}
			}
			s.SparkConf = tt.sparkConf
			s.Sparkplug = &spec.SparkplugOptions{UIIngress: &spec.UIIngressOptions{URLFormat: ptr.To(tt.format)}}
			c := Properties(s, r)
			if c[spark.ConfUIProxyBase] != tt.proxyBase || c[spark.ConfUIProxyRedirectURI] != tt.redirect {
				t.Errorf("proxyBase %q proxyRedirectUri %q, want %q %q", c[spark.ConfUIProxyBase], c[spark.ConfUIProxyRedirectURI], tt.proxyBase, tt.redirect)
			}
		})
	}
}

// A URL the run's own names make invalid fails the build, naming it.
func TestIngressURLOfTheRunIsChecked(t *testing.T) {
	s := body(t)
	s.SparkUIOptions = &spec.SparkUIConfiguration{}
	s.Sparkplug = &spec.SparkplugOptions{UIIngress: &spec.UIIngressOptions{URLFormat: ptr.To("{{$appName}}-{{$appNamespace}}.example.com")}}
	r := goldenRuns["default"]
	r.Workflow.Namespace = strings.Repeat("n", 40)
	_, err := newBuilder(t).Build(s, r)
	if err == nil || !strings.Contains(err.Error(), "is longer than 63 characters") || !strings.Contains(err.Error(), "UI ingress URL") {
		t.Fatalf("Build: %v; want the host's label too long", err)
	}
}

func TestSparkUIURL(t *testing.T) {
	driver := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etl-0a1b2c3d-driver", Namespace: "data",
		Labels: map[string]string{spark.LabelAppSelector: "spark-00112233445566778899aabbccddeeff"}}}
	withIngress := func(format string, ui *spec.SparkUIConfiguration) *spec.SparkApplicationSpec {
		return &spec.SparkApplicationSpec{Mode: spec.ModeCluster, SparkUIOptions: ui,
			Sparkplug: &spec.SparkplugOptions{UIIngress: &spec.UIIngressOptions{URLFormat: ptr.To(format)}}}
	}
	tests := []struct {
		name string
		s    *spec.SparkApplicationSpec
		want string
	}{
		{"the driver Service", &spec.SparkApplicationSpec{Mode: spec.ModeCluster}, "http://etl-0a1b2c3d-driver-svc.data.svc:4040"},
		{"the UI Service", &spec.SparkApplicationSpec{Mode: spec.ModeCluster, SparkUIOptions: &spec.SparkUIConfiguration{ServicePort: ptr.To[int32](80)}}, "http://etl-0a1b2c3d-ui-svc.data.svc:80"},
		{"the client-mode UI Service", &spec.SparkApplicationSpec{Mode: spec.ModeClient}, "http://etl-0a1b2c3d-ui-svc.data.svc:4040"},
		{"a host", withIngress("{{$appName}}.spark.example.com", &spec.SparkUIConfiguration{}), "http://etl-0a1b2c3d.spark.example.com"},
		{"a host with TLS", withIngress("{{$appName}}.spark.example.com", &spec.SparkUIConfiguration{IngressTLS: []networkingv1.IngressTLS{{SecretName: "tls"}}}), "https://etl-0a1b2c3d.spark.example.com"},
		{"the scheme written", withIngress("http://spark.example.com/{{$appNamespace}}/{{$appId}}", &spec.SparkUIConfiguration{IngressTLS: []networkingv1.IngressTLS{{SecretName: "tls"}}}), "http://spark.example.com/data/spark-00112233445566778899aabbccddeeff"},
		{"no host", withIngress("/spark/{{$appName}}", &spec.SparkUIConfiguration{}), "/spark/etl-0a1b2c3d"},
		{"a format but no UI Service", withIngress("{{$appName}}.spark.example.com", nil), "http://etl-0a1b2c3d-driver-svc.data.svc:4040"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SparkUIURL(tt.s, driver); got != tt.want {
				t.Errorf("SparkUIURL = %q, want %q", got, tt.want)
			}
		})
	}
}

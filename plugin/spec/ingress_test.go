package spec

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
)

func TestIngressURL(t *testing.T) {
	v := URLValues{AppName: "etl-0a1b2c3d", AppNamespace: "data", AppID: "spark-00112233445566778899aabbccddeeff"}
	tests := []struct {
		format                   string
		scheme, host, path, fail string
	}{
		// The operator's own examples.
		{format: "{{$appName}}.ingress.cluster.com", host: "etl-0a1b2c3d.ingress.cluster.com"},
		{format: "ingress.cluster.com/{{$appNamespace}}/{{$appName}}", host: "ingress.cluster.com", path: "/data/etl-0a1b2c3d"},
		{format: "{{ $appName }}.{{$appNamespace}}.example.com", host: "etl-0a1b2c3d.data.example.com"},
		{format: "https://spark.example.com/ui/{{$appId}}", scheme: "https", host: "spark.example.com", path: "/ui/spark-00112233445566778899aabbccddeeff"},
		{format: "http://spark.example.com/", scheme: "http", host: "spark.example.com", path: "/"},
		{format: "/spark/{{$appName}}", path: "/spark/etl-0a1b2c3d"},

		{format: "{{$appname}}.example.com", fail: "unknown placeholder {{$appname}}: the placeholders are {{$appName}}, {{$appNamespace}} and {{$appId}}"},
		{format: "{{workflow.name}}.example.com", fail: "unknown placeholder {{workflow.name}}"},
		{format: "{{$appName.example.com", fail: "has an unclosed {{ or a stray }}"},
		{format: "  ", fail: "is empty"},
		{format: "spark example.com", fail: "must not contain spaces"},
		{format: "ftp://{{$appName}}.example.com", fail: `scheme "ftp": write http://, https:// or no scheme`},
		{format: "{{$appName}}.example.com:8080", fail: `host "etl-0a1b2c3d.example.com:8080" has a port`},
		{format: "user:pw@example.com/x", fail: "must not hold a user or password"},
		{format: "example.com/x?a=b", fail: "must not hold a query or a fragment"},
		{format: "example.com/x#top", fail: "must not hold a query or a fragment"},
		{format: "10.0.0.1/{{$appName}}", fail: `host "10.0.0.1" is an IP address`},
		{format: "*.example.com", fail: "is a wildcard"},
		{format: "Spark.Example.com/{{$appName}}", fail: `host "Spark.Example.com": a lowercase RFC 1123 subdomain`},
		{format: "{{$appName}}-" + strings.Repeat("x", 60) + ".example.com", fail: "is longer than 63 characters"},
		{format: "example.com/{{$appName}}/", fail: "ends in '/'"},
		{format: "example.com/a//{{$appName}}", fail: "has an empty segment (//)"},
		{format: "example.com/a/../{{$appName}}", fail: `has a ".." segment`},
		{format: "example.com/a(b)/{{$appName}}", fail: "a path may hold letters, digits"},
		{format: "example.com/a%20b", fail: "a path may hold letters, digits"},
		{format: "http://", fail: "names neither a host nor a path"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			u, err := IngressURL(tt.format, v)
			if tt.fail != "" {
				if err == nil || !strings.Contains(err.Error(), tt.fail) {
					t.Fatalf("IngressURL(%q) = %v, %v; want error %q", tt.format, u, err, tt.fail)
				}
				return
			}
			if err != nil {
				t.Fatalf("IngressURL(%q): %v", tt.format, err)
			}
			if u.Scheme != tt.scheme || u.Host != tt.host || u.Path != tt.path {
				t.Errorf("IngressURL(%q) = scheme %q host %q path %q; want %q %q %q", tt.format, u.Scheme, u.Host, u.Path, tt.scheme, tt.host, tt.path)
			}
		})
	}
}

func TestValidateIngressFields(t *testing.T) {
	type spec = SparkApplicationSpec
	tls := []networkingv1.IngressTLS{{Hosts: []string{"*.spark.example.com"}, SecretName: "spark-tls"}}
	tests := []struct {
		name   string
		mutate func(s *spec)
		want   []wantErr
	}{
		{"UI ingress fields are valid", func(s *spec) {
			s.SparkUIOptions = &SparkUIConfiguration{IngressAnnotations: map[string]string{"cert-manager.io/cluster-issuer": "le"}, IngressTLS: tls}
			s.Sparkplug = &SparkplugOptions{UIIngress: &UIIngressOptions{URLFormat: ptr("{{$appName}}.spark.example.com"), IngressClassName: ptr("nginx")}}
		}, nil},
		{"UI ingress field problems", func(s *spec) {
			s.SparkUIOptions = &SparkUIConfiguration{
				IngressAnnotations: map[string]string{"bad key!": "x"},
				IngressTLS:         []networkingv1.IngressTLS{{Hosts: []string{"Spark.example.com"}, SecretName: "Spark_TLS"}},
			}
			s.Sparkplug = &SparkplugOptions{UIIngress: &UIIngressOptions{URLFormat: ptr("{{$app}}.example.com"), IngressClassName: ptr("Nginx")}}
		}, []wantErr{
			{"spark.sparkplug.uiIngress.urlFormat", `Invalid value: "{{$app}}.example.com": unknown placeholder {{$app}}`},
			{"spark.sparkplug.uiIngress.ingressClassName", "is not an IngressClass name"},
			{"spark.sparkUIOptions.ingressAnnotations[bad key!]", "is not a valid annotation key"},
			{"spark.sparkUIOptions.ingressTLS[0].hosts[0]", "is not a host name"},
			{"spark.sparkUIOptions.ingressTLS[0].secretName", "is not a Secret name"},
		}},
		{"driver ingress is valid", func(s *spec) {
			s.DriverIngressOptions = []DriverIngressConfiguration{
				{ServicePort: ptr[int32](4041), ServicePortName: ptr("history"), IngressURLFormat: "{{$appName}}-4041.example.com/x", IngressTLS: tls},
				{ServicePort: ptr[int32](15002), ServiceType: ptr(corev1.ServiceTypeNodePort)},
			}
		}, nil},
		{"driver ingress problems", func(s *spec) {
			s.DriverIngressOptions = []DriverIngressConfiguration{
				{ServicePortName: ptr("Web"), ServiceType: ptr(corev1.ServiceTypeExternalName)},
				{ServicePort: ptr[int32](4041), IngressAnnotations: map[string]string{"a": "b"}},
				{ServicePort: ptr[int32](4041), IngressURLFormat: "example.com/{{$appName}}", ServiceLabels: map[string]string{"spark-role": "x"},
					IngressAnnotations: map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"}},
				{ServicePort: ptr[int32](70000), IngressURLFormat: "example.com:80"},
			}
		}, []wantErr{
			{"spark.driverIngressOptions[0].servicePort", "Required value: give the driver's port to expose"},
			{"spark.driverIngressOptions[0].servicePortName", "is not a Service port name"},
			{"spark.driverIngressOptions[0].serviceType", `Unsupported value: "ExternalName"`},
			{"spark.driverIngressOptions[1].ingressURLFormat", "Required value: ingressAnnotations and ingressTLS shape the entry's Ingress, which it gets only with an ingressURLFormat"},
			{"spark.driverIngressOptions[2].servicePort", "entry 1 exposes it already"},
			{"spark.driverIngressOptions[2].serviceLabels[spark-role]", "Forbidden"},
			{"spark.driverIngressOptions[2].ingressAnnotations[nginx.ingress.kubernetes.io/rewrite-target]", "Forbidden: sparkplug sets it to /$2, as the Spark operator does"},
			{"spark.driverIngressOptions[3].servicePort", "Invalid value: 70000"},
			{"spark.driverIngressOptions[3].ingressURLFormat", "has a port"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			tt.mutate(s)
			checkErrs(t, Validate(s), tt.want)
		})
	}
}

// What needs the plugin's defaults to be judged.
func TestValidateWithDefaults(t *testing.T) {
	type spec = SparkApplicationSpec
	flags := PluginDefaults{IngressURLFormat: "{{$appName}}.spark.example.com", IngressClassName: "nginx"}
	withPath := PluginDefaults{IngressURLFormat: "spark.example.com/{{$appNamespace}}/{{$appName}}"}
	ui := func(s *spec) *SparkUIConfiguration {
		s.SparkUIOptions = &SparkUIConfiguration{}
		return s.SparkUIOptions
	}
	body := func(s *spec) *UIIngressOptions {
		s.Sparkplug = &SparkplugOptions{UIIngress: &UIIngressOptions{}}
		return s.Sparkplug.UIIngress
	}
	tests := []struct {
		name     string
		defaults PluginDefaults
		mutate   func(s *spec)
		want     []wantErr
	}{
		{"no ingress at all", PluginDefaults{}, func(s *spec) {}, nil},
		{"UI annotations with the plugin's format", flags, func(s *spec) {
			ui(s).IngressAnnotations = map[string]string{"a": "b"}
		}, nil},
		{"UI annotations and TLS without any format", PluginDefaults{}, func(s *spec) {
			o := ui(s)
			o.IngressAnnotations = map[string]string{"a": "b"}
			o.IngressTLS = []networkingv1.IngressTLS{{Hosts: []string{"x.example.com"}}}
		}, []wantErr{
			{"spark.sparkUIOptions.ingressAnnotations", "Required value: shapes the Spark UI's Ingress, which a step gets only with a URL format, and the plugin has no --ingress-url-format: set spark.sparkplug.uiIngress.urlFormat (e.g. {{$appName}}.spark.example.com), or remove it"},
			{"spark.sparkUIOptions.ingressTLS", "Required value"},
		}},
		{"UI annotations with the plugin's format turned off", flags, func(s *spec) {
			ui(s).IngressAnnotations = map[string]string{"a": "b"}
			body(s).URLFormat = ptr("")
		}, []wantErr{{"spark.sparkUIOptions.ingressAnnotations", "and spark.sparkplug.uiIngress.urlFormat is empty"}}},
		{"the body's format without a UI Service", PluginDefaults{}, func(s *spec) {
			body(s).URLFormat = ptr("{{$appName}}.example.com")
		}, []wantErr{{"spark.sparkUIOptions", "Required value: spark.sparkplug.uiIngress.urlFormat asks for an Ingress to the Spark UI's Service, which cluster mode makes only with sparkUIOptions"}}},
		{"the body's format in client mode", PluginDefaults{}, func(s *spec) {
			s.Mode = ModeClient
			body(s).URLFormat = ptr("example.com/{{$appName}}")
		}, nil},
		{"the plugin's format without a UI Service makes no Ingress", flags, func(s *spec) {}, nil},
		{"a class with no Ingress", PluginDefaults{}, func(s *spec) {
			body(s).IngressClassName = ptr("nginx")
		}, []wantErr{{"spark.sparkplug.uiIngress.ingressClassName", "the step makes no Ingress"}}},
		{"a class for a driver Ingress", PluginDefaults{}, func(s *spec) {
			body(s).IngressClassName = ptr("nginx")
			s.DriverIngressOptions = []DriverIngressConfiguration{{ServicePort: ptr[int32](4041), IngressURLFormat: "x.example.com"}}
		}, nil},
		{"another class in the class annotation", flags, func(s *spec) {
			ui(s).IngressAnnotations = map[string]string{"kubernetes.io/ingress.class": "traefik"}
			s.DriverIngressOptions = []DriverIngressConfiguration{{ServicePort: ptr[int32](4041), IngressURLFormat: "x.example.com",
				IngressAnnotations: map[string]string{"kubernetes.io/ingress.class": "traefik"}}}
		}, []wantErr{
			{"spark.sparkUIOptions.ingressAnnotations[kubernetes.io/ingress.class]", `Invalid value: "traefik": the API server refuses an Ingress whose class annotation differs from its spec.ingressClassName, which the plugin's --ingress-class-name sets to nginx`},
			{"spark.driverIngressOptions[0].ingressAnnotations[kubernetes.io/ingress.class]", "Invalid value"},
		}},
		{"the same class in the class annotation", flags, func(s *spec) {
			ui(s).IngressAnnotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
		}, nil},
		{"the class annotation with the class turned off", flags, func(s *spec) {
			ui(s).IngressAnnotations = map[string]string{"kubernetes.io/ingress.class": "traefik"}
			body(s).IngressClassName = ptr("")
		}, nil},
		{"rewrite-target with a path", withPath, func(s *spec) {
			ui(s).IngressAnnotations = map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"}
		}, []wantErr{{"spark.sparkUIOptions.ingressAnnotations[nginx.ingress.kubernetes.io/rewrite-target]", "Forbidden: sparkplug sets it"}}},
		{"rewrite-target without a path", flags, func(s *spec) {
			ui(s).IngressAnnotations = map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"}
		}, nil},
		{"appId with the body's spark-submit", PluginDefaults{IngressURLFormat: "x.example.com/{{$appId}}"}, func(s *spec) {
			ui(s)
			s.Sparkplug = &SparkplugOptions{Launcher: ptr(LauncherSparkSubmit)}
			s.DriverIngressOptions = []DriverIngressConfiguration{{ServicePort: ptr[int32](4041), IngressURLFormat: "{{$appId}}.example.com"}}
		}, []wantErr{
			{"spark.sparkplug.launcher", `the plugin's --ingress-url-format "x.example.com/{{$appId}}" uses {{$appId}}, which the spark-submit launcher cannot honour`},
			{"spark.driverIngressOptions[0].ingressURLFormat", "uses {{$appId}}"},
		}},
		{"appId with the plugin's spark-submit", PluginDefaults{Launcher: LauncherSparkSubmit}, func(s *spec) {
			ui(s)
			body(s).URLFormat = ptr("{{$appId}}.example.com")
		}, []wantErr{{"spark.sparkplug.uiIngress.urlFormat", "spark-submit chooses the application id itself"}}},
		{"appId in client mode, which spark-submit never launches", PluginDefaults{Launcher: LauncherSparkSubmit}, func(s *spec) {
			s.Mode = ModeClient
			body(s).URLFormat = ptr("{{$appId}}.example.com")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			tt.mutate(s)
			errs := Validate(s)
			checkErrs(t, append(errs, validateWithDefaults(s, tt.defaults)...), tt.want)
		})
	}
}

const ingressBody = `{"type":"Scala","image":"spark:3.5.3","mainClass":"C","mainApplicationFile":"local:///a.jar","sparkUIOptions":{}`

// ParseWith fills what the body leaves unset with the plugin's defaults;
// the body's own values, the empty string included, win.
func TestParseWithFillsThePluginsDefaults(t *testing.T) {
	d := PluginDefaults{IngressURLFormat: "{{$appName}}.spark.example.com", IngressClassName: "nginx"}
	tests := []struct {
		name, body, format, class string
		ingress                   bool
	}{
		{"defaults", ingressBody + `}`, d.IngressURLFormat, "nginx", true},
		{"the body's format", ingressBody + `,"sparkplug":{"uiIngress":{"urlFormat":"example.com/{{$appName}}"}}}`, "example.com/{{$appName}}", "nginx", true},
		{"turned off for the step", ingressBody + `,"sparkplug":{"uiIngress":{"urlFormat":"","ingressClassName":""}}}`, "", "", false},
		{"no UI Service", strings.Replace(ingressBody, `,"sparkUIOptions":{}`, "", 1) + `}`, d.IngressURLFormat, "nginx", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseWith([]byte(tt.body), d)
			if err != nil {
				t.Fatal(err)
			}
			if s.UIIngressURLFormat() != tt.format || s.IngressClassName() != tt.class || s.HasUIIngress() != tt.ingress {
				t.Errorf("format %q class %q ingress %v; want %q %q %v", s.UIIngressURLFormat(), s.IngressClassName(), s.HasUIIngress(), tt.format, tt.class, tt.ingress)
			}
		})
	}
	s, err := Parse([]byte(ingressBody + `}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Sparkplug != nil || s.HasUIIngress() {
		t.Errorf("Parse without defaults filled %+v", s.Sparkplug)
	}
}

func TestParseWithReportsIngressFieldsWithoutAFormat(t *testing.T) {
	_, err := Parse([]byte(ingressBody[:len(ingressBody)-len(`{}`)] + `{"ingressAnnotations":{"a":"b"}}}`))
	var invalid *InvalidError
	if !errors.As(err, &invalid) {
		t.Fatalf("err = %v, want *InvalidError", err)
	}
	checkErrs(t, invalid.Errs, []wantErr{{"spark.sparkUIOptions.ingressAnnotations", "the plugin has no --ingress-url-format"}})
}

func TestPluginDefaultsValidate(t *testing.T) {
	tests := []struct {
		d    PluginDefaults
		want string
	}{
		{PluginDefaults{}, ""},
		{PluginDefaults{IngressURLFormat: "spark.example.com/{{$appNamespace}}/{{$appName}}", IngressClassName: "nginx"}, ""},
		{PluginDefaults{IngressURLFormat: "{{$appId}}.example.com"}, ""},
		{PluginDefaults{IngressURLFormat: "{{$name}}.example.com"}, `ingress-url-format: "{{$name}}.example.com": unknown placeholder {{$name}}`},
		{PluginDefaults{IngressURLFormat: "{{$appId}}.example.com", Launcher: LauncherSparkSubmit}, `ingress-url-format: "{{$appId}}.example.com": uses {{$appId}}, which the spark-submit launcher cannot honour`},
		{PluginDefaults{IngressClassName: "Nginx"}, `ingress-class-name: "Nginx": is not an IngressClass name`},
	}
	for _, tt := range tests {
		err := tt.d.Validate()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.d, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%+v: error %v, want %q", tt.d, err, tt.want)
		}
	}
}

package spec

import "testing"

// What only client mode asks of a body; each case is also checked in
// cluster mode, where it is valid.
func TestValidateClientMode(t *testing.T) {
	type spec = SparkApplicationSpec
	tests := []struct {
		name   string
		mutate func(s *spec)
		want   []wantErr
	}{
		{"SparkPi", func(*spec) {}, nil},
		{"bind address", func(s *spec) { s.SparkConf = map[string]string{"spark.driver.bindAddress": "0.0.0.0"} },
			[]wantErr{{"spark.sparkConf[spark.driver.bindAddress]", "Forbidden: in client mode sparkplug passes it to spark-submit as the driver pod's IP"}}},
		{"other driver keys are the user's", func(s *spec) {
			s.SparkConf = map[string]string{"spark.driver.port": "7100", "spark.ui.proxyBase": "/spark/pi"}
		}, nil},
		{"Python from a .py file", func(s *spec) {
			s.Type, s.MainClass, s.MainApplicationFile = TypePython, nil, ptr("local:///opt/app/main.py")
		}, nil},
		{"Python from another file", func(s *spec) {
			s.Type, s.MainClass, s.MainApplicationFile = TypePython, nil, ptr("s3a://bucket/app.zip")
		},
			[]wantErr{{"spark.mainApplicationFile", `Invalid value: "s3a://bucket/app.zip": in client mode spark-submit runs a Python application only from a file ending in .py`}}},
		{"R from a .R file", func(s *spec) { s.Type, s.MainClass, s.MainApplicationFile = TypeR, nil, ptr("local:///opt/app/job.R") }, nil},
		{"R from a .r file", func(s *spec) { s.Type, s.MainClass, s.MainApplicationFile = TypeR, nil, ptr("local:///opt/app/job.r") }, nil},
		{"R from another file", func(s *spec) {
			s.Type, s.MainClass, s.MainApplicationFile = TypeR, nil, ptr("local:///opt/app/job.txt")
		},
			[]wantErr{{"spark.mainApplicationFile", "a R application only from a file ending in .R or .r"}}},
		{"a jar needs no extension", func(s *spec) { s.MainApplicationFile = ptr("https://repo.example.com/app") }, nil},
		{"a missing file is reported once", func(s *spec) { s.Type, s.MainClass, s.MainApplicationFile = TypePython, nil, nil },
			[]wantErr{{"spark.mainApplicationFile", "Required value"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validSpec()
			s.Mode = ModeClient
			tt.mutate(s)
			checkErrs(t, Validate(s), tt.want)

			s = validSpec()
			tt.mutate(s)
			if s.MainApplicationFile == nil {
				return
			}
			checkErrs(t, Validate(s), nil)
		})
	}
}

func TestParseAcceptsAClientModeBody(t *testing.T) {
	s, err := Parse([]byte(`{"type":"Scala","mode":"client","image":"spark:3.5.3","mainClass":"org.apache.spark.examples.SparkPi","mainApplicationFile":"local:///opt/spark/examples/jars/spark-examples.jar"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Mode != ModeClient {
		t.Errorf("mode %q, want client", s.Mode)
	}
}

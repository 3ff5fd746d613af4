package convert

import (
	"bytes"
	"encoding/json"

	"gopkg.in/yaml.v3"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// withAppName is body with sparkConf's spark.app.name set to name, the
// SparkApplication's: the operator runs spark-submit --name <its name>,
// which wins over sparkConf, so the application's name (the Spark UI's,
// the History Server's, the driver's and executors' spark-app-name and
// sparkoperator.k8s.io/app-name labels) stays what it was. A body that
// is not an object is left as it is (sparkBody reported it).
func withAppName(body json.RawMessage, name string, f *findings) json.RawMessage {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return body
	}
	conf, ok := m["sparkConf"].(map[string]any)
	if !ok {
		if m["sparkConf"] != nil {
			return body // not an object: sparkBody reported it
		}
		conf = map[string]any{}
		m["sparkConf"] = conf
	}
	if v, set := conf[spark.ConfAppName]; set && v != name {
		f.add("spec.sparkConf", "%s %v, which the operator's spark-submit --name %q overrode; set to %q, as the operator ran it",
			spark.ConfAppName, v, name, name)
	}
	conf[spark.ConfAppName] = name
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// setSparkConf sets key to value in body's sparkConf mapping, adding the
// key (and sparkConf) at its end when missing. A sparkConf that is not a
// mapping is left as it is.
func setSparkConf(body *yaml.Node, key, value string) {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	var conf *yaml.Node
	for i := 0; i+1 < len(body.Content); i += 2 {
		if body.Content[i].Value == "sparkConf" {
			conf = body.Content[i+1]
		}
	}
	if conf == nil {
		conf = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		body.Content = append(body.Content, str("sparkConf"), conf)
	}
	if conf.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(conf.Content); i += 2 {
		if conf.Content[i].Value == key {
			conf.Content[i+1] = str(value)
			return
		}
	}
	conf.Content = append(conf.Content, str(key), str(value))
}

package spec

import (
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

// PluginName is the key of the spark body in a template's plugin value:
// plugin: {spark: ...}. It is also the plugin's name in plugin.yaml.
const PluginName = spark.PluginName

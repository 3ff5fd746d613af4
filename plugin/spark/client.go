package spark

// Client mode, the hand-made way: the driver pod runs spark-submit
// --deploy-mode client itself, its conf directory holding
// spark-defaults.conf, spark-env.sh and the executor pod template, and the
// executors reach it through the headless driver Service.
const (
	DeployModeClient = "client"

	// ClientSparkSubmit is spark-submit in Spark's images (SPARK_HOME is
	// /opt/spark). A container argument that is neither "driver" nor
	// "executor" is run as it is by the images' entrypoint.
	ClientSparkSubmit = "/opt/spark/bin/spark-submit"
	// ClientDefaultsFile is the effective Spark conf in ConfDir, the file
	// spark-submit reads through --properties-file.
	ClientDefaultsFile = "spark-defaults.conf"
	// ClientEnvFile is the environment script in ConfDir, which
	// spark-submit sources (bin/load-spark-env.sh) when SPARK_CONF_DIR is
	// ConfDir.
	ClientEnvFile = "spark-env.sh"

	// ConfDriverBindAddress is the address the driver listens on; the
	// driver advertises ConfDriverHost.
	ConfDriverBindAddress = "spark.driver.bindAddress"
)

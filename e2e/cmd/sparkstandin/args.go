package main

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// driverCommand is the driver container's command line after the word
// "driver": spark-submit's options as DriverCommandFeatureStep writes them
// (--properties-file, --class, --proxy-user, and --conf, which Spark's
// entrypoint adds), the primary resource, then the application's own
// arguments.
type driverCommand struct {
	propertiesFile string
	conf           map[string]string // --conf key=value: wins over the file
	class          string
	resource       string
	app            appArgs
}

// appArgs are what a test asks of the application, in its arguments.
// Arguments the stand-in does not know (a real application's, such as
// SparkPi's slice count) are ignored, so any step runs.
type appArgs struct {
	exit         int           // --exit=N: the driver's exit code (default 0)
	sleep        time.Duration // --sleep=D: run this long once the executors are up
	message      string        // --message=S: written to the termination log
	oom          bool          // --oom: allocate memory until the limit kills the driver
	executorOOM  bool          // --executor-oom: tell every executor to do so
	minExecutors int           // --min-executors=N: fail unless N executors registered
	ignored      []string
}

// submitFlags are spark-submit's options that take no value; every other
// option takes one (--opt value or --opt=value).
var submitFlags = map[string]bool{"--verbose": true, "-v": true, "--supervise": true, "--help": true, "-h": true, "--version": true}

func parseDriverCommand(args []string) (driverCommand, error) {
	c := driverCommand{conf: map[string]string{}}
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		opt, value, inline := strings.Cut(args[i], "=")
		if submitFlags[opt] {
			continue
		}
		if !inline {
			if i+1 == len(args) {
				return c, fmt.Errorf("%s needs a value", opt)
			}
			i++
			value = args[i]
		}
		switch opt {
		case "--properties-file":
			c.propertiesFile = value
		case "--class":
			c.class = value
		case "--conf", "-c":
			k, v, ok := strings.Cut(value, "=")
			if !ok {
				return c, fmt.Errorf("--conf %q: want key=value", value)
			}
			c.conf[k] = v
		}
	}
	if i == len(args) {
		return c, fmt.Errorf("no primary resource")
	}
	if c.propertiesFile == "" {
		return c, fmt.Errorf("no --properties-file")
	}
	c.resource = args[i]
	app, err := parseAppArgs(args[i+1:])
	c.app = app
	return c, err
}

func parseAppArgs(args []string) (appArgs, error) {
	var a appArgs
	for _, arg := range args {
		name, value, hasValue := strings.Cut(arg, "=")
		var err error
		switch name {
		case "--exit":
			a.exit, err = strconv.Atoi(value)
			if err == nil && (a.exit < 0 || a.exit > 255) {
				err = fmt.Errorf("not an exit code")
			}
		case "--sleep":
			a.sleep, err = time.ParseDuration(value)
		case "--message":
			a.message = value
		case "--min-executors":
			a.minExecutors, err = strconv.Atoi(value)
		case "--oom", "--executor-oom":
			if hasValue {
				err = fmt.Errorf("takes no value")
			}
			a.oom = a.oom || name == "--oom"
			a.executorOOM = a.executorOOM || name == "--executor-oom"
		default:
			a.ignored = append(a.ignored, arg)
		}
		if err != nil {
			return a, fmt.Errorf("%s: %w", arg, err)
		}
	}
	return a, nil
}

// driverAddress is where an executor finds its driver: the host and port
// of SPARK_DRIVER_URL, spark://CoarseGrainedScheduler@HOST:PORT, the
// driver Service's name in cluster mode.
func driverAddress(url string) (string, error) {
	rest, ok := strings.CutPrefix(url, "spark://")
	if !ok {
		return "", fmt.Errorf("SPARK_DRIVER_URL %q: not spark://", url)
	}
	endpoint, hostPort, ok := strings.Cut(rest, "@")
	if !ok || endpoint == "" {
		return "", fmt.Errorf("SPARK_DRIVER_URL %q: no endpoint name", url)
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil || host == "" {
		return "", fmt.Errorf("SPARK_DRIVER_URL %q: want HOST:PORT after @", url)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("SPARK_DRIVER_URL %q: bad port", url)
	}
	return hostPort, nil
}

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/sparkplug-io/sparkplug/e2e/sparkconf"
	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

const (
	// terminationLog is the kubelet's default terminationMessagePath.
	terminationLog = "/dev/termination-log"
	// namespaceFile is the pod's namespace, beside its ServiceAccount token.
	namespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
	// confRegisteredWaitingTime bounds the wait for executors
	// (spark.scheduler.maxRegisteredResourcesWaitingTime, default 30s).
	confRegisteredWaitingTime = "spark.scheduler.maxRegisteredResourcesWaitingTime"
	// executorOOMWait bounds the wait for executors told to exceed their
	// memory limit to be killed.
	executorOOMWait = 2 * time.Minute
	// sigtermExit is the JVM's exit code on SIGTERM.
	sigtermExit = 143
)

// connectFunc returns the API client a driver creates its executors with.
type connectFunc func() (kubernetes.Interface, error)

// inCluster connects with the pod's ServiceAccount token, as Spark's
// driver does (spark.kubernetes.authenticate.driver.mounted.* unset).
func inCluster() (kubernetes.Interface, error) {
	cfg, err := rest.InClusterConfig()
	if err != nil {
		return nil, fmt.Errorf("in-cluster config: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}

// runDriver runs the driver container and returns its exit code.
func runDriver(ctx context.Context, args []string, getenv func(string) string, connect connectFunc, stdout io.Writer, log *slog.Logger) int {
	d, err := newDriver(args, getenv, log)
	if err != nil {
		return fail(log, err)
	}
	d.connect = connect
	if len(d.cmd.app.ignored) > 0 {
		log.Info("ignoring application arguments", "args", d.cmd.app.ignored)
	}
	code, err := d.run(ctx)
	// Spark's shutdown hook stops the executors and deletes their pods,
	// whatever ended the application.
	d.stopExecutors()
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if derr := d.deleteExecutors(cleanup); derr != nil {
		log.Error("deleting executors failed", "error", derr.Error())
	}
	switch {
	case ctx.Err() != nil:
		log.Info("driver terminated")
		return sigtermExit
	case err != nil:
		return fail(log, err)
	}
	if m := d.cmd.app.message; m != "" {
		fmt.Fprintln(stdout, m)
		writeTerminationMessage(log, m)
	}
	log.Info("driver finished", "exitCode", code)
	return code
}

// driver is a running driver: its conf, API client and executors.
type driver struct {
	cmd       driverCommand
	conf      map[string]string
	log       *slog.Logger
	connect   connectFunc
	client    kubernetes.Interface
	namespace string

	mu         sync.Mutex
	registered map[string]net.Conn // by executor id
	changed    chan struct{}       // closed and replaced on every (de)registration
}

func newDriver(args []string, getenv func(string) string, log *slog.Logger) (*driver, error) {
	// Spark's entrypoint passes the pod's address, which the driver pod
	// sets in SPARK_DRIVER_BIND_ADDRESS, as spark.driver.bindAddress.
	if addr := getenv(spark.EnvDriverBindAddress); addr != "" {
		args = append([]string{"--conf", spark.ConfDriverBindAddress + "=" + addr}, args...)
	}
	cmd, err := parseDriverCommand(args)
	if err != nil {
		return nil, err
	}
	text, err := os.ReadFile(cmd.propertiesFile)
	if err != nil {
		return nil, fmt.Errorf("read the properties file: %w", err)
	}
	conf, err := sparkconf.Load(string(text))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cmd.propertiesFile, err)
	}
	maps.Copy(conf, cmd.conf)
	return &driver{cmd: cmd, conf: conf, log: log, registered: map[string]net.Conn{}, changed: make(chan struct{})}, nil
}

// run is the application: it returns the exit code asked for, or an
// error that fails the driver.
func (d *driver) run(ctx context.Context) (int, error) {
	app := d.cmd.app
	d.log.Info("driver starting", "appId", d.conf[spark.ConfAppID], "class", d.cmd.class, "resource", d.cmd.resource)
	port := valueOr(d.conf[spark.ConfDriverPort], strconv.Itoa(spark.DriverPort))
	// Spark binds spark.driver.bindAddress, else spark.driver.host; the
	// stand-in, without the first, binds every address.
	ln, err := net.Listen("tcp", net.JoinHostPort(d.conf[spark.ConfDriverBindAddress], port))
	if err != nil {
		return 0, fmt.Errorf("listen on the driver port: %w", err)
	}
	defer ln.Close()
	go d.accept(ln)

	n, err := d.startExecutors(ctx)
	if err != nil {
		return 0, err
	}
	wait := 30 * time.Second
	if v := d.conf[confRegisteredWaitingTime]; v != "" {
		if wait, err = parseSparkDuration(v); err != nil {
			return 0, fmt.Errorf("%s: %w", confRegisteredWaitingTime, err)
		}
	}
	got := d.waitForExecutors(ctx, func(k int) bool { return k >= n }, wait)
	d.log.Info("executors registered", "registered", got, "requested", n)
	if got < app.minExecutors {
		return 0, fmt.Errorf("only %d of %d executors registered within %s", got, app.minExecutors, wait)
	}
	if app.executorOOM {
		d.broadcast(msgOOM)
		left := d.waitForExecutors(ctx, func(k int) bool { return k == 0 }, executorOOMWait)
		d.log.Info("executors told to exceed their memory limit", "stillRegistered", left)
	}
	select {
	case <-ctx.Done():
		return 0, ctx.Err()
	case <-time.After(app.sleep):
	}
	if app.oom {
		d.log.Info("driver allocating memory until its limit")
		return 0, exceedMemoryLimit()
	}
	return app.exit, nil
}

// startExecutors creates the executor pods and returns how many.
func (d *driver) startExecutors(ctx context.Context) (int, error) {
	n, err := sparkconf.ExecutorCount(d.conf)
	if err != nil {
		return 0, err
	}
	if d.client, err = d.connect(); err != nil {
		return 0, err
	}
	d.namespace = d.conf[spark.ConfNamespace]
	if d.namespace == "" {
		b, err := os.ReadFile(namespaceFile)
		if err != nil {
			return 0, fmt.Errorf("no %s and no namespace file: %w", spark.ConfNamespace, err)
		}
		d.namespace = strings.TrimSpace(string(b))
	}
	var driverPod *corev1.Pod
	if name := d.conf[spark.ConfDriverPodName]; name != "" {
		if driverPod, err = d.client.CoreV1().Pods(d.namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return 0, fmt.Errorf("no pod was found named %s in the namespace %s (this driver pod): %w", name, d.namespace, err)
		}
	}
	var tmpl *corev1.Pod
	if path := d.conf[spark.ConfExecutorPodTemplateFile]; path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, fmt.Errorf("could not load pod from template file: %w", err)
		}
		if tmpl, err = readTemplate(b); err != nil {
			return 0, err
		}
	}
	sparkUser := os.Getenv("SPARK_USER")
	if u, err := user.Current(); sparkUser == "" && err == nil {
		sparkUser = u.Username
	}
	for id := 1; id <= n; id++ {
		pod, err := executorPod(d.conf, driverPod, tmpl, id, sparkUser)
		if err != nil {
			return 0, err
		}
		_, err = d.client.CoreV1().Pods(d.namespace).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return 0, fmt.Errorf("create executor pod %s: %w", pod.Name, err)
		}
		d.log.Info("requested executor", "pod", pod.Name, "id", id)
	}
	return n, nil
}

// accept registers the executors that connect, until ln is closed.
func (d *driver) accept(ln net.Listener) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go d.serve(conn)
	}
}

// serve holds one executor's connection: its registration, then until
// either side closes it.
func (d *driver) serve(conn net.Conn) {
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		conn.Close()
		return
	}
	reg, err := parseRegistration(strings.TrimSpace(line))
	if err == nil && reg.appID != d.conf[spark.ConfAppID] {
		err = fmt.Errorf("executor of application %s, this is %s", reg.appID, d.conf[spark.ConfAppID])
	}
	if err != nil {
		fmt.Fprintf(conn, "%s %s\n", msgRejected, err)
		conn.Close()
		return
	}
	d.mu.Lock()
	d.registered[reg.execID] = conn
	d.notifyLocked()
	d.mu.Unlock()
	fmt.Fprintln(conn, msgRegistered)
	d.log.Info("registered executor", "id", reg.execID, "pod", reg.pod, "address", conn.RemoteAddr().String())
	_, _ = io.Copy(io.Discard, r) // until the executor goes or is stopped
	d.mu.Lock()
	if d.registered[reg.execID] == conn {
		delete(d.registered, reg.execID)
		d.notifyLocked()
		d.log.Info("executor lost", "id", reg.execID, "pod", reg.pod)
	}
	d.mu.Unlock()
}

func (d *driver) notifyLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// waitForExecutors waits until done(registered executors) or timeout, and
// returns how many are registered.
func (d *driver) waitForExecutors(ctx context.Context, done func(int) bool, timeout time.Duration) int {
	deadline := time.After(timeout)
	for {
		d.mu.Lock()
		n, changed := len(d.registered), d.changed
		d.mu.Unlock()
		if done(n) {
			return n
		}
		select {
		case <-changed:
		case <-deadline:
			return n
		case <-ctx.Done():
			return n
		}
	}
}

func (d *driver) broadcast(msg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, conn := range d.registered {
		fmt.Fprintln(conn, msg)
	}
}

// stopExecutors tells the registered executors to stop and forgets them.
func (d *driver) stopExecutors() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, conn := range d.registered {
		fmt.Fprintln(conn, msgStop)
		conn.Close()
		delete(d.registered, id)
	}
}

// deleteExecutors deletes the application's executor pods, as
// ExecutorPodsAllocator does when the driver stops (one deletecollection
// by label), unless spark.kubernetes.executor.deleteOnTermination=false.
func (d *driver) deleteExecutors(ctx context.Context) error {
	if d.client == nil || d.conf[spark.ConfExecutorDeleteOnTerm] == "false" {
		return nil
	}
	selector := labels.Set{spark.LabelAppSelector: d.conf[spark.ConfAppID], spark.LabelRole: spark.RoleExecutor}.String()
	err := d.client.CoreV1().Pods(d.namespace).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("delete executors %s: %w", selector, err)
	}
	d.log.Info("deleted executors", "selector", selector)
	return nil
}

// fail logs err, writes it to the termination log and returns 1.
func fail(log *slog.Logger, err error) int {
	log.Error("failed", "error", err.Error())
	writeTerminationMessage(log, err.Error())
	return 1
}

func writeTerminationMessage(log *slog.Logger, m string) {
	// The kubelet creates the file; outside a container there is none.
	f, err := os.OpenFile(terminationLog, os.O_WRONLY|os.O_TRUNC, 0)
	if err == nil {
		_, err = f.WriteString(m)
		err = errors.Join(err, f.Close())
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		log.Warn("cannot write the termination message", "error", err.Error())
	}
}

// parseSparkDuration reads a Spark time conf: a number with a unit (ms,
// s, m, min, h, d), seconds without one.
func parseSparkDuration(v string) (time.Duration, error) {
	s := strings.ToLower(strings.TrimSpace(v))
	digits := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	n, err := strconv.ParseInt(digits, 10, 64)
	units := map[string]time.Duration{"": time.Second, "us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	unit, ok := units[s[len(digits):]]
	if err != nil || !ok {
		return 0, fmt.Errorf("%q is not a duration", v)
	}
	return time.Duration(n) * unit, nil
}

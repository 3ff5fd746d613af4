package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"

	wfclient "github.com/argoproj/argo-workflows/v3/pkg/client/clientset/versioned"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// Options say which step's UI is forwarded, and where.
type Options struct {
	Namespace, Workflow string
	// Node names the node (Choose); empty: the one running Spark node.
	Node string
	// Addresses are the local addresses listened on; Port the local
	// port (0: any free one).
	Addresses []string
	Port      int
	// Ready is called once the UI is listened on, with where.
	Ready func(Forwarding)
	// ErrOut gets the errors of single connections, as kubectl
	// port-forward prints them; nil discards them.
	ErrOut io.Writer
}

// Forwarding is what Run forwards: the local URLs of the UI, and the
// node, driver pod and port they lead to.
type Forwarding struct {
	URLs         []string
	Node, Driver string
	Port         int
}

// Rights is what Run needs, in the workflow's namespace.
const Rights = "get workflows, get pods, create pods/portforward"

// Run forwards the Spark UI of the step o names until ctx ends (nil) or
// the connection to the driver is lost (an error). cfg is the REST
// config of kube, for the port-forward's own connection.
func Run(ctx context.Context, kube kubernetes.Interface, wfc wfclient.Interface, cfg *rest.Config, o Options) error {
	wf, err := wfc.ArgoprojV1alpha1().Workflows(o.Namespace).Get(ctx, o.Workflow, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("workflow %s not found in namespace %s (is it in another? -n NAMESPACE)", o.Workflow, o.Namespace)
	case err != nil:
		return refused(err, "get", "workflows", o.Namespace)
	case len(wf.Status.Nodes) == 0 && wf.Status.OffloadNodeStatusVersion != "":
		return fmt.Errorf("workflow %s keeps its nodes in Argo's database (status.offloadNodeStatusVersion), which sparkplug ui cannot read", wf.Name)
	}
	n, err := Choose(wf, o.Node)
	if err != nil {
		return err
	}
	var pod *corev1.Pod
	if n.RecordedDriver != "" {
		pod, err = kube.CoreV1().Pods(o.Namespace).Get(ctx, n.RecordedDriver, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			pod = nil
		case err != nil:
			return refused(err, "get", "pods", o.Namespace)
		}
	}
	if err := CheckDriver(wf, n, pod); err != nil {
		return err
	}
	dialer, err := Dialer(kube, cfg, o.Namespace, pod.Name)
	if err != nil {
		return err
	}
	remote := int(UIPort(pod))
	ready := func(urls []string) {
		if o.Ready != nil {
			o.Ready(Forwarding{URLs: urls, Node: n.Name, Driver: pod.Name, Port: remote})
		}
	}
	err = Forward(ctx, dialer, o.Addresses, o.Port, remote, ready, o.ErrOut)
	if err != nil && isForbidden(err) {
		return fmt.Errorf("sparkplug ui needs create on pods/portforward in namespace %s, which the API server refused: %s", o.Namespace, oneLine(err.Error()))
	}
	if err != nil {
		return fmt.Errorf("forward the Spark UI of driver %s (port %d) of node %s: %w", pod.Name, remote, n.Name, err)
	}
	return nil
}

// refused is err of verb on resource; a refusal names the right missing.
func refused(err error, verb, resource, ns string) error {
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		return fmt.Errorf("sparkplug ui needs %s on %s in namespace %s, which the API server refused: %w", verb, resource, ns, err)
	}
	return fmt.Errorf("%s %s in namespace %s: %w", verb, resource, ns, err)
}

// isForbidden: client-go's port-forward keeps only the text of the API
// server's refusal.
func isForbidden(err error) bool {
	msg := err.Error()
	return apierrors.IsForbidden(err) || strings.Contains(msg, "forbidden") && strings.Contains(msg, "pods/portforward")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Dialer opens the port-forward stream of pod as kubectl does: by
// websocket, falling back to SPDY when the API server does not upgrade
// to it.
func Dialer(kube kubernetes.Interface, cfg *rest.Config, ns, pod string) (httpstream.Dialer, error) {
	u := kube.CoreV1().RESTClient().Post().Resource("pods").Namespace(ns).Name(pod).SubResource("portforward").URL()
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("port-forward transport: %w", err)
	}
	spdyDialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, u)
	ws, err := portforward.NewSPDYOverWebsocketDialer(u, cfg)
	if err != nil {
		return nil, fmt.Errorf("port-forward transport: %w", err)
	}
	return portforward.NewFallbackDialer(ws, spdyDialer, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	}), nil
}

// Forward forwards local port (0: any free one) of addresses to the
// remote port through dialer's stream, calls ready with the UI's URLs
// once it listens, and forwards until ctx ends (nil) or the stream is
// lost (an error).
func Forward(ctx context.Context, dialer httpstream.Dialer, addresses []string, local, remote int, ready func(urls []string), errOut io.Writer) error {
	if errOut == nil {
		errOut = io.Discard
	}
	ports := strconv.Itoa(remote)
	if local != remote {
		ports = ":" + ports
		if local != 0 {
			ports = strconv.Itoa(local) + ports
		}
	}
	stop, readyCh := make(chan struct{}), make(chan struct{})
	pf, err := portforward.NewOnAddresses(dialer, addresses, []string{ports}, stop, readyCh, io.Discard, errOut)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- pf.ForwardPorts() }()
	select {
	case err := <-done:
		if err == nil {
			err = errors.New("the port-forward ended before it listened")
		}
		return err
	case <-readyCh:
	case <-ctx.Done():
		close(stop)
		<-done
		return nil
	}
	if ready != nil {
		fp, err := pf.GetPorts()
		if err != nil || len(fp) == 0 {
			close(stop)
			<-done
			return fmt.Errorf("the port-forward's local port: %w", err)
		}
		var urls []string
		for _, a := range addresses {
			host := a
			if a == "localhost" || a == "" {
				host = "127.0.0.1"
			}
			urls = append(urls, "http://"+net.JoinHostPort(host, strconv.Itoa(int(fp[0].Local))))
		}
		ready(urls)
	}
	select {
	case err := <-done:
		if err == nil || errors.Is(err, portforward.ErrLostConnectionToPod) {
			return errors.New("lost the connection to the driver (did it end?)")
		}
		return err
	case <-ctx.Done():
		close(stop)
		<-done
		return nil
	}
}

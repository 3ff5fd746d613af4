// Command probe runs in pods of the real node's smoke test (e2e/node): it
// does what a workload of the node must be able to do and reports it the
// way the kubelet passes on, a termination message and an exit code.
//
//	probe -get https://kubernetes.default.svc/api -exit 3
//
// GETs the URL with the pod's ServiceAccount token, verifying the server
// with the ServiceAccount's CA, writes what it saw (status, the addresses
// the host resolved to) as termination message, and exits with the code
// given (1 if the GET failed).
//
//	probe -hog
//
// allocates and touches memory until the kernel kills it, for a pod that
// exceeds its memory limit.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	get := flag.String("get", "", "URL to GET with the pod's ServiceAccount token")
	exit := flag.Int("exit", 0, "exit code after a successful GET")
	hog := flag.Bool("hog", false, "allocate memory until killed")
	messageFile := flag.String("message-file", "/dev/termination-log", "where the termination message goes")
	flag.Parse()
	if *hog {
		hogMemory()
	}
	msg, err := probe(*get)
	if err != nil {
		msg = err.Error()
	}
	fmt.Println(msg)
	if werr := os.WriteFile(*messageFile, []byte(msg), 0o644); werr != nil {
		fmt.Fprintln(os.Stderr, "write termination message:", werr)
	}
	if err != nil {
		os.Exit(1)
	}
	os.Exit(*exit)
}

// probe resolves the URL's host and GETs it as the pod's ServiceAccount.
func probe(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, u.Hostname())
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", u.Hostname(), err)
	}
	token, err := os.ReadFile(serviceAccountDir + "/token")
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	ca, err := os.ReadFile(serviceAccountDir + "/ca.crt")
	if err != nil {
		return "", fmt.Errorf("read CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return "", fmt.Errorf("no certificate in %s/ca.crt", serviceAccountDir)
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET %s (%s is %v): %w", rawURL, u.Hostname(), addrs, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	return fmt.Sprintf("GET %s: %s; %s is %s; body: %s",
		rawURL, resp.Status, u.Hostname(), strings.Join(addrs, ","), bytes.TrimSpace(body)), nil
}

// hogMemory allocates 4 MiB at a time and writes every page of it, so the
// memory is really charged to the container's cgroup.
func hogMemory() {
	var keep [][]byte
	for {
		b := make([]byte, 4<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		keep = append(keep, b)
		fmt.Printf("allocated %d MiB\n", 4*len(keep))
	}
}

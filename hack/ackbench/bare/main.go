// Command bare is the floor `make bench-ack` reads the acknowledger's
// figures against: the smallest net/http server that answers what
// ackbench sends (a spark template's acknowledgement, {} for another
// template, ok on /healthz), with no token check, JSON decoding, logging,
// flags or redaction. Built as the acknowledger is and run with its
// runtime settings, what it takes is what any Go HTTP server of this
// shape takes; the acknowledger's figures above it are its own.
package main

import (
	"bytes"
	"io"
	"net/http"
	"os"
)

func main() {
	addr := "127.0.0.1:4355"
	for i, a := range os.Args[1:] {
		if a == "--addr" && i+2 < len(os.Args) {
			addr = os.Args[i+2]
		}
	}
	err := http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			_, _ = w.Write([]byte("ok"))
			return
		}
		b, _ := io.ReadAll(r.Body)
		if bytes.Contains(b, []byte(`"spark":`)) {
			_, _ = w.Write([]byte(`{"node":{},"requeue":"0s"}`))
			return
		}
		_, _ = w.Write([]byte(`{}`))
	}))
	os.Stderr.WriteString(err.Error() + "\n")
	os.Exit(1)
}

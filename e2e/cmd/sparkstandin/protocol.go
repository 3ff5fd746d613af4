package main

import (
	"fmt"
	"strings"
)

// The stand-in's wire protocol: lines of text over the driver port, in
// place of Spark's RPC (RegisterExecutor, StopExecutor).
const (
	msgRegistered = "REGISTERED"
	msgRejected   = "REJECTED"
	msgOOM        = "OOM"
	msgStop       = "STOP"
)

// registration is an executor's first line: REGISTER ID APP POD.
type registration struct{ execID, appID, pod string }

func (r registration) String() string {
	return fmt.Sprintf("REGISTER %s %s %s", r.execID, r.appID, r.pod)
}

func parseRegistration(line string) (registration, error) {
	f := strings.Fields(line)
	if len(f) != 4 || f[0] != "REGISTER" {
		return registration{}, fmt.Errorf("not a registration: %q", line)
	}
	return registration{execID: f[1], appID: f[2], pod: f[3]}, nil
}

// Package edgetest holds, for tests, what every server the Argo agent
// calls must answer alike: the template.execute bodies and their answers
// (requests.json), read by the rule's own tests (package ack), the
// sidecar's (package execute) and the acknowledger's (package acksrv);
// and the methods and paths table, gin's answers, which the sidecar's
// engine gives and the acknowledger's router copies.
package edgetest

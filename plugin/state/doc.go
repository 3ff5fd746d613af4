// Package state turns what was observed of one Spark run (the driver pod, its
// executor pods, when the driver was created and the time now) into the Spark
// application state of that attempt, the Argo node phase, and the one-line
// message a person reads in the Argo UI.
//
// What a node is told is a typed Outcome (state, phase, counts, elapsed
// time, detail, note, and the driver's exit code); Outcome.Message, in message.go, is the one place that renders it
// as text, for every answer sparkplug gives, so nothing parses a message
// back into a state. Its phase is a Phase, Argo's words in a type of
// sparkplug's (phase.go): what decides a node needs no Argo API package,
// which would link client-go; nodestatus.Of makes Argo's node result.
//
// It is part of the "decide" step of gather -> decide -> act, and it is pure: no
// clock (the caller passes Now), no Kubernetes client, no logging, no state
// between calls. The same Observed always gives the same Assessment, so every
// pod phase, container state, exit code and missing-pod case is table-tested.
//
// States follow the Spark operator's driver-derived states (SUBMITTED,
// RUNNING, SUCCEEDING, FAILING, UNKNOWN); what happens next (retry, fail
// fast on a fatal waiting reason, time out) is the caller's policy, for which
// Assessment carries Waiting, Infrastructure and the exit code.
package state

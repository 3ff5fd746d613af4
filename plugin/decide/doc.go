// Package decide is what sparkplug decides about one Argo node, and
// nothing else: it links nothing of client-go or of Argo (whose API types
// bring client-go along) and holds no client, so it cannot act.
//
// Decide reads a Snapshot (the phase of the node's TaskSet entry, what the
// Workflow shows of it and whether it is a loop's child, its run in the current incarnation with every attempt's
// driver pod, ghost or tombstone, and the refused submissions kept in
// memory) and a Policy (the step's body and timeout, the plugin's
// settings), and returns a Plan: launch an attempt, stop a driver that a
// time limit ended, abandon a run whose node someone else fulfilled, make
// sure of a live driver's companions, store a driver's log first, and the
// typed outcome (state.Outcome) the node reports, with the driver its
// outputs name. The act side (package execute) carries the plan out and
// renders the outcome in one place.
//
// judge.go applies the restart policy (linear backoff, as the Spark
// operator does), limits.go the time limits sparkplug enforces itself
// (Argo never stops a plugin node it believes Running), outcomes.go the
// outcomes that are not a run's own state, befell.go what is done of
// what befell an action of the pass before and what the node reports (a
// refused launch, a spark-submit that runs on, a live driver's companion
// refused: kept or deleted, a run's name held: drawn names or a refusal;
// the act side records it, the next pass decides), unfollowed.go the
// results of nodes no pass follows (a workflow not read, an invalid
// step), kueue.go what a step queued
// with Kueue waits for (its attempt's Workload admitted), when that wait
// ends the node instead (the template's timeout, counted from the node's
// start, runs out; Kueue says the Workload can never be admitted) and
// what an eviction does. A node that was Running in its incarnation
// stays Running while a later attempt waits (outcomes.go, onceRunning).
package decide

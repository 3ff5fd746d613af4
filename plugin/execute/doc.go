// Package execute follows the Spark nodes of the workflows a sidecar or
// the controller serves: it is the act side between the pure decision
// (package decide) and the cluster, and holds what both modes need.
//
// Argo's request names no node, so the request decides nothing; the
// sidecar's answer to it (package request, which the controller does not
// import) only starts following the request's workflow (Serve), fails
// its nodes where AccessDenied says this process may not write their
// results, and otherwise asks for passes over them (PassAll). What
// happens is driven by the workflow's cache (package scope) instead:
//   - reconcile.go asks, per workflow, for a pass over every Spark node
//     its WorkflowTaskSet lists (Core.work, a client-go workqueue: "queue"
//     in this package is only ever Kueue's), whenever the TaskSet, the
//     Workflow or one of a node's run's objects changes, and every
//     Options.Resync; workers reconcile one node at a time each, never
//     two passes for one node;
//   - gather.go reads one node's snapshot (decide.Snapshot) from the
//     cache: its TaskSet entry, what the Workflow shows of it, its run in
//     the current incarnation (driver pods by node id, the tombstone of a
//     stopped one, a ghost of one the entry names and the cluster lost)
//     with its executors, and its refused submissions. It writes nothing.
//     Of the objects with a run's name, labels and owner, trust.go keeps
//     only those sparkplug could have made (the driver whose uid the entry
//     records; one made after its node started and its previous attempt
//     ended; a tombstone naming its driver's uid) and names the others;
//   - package decide plans the pass (launch, stop, abandon, archive) and
//     the outcome the node reports, and what is done of what befell an
//     action of the pass before (a companion waived or its driver
//     deleted, a launch under drawn names, a refusal counted): reconcile
//     runs the next pass at once on what act recorded;
//   - kueue.go is all of Kueue on the act side: it reads a node's
//     Workloads from the cache for gather, asks Kueue's visibility API
//     where a waiting one stands, and creates, reads back admitted, marks
//     PodsReady and deletes a queued step's Workloads, as the plan says;
//   - act.go, launch.go (driver.go: the native create), submit.go and
//     archive.go carry the plan out:
//     create what package objects builds (a batch scheduler's PodGroup
//     first, then the driver, natively or by spark-submit, then what it
//     owns, under names drawn when the plan says; an object found under
//     one of the run's names is taken only if it is the run's,
//     driverpod.NotOurs, else that is recorded for decide),
//     stop a driver a time limit ended (a tombstone ConfigMap is created
//     for it), delete the driver of a node someone else finished,
//     store a driver's log, record Events (events.go) and metrics. They
//     make no choice: what befalls an action is recorded
//     (decide.Befell), never acted on;
//   - result.go renders the outcome as the node's result (phase,
//     message, outputs), the one place it is rendered, and the workflow's
//     writer (package nodestatus) writes it into the TaskSet under the
//     node's id.
//
// Beside the passes, package cleanup deletes the running drivers of an
// ending workflow and expires finished ones (Cleaner; ending.go hands it
// the workflows that end). options.go holds the core's settings;
// bookkeeping.go the little kept in memory.
//
// Nothing is remembered only in memory except submission-failure counts
// and the spark-submit runs in flight: attempts and incarnations live on
// the driver pods, results in the TaskSet, so a restarted plugin continues
// where the last one stopped and never creates a second driver (names are
// deterministic; a create that finds the object is an adoption). The one
// name drawn at launch, the driver ConfigMap's, is read back from the
// driver's volumes (objects.ConfigMapOf).
package execute

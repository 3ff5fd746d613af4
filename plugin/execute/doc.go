// Package execute answers Argo's template.execute for `spark` steps: it is
// the request core between the thin HTTP server and the cluster.
//
// Each request goes gather -> decide -> act:
//   - gather: parse the spark body, key the template, read the workflow's
//     TaskSet and the runs already launched from the workflow's cache
//     (package scope); no API request in steady state;
//   - decide: which node is asking (package identity), what state its run
//     is in (package state), and what the restart policy says (judge, a
//     pure function in this package);
//   - act: create the driver objects built by package build (a batch
//     scheduler's PodGroup first, through the dynamic client, then the
//     driver, then what the driver owns), record hand-outs and adoptions
//     as annotations on the driver pod, and reply.
//
// Files: execute.go (the request and its reply), runs.go (gathering the
// runs of a template from the cache, including ghosts and tombstones),
// verdict.go, judge.go and limits.go (deciding), act.go (writing),
// submit.go (the spark-submit launcher, which replaces only the creation
// of the driver pod), sweep.go and ttl.go (cleanup outside requests),
// events.go, memory.go (the little kept in memory).
//
// Nothing is remembered only in memory except submission-failure counts
// and the spark-submit runs in flight: attempts, hand-outs and adoptions
// live on the driver pods, so a restarted plugin continues where the last
// one stopped and repeated calls never create a second driver (names are
// deterministic; a create that finds the object is an adoption, not an
// error).
package execute

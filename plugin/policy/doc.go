// Package policy decides whether the objects sparkplug built for a run
// may be created: what a workflow author may ask the plugin to make in
// its name. Creating pods, Services and Ingresses is the plugin's right,
// so without a check any author could borrow it: run a driver or the
// executors as the plugin's own ServiceAccount, mount its token, expose a
// port to the world or route a host to a pod.
//
// Check reads a run's objects (objects.Set: the driver pod, the executor
// pod template, the Spark conf the executors are made from, the Services
// and Ingresses) and the body they were built from, and returns an *Error
// naming, for each problem, the body's field it comes from
// (spark.driver.serviceAccount, ...) and the rule it breaks. Nothing here
// talks to the API server: the same check runs where the plugin launches
// a step (package execute, which fails the node with the message as it
// fails an invalid body) and in render.
//
// Two rules always hold: no pod of a run runs as one of the plugin's own
// ServiceAccounts (Policy.PluginServiceAccounts), and none references a
// Secret named as such an account's token (tokenSecret). The other rules
// are Policy's options, off where Spark and the Spark operator allow the
// thing (service accounts, a Pod Security Standards level, Ingress hosts,
// Service types, Kueue WorkloadPriorityClasses), on where it only serves
// an attacker (ingress controllers' snippet annotations, which put raw
// configuration into a controller that serves every namespace).
//
// CheckPriorityClass is the one rule on a step's template rather than its
// objects: a queued step's kueue.x-k8s.io/priority-class label, which
// decides whom its Workload may preempt.
//
// The Pod Security Standards level is evaluated by the upstream library
// (k8s.io/pod-security-admission/policy) on the driver pod and on the
// executor pod as Spark will make it: the template with the volumes the
// conf adds (spark.kubernetes.executor.volumes.*, secrets), since a
// hostPath asked for in sparkConf never appears in the template.
package policy

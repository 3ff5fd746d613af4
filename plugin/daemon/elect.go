package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Election is how the replicas of a process elect the one that works.
type Election struct {
	// Enabled makes the replicas elect one leader through a Lease named
	// Name in Namespace. Off, this process always leads.
	Enabled         bool
	Namespace, Name string
	// LeaseDuration, RenewDeadline and RetryPeriod are the Lease's
	// timing (client-go's leaderelection.LeaderElectionConfig).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Identity names this replica in the Lease; empty: the host name
	// with a random suffix.
	Identity string
}

// Lead runs lead for each leadership this replica wins, until ctx is
// done; without election it leads once, for as long as ctx lasts. A
// replica that loses the Lease waits for lead to return and stands
// again. watchdog is /healthz's (NewWatchdog). It returns an error only
// when it cannot stand.
func Lead(ctx context.Context, e Election, kube kubernetes.Interface, watchdog *leaderelection.HealthzAdaptor, lead func(context.Context), log *slog.Logger) error {
	if !e.Enabled {
		lead(ctx)
		return nil
	}
	id := e.Identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("leader election identity: %w", err)
		}
		id = host + "_" + string(uuid.NewUUID())
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, e.Namespace, e.Name,
		kube.CoreV1(), kube.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return fmt.Errorf("leader election lock: %w", err)
	}
	for ctx.Err() == nil {
		// The work of one leadership: it starts in a goroutine of the
		// elector's, possibly after Lead returned, so a gate closes once
		// the elector returns and only work begun before waits.
		var (
			mu      sync.Mutex
			closed  bool
			working sync.WaitGroup
		)
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock:            lock,
			Name:            e.Name,
			LeaseDuration:   e.LeaseDuration,
			RenewDeadline:   e.RenewDeadline,
			RetryPeriod:     e.RetryPeriod,
			ReleaseOnCancel: true,
			WatchDog:        watchdog,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(lctx context.Context) {
					mu.Lock()
					if closed {
						mu.Unlock()
						return
					}
					working.Add(1)
					mu.Unlock()
					defer working.Done()
					log.Info("leading", "identity", id, "lease", e.Namespace+"/"+e.Name)
					lead(lctx)
				},
				OnStoppedLeading: func() {},
				OnNewLeader: func(leader string) {
					if leader != id {
						log.Info("another replica leads", "leader", leader)
					}
				},
			},
		})
		if err != nil {
			return fmt.Errorf("leader election: %w", err)
		}
		le.Run(ctx)
		mu.Lock()
		closed = true
		mu.Unlock()
		working.Wait()
		if ctx.Err() == nil {
			log.Warn("leadership lost: work stopped, standing again", "identity", id)
		}
	}
	return nil
}

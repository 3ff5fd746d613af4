package schedule

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/robfig/cron/v3"
)

// What Argo's controller does to @every, shown with robfig/cron itself:
// handling a CronWorkflow, the controller removes its schedules and adds
// them again (workflow/cron/controller.go), and robfig/cron counts an
// @every interval from the add. Added again more often than its interval,
// the job never runs; left alone, it does.
func TestEveryStartsAgainWhenAddedAgain(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 5 seconds")
	}
	c := cron.New()
	c.Start()
	defer c.Stop()
	var runs atomic.Int32
	job := cron.FuncJob(func() { runs.Add(1) })
	add := func() cron.EntryID {
		id, err := c.AddJob("@every 2s", job)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	id := add()
	for start := time.Now(); time.Since(start) < 3*time.Second; {
		time.Sleep(400 * time.Millisecond)
		c.Remove(id)
		id = add()
	}
	if n := runs.Load(); n != 0 {
		t.Fatalf("@every 2s added again every 400ms ran %d times in 3s; want none", n)
	}
	time.Sleep(2500 * time.Millisecond)
	if runs.Load() == 0 {
		t.Error("@every 2s left alone did not run within 2.5s")
	}
}

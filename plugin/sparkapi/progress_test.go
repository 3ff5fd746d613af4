package sparkapi

import (
	"encoding/json"
	"testing"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 1200: "1,200", 3000: "3,000",
		12500: "12,500", 100000: "100,000", 1234567: "1,234,567", -1234: "-1,234",
	} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestProgressString(t *testing.T) {
	for _, tt := range []struct {
		p    Progress
		want string
	}{
		{Progress{}, ""},
		{Progress{RunningJobs: 1, Stage: 4, Stages: 7, TasksDone: 1200, Tasks: 3000}, "stage 4/7, 1,200/3,000 tasks"},
		{Progress{RunningJobs: 2, Stage: 1, Stages: 1, TasksDone: 0, Tasks: 1}, "stage 1/1, 0/1 tasks"},
		{Progress{RunningJobs: 1, Stage: 2, Stages: 2}, "stage 2/2"},
		{Progress{RunningJobs: 1, TasksDone: 5, Tasks: 1000}, "5/1,000 tasks"},
		{Progress{RunningJobs: 1}, ""},
		// No running job: whatever else is set, nothing is shown.
		{Progress{Stage: 1, Stages: 3, Tasks: 9}, ""},
	} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.p, got, tt.want)
		}
	}
}

// progressOf reads the numbers Spark's jobs page shows (AllJobsPage):
// numCompletedStages/(len(stageIds) - numSkippedStages) and
// numCompletedIndices/(numTasks - numSkippedTasks).
func TestProgressOf(t *testing.T) {
	for _, tt := range []struct {
		name, jobs string
		want       Progress
	}{
		{"first stage", `[{"jobId":0,"status":"RUNNING","stageIds":[0,1],"numTasks":10}]`,
			Progress{RunningJobs: 1, Stage: 1, Stages: 2, Tasks: 10}},
		{"skipped stages and tasks are not in the totals",
			`[{"jobId":4,"status":"RUNNING","stageIds":[5,6,7,8],"numSkippedStages":2,"numCompletedStages":1,"numTasks":300,"numSkippedTasks":200,"numCompletedIndices":40}]`,
			Progress{RunningJobs: 1, JobID: 4, Stage: 2, Stages: 2, TasksDone: 40, Tasks: 100}},
		{"every stage done, the job not yet ended",
			`[{"jobId":1,"status":"RUNNING","stageIds":[1,2],"numCompletedStages":2,"numTasks":8,"numCompletedIndices":8}]`,
			Progress{RunningJobs: 1, JobID: 1, Stage: 2, Stages: 2, TasksDone: 8, Tasks: 8}},
		{"speculative copies count once",
			`[{"jobId":1,"status":"RUNNING","stageIds":[1],"numTasks":8,"numCompletedTasks":9,"numCompletedIndices":7}]`,
			Progress{RunningJobs: 1, JobID: 1, Stage: 1, Stages: 1, TasksDone: 7, Tasks: 8}},
		{"no numCompletedIndices: numCompletedTasks, capped",
			`[{"jobId":1,"status":"RUNNING","stageIds":[1],"numTasks":8,"numCompletedTasks":9}]`,
			Progress{RunningJobs: 1, JobID: 1, Stage: 1, Stages: 1, TasksDone: 8, Tasks: 8}},
		{"a zero numCompletedIndices is used",
			`[{"jobId":1,"status":"RUNNING","stageIds":[1],"numTasks":8,"numCompletedTasks":3,"numCompletedIndices":0}]`,
			Progress{RunningJobs: 1, JobID: 1, Stage: 1, Stages: 1, TasksDone: 0, Tasks: 8}},
		{"lowest id among running, whatever the order",
			`[{"jobId":9,"status":"RUNNING","stageIds":[1]},{"jobId":3,"status":"SUCCEEDED","stageIds":[1,2,3]},{"jobId":4,"status":"RUNNING","stageIds":[1,2]},{"jobId":6,"status":"RUNNING"}]`,
			Progress{RunningJobs: 3, JobID: 4, Stage: 1, Stages: 2}},
		{"job 0 is a job", `[{"jobId":0,"status":"RUNNING","stageIds":[0]},{"jobId":1,"status":"RUNNING","stageIds":[1,2]}]`,
			Progress{RunningJobs: 2, JobID: 0, Stage: 1, Stages: 1}},
		{"no jobId: not a job", `[{"status":"RUNNING","stageIds":[0],"numTasks":4}]`, Progress{}},
		{"unknown status", `[{"jobId":0,"status":"UNKNOWN","stageIds":[0],"numTasks":4}]`, Progress{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var jobs []jobData
			if err := json.Unmarshal([]byte(tt.jobs), &jobs); err != nil {
				t.Fatal(err)
			}
			if got := progressOf(jobs); got != tt.want {
				t.Errorf("progressOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

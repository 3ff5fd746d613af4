package sparkapi

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Progress is where the running job of a Spark application stands, read
// from one reply of /api/v1/applications/<app-id>/jobs?status=running.
// The zero value means no job is running; its String is "".
type Progress struct {
	// RunningJobs is how many jobs the reply lists as RUNNING. When it is
	// more than one, the other fields describe the one with the lowest
	// jobId, the oldest (Spark numbers jobs in submission order).
	RunningJobs int
	// JobID is the shown job's jobId.
	JobID int
	// Stage is the shown job's numCompletedStages + 1, between 1 and
	// Stages: the stage being worked on, counting from 1.
	Stage int
	// Stages is the job's len(stageIds) - numSkippedStages, the stage
	// total of Spark's own jobs page.
	Stages int
	// TasksDone is the job's numCompletedIndices (numCompletedTasks when
	// the reply lacks it), at most Tasks: distinct tasks finished, so a
	// retried or speculative task is not counted twice.
	TasksDone int
	// Tasks is the job's numTasks - numSkippedTasks, the task total of
	// Spark's own jobs page.
	Tasks int
}

// String renders p as "stage 4/7, 1,200/3,000 tasks": Stage/Stages, then
// TasksDone/Tasks with thousands separators. A part whose total is 0 is
// left out; with no running job, or nothing to show, it is "".
func (p Progress) String() string {
	if p.RunningJobs == 0 {
		return ""
	}
	var parts []string
	if p.Stages > 0 {
		parts = append(parts, "stage "+thousands(p.Stage)+"/"+thousands(p.Stages))
	}
	if p.Tasks > 0 {
		parts = append(parts, thousands(p.TasksDone)+"/"+thousands(p.Tasks)+" tasks")
	}
	return strings.Join(parts, ", ")
}

// jobData is the part of Spark's JobData (status/api/v1/api.scala) that
// Progress reads. stageIds is kept raw: only its length matters, so an
// odd element does not throw the whole reply away. jobId and
// numCompletedIndices are pointers, to tell a missing one (not a job; an
// older Spark's reply) from a zero.
type jobData struct {
	JobID               *int              `json:"jobId"`
	Status              string            `json:"status"`
	StageIDs            []json.RawMessage `json:"stageIds"`
	NumTasks            int               `json:"numTasks"`
	NumCompletedTasks   int               `json:"numCompletedTasks"`
	NumCompletedIndices *int              `json:"numCompletedIndices"`
	NumSkippedTasks     int               `json:"numSkippedTasks"`
	NumCompletedStages  int               `json:"numCompletedStages"`
	NumSkippedStages    int               `json:"numSkippedStages"`
}

// runningStatus is JobExecutionStatus.RUNNING as Spark writes it.
const runningStatus = "RUNNING"

// progressOf reads the jobs of one reply. It filters on status itself:
// the query's status=running is a saving, not something to rely on (a
// proxy or another server may ignore it), and entries without a jobId
// are not jobs.
func progressOf(jobs []jobData) Progress {
	var p Progress
	var shown *jobData
	for i := range jobs {
		j := &jobs[i]
		if j.JobID == nil || !strings.EqualFold(j.Status, runningStatus) {
			continue
		}
		p.RunningJobs++
		if shown == nil || *j.JobID < *shown.JobID {
			shown = j
		}
	}
	if shown == nil {
		return Progress{}
	}
	p.JobID = *shown.JobID
	p.Stages = max(len(shown.StageIDs)-max(shown.NumSkippedStages, 0), 0)
	p.Stage = clamp(shown.NumCompletedStages+1, min(1, p.Stages), p.Stages)
	p.Tasks = max(shown.NumTasks-max(shown.NumSkippedTasks, 0), 0)
	done := shown.NumCompletedTasks
	if shown.NumCompletedIndices != nil {
		done = *shown.NumCompletedIndices
	}
	p.TasksDone = clamp(done, 0, p.Tasks)
	return p
}

func clamp(v, lo, hi int) int { return min(max(v, lo), hi) }

// thousands writes n with a comma every three digits: 1200 -> "1,200".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

package archive

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTailKeepsTheEndOfALog(t *testing.T) {
	for _, tc := range []struct {
		name   string
		chunks []string
		max    int
		want   string
	}{
		{"shorter than the cap", []string{"a\n", "b\n"}, 10, "a\nb\n"},
		{"exactly the cap", []string{"12345", "6789\n"}, 10, "123456789\n"},
		{"cut in one write", []string{"line1\nline2\nline3\n"}, 10, "[sparkplug: the first 12 bytes of this log were dropped; the archive keeps its end, at most 10 bytes]\nline3\n"},
		{"cut across many writes", []string{"line1\n", "line2\n", "line3\n", "line4\n"}, 10, "[sparkplug: the first 18 bytes of this log were dropped; the archive keeps its end, at most 10 bytes]\nline4\n"},
		{"a write larger than the cap after others", []string{"ab\n", "0123456789abcdef\nxyz\n"}, 8, "[sparkplug: the first 20 bytes of this log were dropped; the archive keeps its end, at most 8 bytes]\nxyz\n"},
		{"no newline in what is kept", []string{"aaaaaaaaaaaaaaaa"}, 4, "[sparkplug: the first 12 bytes of this log were dropped; the archive keeps its end, at most 4 bytes]\naaaa"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTail(tc.max)
			for _, c := range tc.chunks {
				if n, err := tl.Write([]byte(c)); err != nil || n != len(c) {
					t.Fatalf("Write(%q) = %d, %v", c, n, err)
				}
			}
			if got := string(tl.bytes()); got != tc.want {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestTailOfALongLogIsItsLastBytes(t *testing.T) {
	var b strings.Builder
	for i := range 100000 {
		b.WriteString(strings.Repeat(string(rune('a'+i%26)), 7) + "\n")
	}
	log := b.String()
	got, err := readTail(strings.NewReader(log), 4096)
	if err != nil {
		t.Fatal(err)
	}
	head, kept, ok := bytes.Cut(got, []byte("\n"))
	if !ok || !bytes.HasPrefix(head, []byte("[sparkplug: the first ")) {
		t.Fatalf("no dropped-bytes line: %q", got[:80])
	}
	if !strings.HasSuffix(log, string(kept)) || len(kept) > 4096 || len(kept) < 4096-8 {
		t.Errorf("kept %d bytes, not the log's last whole lines", len(kept))
	}
}

func repoWorkflow(s3 *wfv1.S3ArtifactRepository) *wfv1.Workflow {
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "jobs", UID: "u-1",
		CreationTimestamp: metav1.NewTime(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC))}}
	if s3 != nil {
		wf.Status.ArtifactRepositoryRef = &wfv1.ArtifactRepositoryRefStatus{ArtifactRepository: &wfv1.ArtifactRepository{S3: s3}}
	}
	return wf
}

func TestLocation(t *testing.T) {
	bucket := wfv1.S3Bucket{Bucket: "logs", Endpoint: "s3.local:9000",
		AccessKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s3"}, Key: "accesskey"}}
	for _, tc := range []struct {
		name    string
		wf      *wfv1.Workflow
		key     string
		wantErr string
	}{
		{"argo's default key", repoWorkflow(&wfv1.S3ArtifactRepository{S3Bucket: bucket}), "nightly/nightly-1a2b-driver/driver.log", ""},
		{"key prefix", repoWorkflow(&wfv1.S3ArtifactRepository{S3Bucket: bucket, KeyPrefix: "argo/"}), "argo/nightly/nightly-1a2b-driver/driver.log", ""},
		{"key format", repoWorkflow(&wfv1.S3ArtifactRepository{S3Bucket: bucket, KeyFormat: "{{workflow.namespace}}/{{workflow.creationTimestamp.Y}}/{{workflow.creationTimestamp.m}}/{{ workflow.name }}/{{pod.name}}"}), "jobs/2026/03/nightly/nightly-1a2b-driver/driver.log", ""},
		{"a key cannot climb out", repoWorkflow(&wfv1.S3ArtifactRepository{S3Bucket: bucket, KeyFormat: "../../{{pod.name}}"}), "nightly-1a2b-driver/driver.log", ""},
		{"a variable a driver has no value for", repoWorkflow(&wfv1.S3ArtifactRepository{S3Bucket: bucket, KeyFormat: "{{workflow.labels.team}}/{{pod.name}}"}), "", "uses {{workflow.labels.team}}"},
		{"no repository", repoWorkflow(nil), "", "has no artifact repository"},
		{"no bucket", repoWorkflow(&wfv1.S3ArtifactRepository{}), "", "names no bucket"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			loc, err := Location(tc.wf, "nightly-1a2b-driver")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if loc.Key != tc.key || loc.Bucket != "logs" || loc.Endpoint != "s3.local:9000" || loc.AccessKeySecret.Name != "s3" {
				t.Errorf("got %+v, want key %s in bucket logs", loc, tc.key)
			}
		})
	}
	gcs := repoWorkflow(nil)
	gcs.Status.ArtifactRepositoryRef = &wfv1.ArtifactRepositoryRefStatus{ArtifactRepository: &wfv1.ArtifactRepository{GCS: &wfv1.GCSArtifactRepository{}}}
	if _, err := Location(gcs, "d"); err == nil || !strings.Contains(err.Error(), "not S3") {
		t.Errorf("a GCS repository: err = %v", err)
	}
}

func TestJobsRunOnceAndBounded(t *testing.T) {
	j := NewJobs(1)
	release := make(chan struct{})
	var runs, running, peak atomic.Int32
	run := func(context.Context) error {
		runs.Add(1)
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		<-release
		running.Add(-1)
		return errors.New("s3 down")
	}
	ctx := context.Background()
	for range 3 {
		if done, _ := j.Start(ctx, "a", run); done {
			t.Fatal("an upload still held reported done")
		}
		if done, _ := j.Start(ctx, "b", run); done {
			t.Fatal("an upload still waiting reported done")
		}
	}
	close(release)
	j.Wait("a")
	j.Wait("b")
	done, err := j.Start(ctx, "a", run)
	if !done || err == nil || err.Error() != "s3 down" {
		t.Errorf("finished upload: done=%v err=%v", done, err)
	}
	if runs.Load() != 2 || peak.Load() != 1 {
		t.Errorf("runs=%d (want 2: one per driver), peak at once=%d (want 1)", runs.Load(), peak.Load())
	}
	j.Forget("a")
	_, _ = j.Start(ctx, "a", func(context.Context) error { return nil })
	j.Wait("a")
	if done, err := j.Start(ctx, "a", run); !done || err != nil {
		t.Errorf("after Forget the upload runs again: done=%v err=%v", done, err)
	}
}

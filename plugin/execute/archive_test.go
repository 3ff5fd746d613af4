package execute

import (
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkplug-io/sparkplug/plugin/spark"
)

func TestDriverLogArtifactIsRebuiltFromTheWorkflowsRepository(t *testing.T) {
	wf := &wfv1.Workflow{ObjectMeta: metav1.ObjectMeta{Name: "etl", Namespace: "jobs"}}
	wf.Status.ArtifactRepositoryRef = &wfv1.ArtifactRepositoryRefStatus{ArtifactRepository: &wfv1.ArtifactRepository{
		S3: &wfv1.S3ArtifactRepository{S3Bucket: wfv1.S3Bucket{Bucket: "logs", Endpoint: "s3.jobs:9000",
			AccessKeySecret: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s3-creds"}, Key: "a"}}}}}
	driver := func(ann map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "etl-1a2b3c4d-driver", Annotations: ann}}
	}
	for _, tc := range []struct {
		name    string
		wf      *wfv1.Workflow
		ann     map[string]string
		wantKey string
	}{
		{"archived", wf, map[string]string{spark.AnnotationDriverLog: "etl/etl-1a2b3c4d-driver/driver.log"}, "etl/etl-1a2b3c4d-driver/driver.log"},
		{"not asked", wf, nil, ""},
		{"a key that is not this driver's is not believed", wf, map[string]string{spark.AnnotationDriverLog: "other/secret-report.csv"}, ""},
		{"no repository any more", &wfv1.Workflow{ObjectMeta: wf.ObjectMeta}, map[string]string{spark.AnnotationDriverLog: "etl/etl-1a2b3c4d-driver/driver.log"}, ""},
		{"could not be stored", wf, map[string]string{spark.AnnotationDriverLogError: "store s3://logs/x: Access Denied"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			art := driverLogOf(tc.wf, driver(tc.ann))
			if tc.wantKey == "" {
				if art != nil {
					t.Errorf("artifact %+v, want none", art)
				}
				return
			}
			if art == nil || art.Name != "driver-log" || art.S3 == nil {
				t.Fatalf("artifact %+v, want S3 driver-log", art)
			}
			if art.S3.Key != tc.wantKey || art.S3.Bucket != "logs" || art.S3.Endpoint != "s3.jobs:9000" || art.S3.AccessKeySecret.Name != "s3-creds" {
				t.Errorf("artifact location %+v, want the repository's with key %s", art.S3, tc.wantKey)
			}
		})
	}
}

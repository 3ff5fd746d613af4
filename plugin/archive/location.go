package archive

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"strings"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
)

// FileName is the name of the stored log under the run's key.
const FileName = "driver.log"


// ErrNoRepository: the workflow has no artifact repository Argo resolved.
var ErrNoRepository = errors.New("the workflow has no artifact repository: configure one in the workflow-controller ConfigMap (artifactRepository) or an artifact-repositories ConfigMap in the namespace")

var placeholder = regexp.MustCompile(`\{\{\s*([^}]*?)\s*\}\}`)

// Location is where a driver's log goes in the workflow's repository: the
// repository's bucket and credentials' names, and the key Argo would give
// the driver pod's artifacts (keyFormat, else keyPrefix/{{workflow.name}}/
// {{pod.name}}), then FileName. It holds Secret names, never values.
func Location(wf *wfv1.Workflow, driverPod string) (*wfv1.S3Artifact, error) {
	var repo *wfv1.ArtifactRepository
	if ref := wf.Status.ArtifactRepositoryRef; ref != nil {
		repo = ref.ArtifactRepository
	}
	if repo == nil {
		return nil, ErrNoRepository
	}
	if repo.S3 == nil {
		return nil, fmt.Errorf("the workflow's artifact repository is not S3: sparkplug archives driver logs in S3 and S3-compatible repositories only")
	}
	s3 := repo.S3
	if s3.Bucket == "" {
		return nil, fmt.Errorf("the workflow's S3 artifact repository names no bucket")
	}
	format := s3.KeyFormat
	if format == "" {
		format = path.Join(s3.KeyPrefix, wfv1.DefaultArchivePattern)
	}
	key, err := expand(format, wf, driverPod)
	if err != nil {
		return nil, err
	}
	return &wfv1.S3Artifact{S3Bucket: s3.S3Bucket, Key: path.Join(key, FileName)}, nil
}

// expand fills the Argo variables a keyFormat may use for a driver pod
// (standing for Argo's {{pod.name}}). Another variable is an error rather
// than a key Argo would not have made.
func expand(format string, wf *wfv1.Workflow, pod string) (string, error) {
	t := wf.CreationTimestamp.UTC()
	vars := map[string]string{
		"workflow.name":                wf.Name,
		"workflow.namespace":           wf.Namespace,
		"workflow.uid":                 string(wf.UID),
		"pod.name":                     pod,
		"workflow.creationTimestamp.Y": t.Format("2006"),
		"workflow.creationTimestamp.m": t.Format("01"),
		"workflow.creationTimestamp.d": t.Format("02"),
		"workflow.creationTimestamp.H": t.Format("15"),
		"workflow.creationTimestamp.M": t.Format("04"),
		"workflow.creationTimestamp.S": t.Format("05"),
	}
	var unknown []string
	out := placeholder.ReplaceAllStringFunc(format, func(m string) string {
		name := placeholder.FindStringSubmatch(m)[1]
		v, ok := vars[name]
		if !ok {
			unknown = append(unknown, name)
		}
		return v
	})
	if len(unknown) > 0 {
		return "", fmt.Errorf("the repository's keyFormat %q uses {{%s}}, which a driver log has no value for: sparkplug fills %s", format, unknown[0], knownVariables)
	}
	out = strings.Trim(path.Clean("/"+out), "/")
	if out == "" || out == "." {
		return "", fmt.Errorf("the repository's keyFormat %q gives an empty key", format)
	}
	return out, nil
}

// knownVariables are the keyFormat variables expand fills.
const knownVariables = "workflow.name, workflow.namespace, workflow.uid, pod.name and workflow.creationTimestamp.{Y,m,d,H,M,S}"

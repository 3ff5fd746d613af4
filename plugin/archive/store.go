package archive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Defaults of Settings.
const (
	DefaultMaxBytes    = 8 << 20
	DefaultTimeout     = 2 * time.Minute
	DefaultConcurrency = 2
	// MinMaxBytes is the least MaxBytes: room for a failure's last lines.
	MinMaxBytes = 1024
)

// Settings bound what archiving may take.
type Settings struct {
	// MaxBytes is the most of a log stored (its end); it is also the most
	// memory one upload holds.
	MaxBytes int
	// Timeout bounds one upload: reading the log and storing it.
	Timeout time.Duration
	// Concurrency is how many uploads run at once.
	Concurrency int
}

// Validate checks s.
func (s Settings) Validate() error {
	var errs []error
	if s.MaxBytes < MinMaxBytes {
		errs = append(errs, fmt.Errorf("the most bytes of a log archived must be at least %d, got %d", MinMaxBytes, s.MaxBytes))
	}
	if s.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("the archive timeout must be positive, got %s", s.Timeout))
	}
	if s.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("at least one upload must be allowed at once, got %d", s.Concurrency))
	}
	return errors.Join(errs...)
}

// Store reads driver logs and puts them in S3.
type Store struct {
	Kube     kubernetes.Interface
	Settings Settings
}

// Put stores the log of container in pod at loc, with the credentials the
// location names (Secrets in namespace), and returns how many bytes it
// stored.
func (s *Store) Put(ctx context.Context, loc *wfv1.S3Artifact, namespace, pod, container string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Settings.Timeout)
	defer cancel()
	client, err := s.client(ctx, loc, namespace)
	if err != nil {
		return 0, err
	}
	stream, err := s.Kube.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container}).Stream(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the log of %s: %w", pod, err)
	}
	defer stream.Close()
	data, err := readTail(stream, s.Settings.MaxBytes)
	if err != nil {
		return 0, fmt.Errorf("read the log of %s: %w", pod, err)
	}
	_, err = client.PutObject(ctx, loc.Bucket, loc.Key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: "text/plain; charset=utf-8"})
	if err != nil {
		return 0, fmt.Errorf("store s3://%s/%s: %w", loc.Bucket, loc.Key, err)
	}
	return len(data), nil
}

// putAttempts is how often PutWithRetries tries, waiting retryWait, then
// twice as long, between tries.
const putAttempts = 4

var retryWait = time.Second

// PutWithRetries is Put, tried again after a failure (a kubelet that
// does not have the log yet, an S3 server that hiccups) up to putAttempts
// times within Settings.Timeout; the error is the last one.
func (s *Store) PutWithRetries(ctx context.Context, loc *wfv1.S3Artifact, namespace, pod, container string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.Settings.Timeout)
	defer cancel()
	wait := retryWait
	for attempt := 1; ; attempt++ {
		n, err := s.Put(ctx, loc, namespace, pod, container)
		if err == nil || attempt == putAttempts {
			return n, err
		}
		select {
		case <-ctx.Done():
			return 0, err
		case <-time.After(wait):
		}
		wait *= 2
	}
}

// client is an S3 client for the location, as Argo's own S3 driver makes
// one: static keys from the named Secrets, or, with useSDKCreds, the
// environment and the instance's or pod's IAM role.
func (s *Store) client(ctx context.Context, loc *wfv1.S3Artifact, namespace string) (*minio.Client, error) {
	if loc.CASecret != nil || loc.RoleARN != "" || loc.EncryptionOptions != nil {
		return nil, fmt.Errorf("the S3 repository sets caSecret, roleARN or encryptionOptions, which sparkplug's log archiving does not support yet")
	}
	endpoint := loc.Endpoint
	if endpoint == "" {
		endpoint = "s3.amazonaws.com"
	}
	secure := loc.Insecure == nil || !*loc.Insecure
	// Argo takes a bare host:port; some write a URL.
	if u, err := url.Parse(endpoint); err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
		endpoint, secure = u.Host, u.Scheme == "https"
	}
	var creds *credentials.Credentials
	switch {
	case loc.AccessKeySecret != nil && loc.SecretKeySecret != nil:
		access, err := s.secretValue(ctx, namespace, loc.AccessKeySecret)
		if err != nil {
			return nil, err
		}
		secret, err := s.secretValue(ctx, namespace, loc.SecretKeySecret)
		if err != nil {
			return nil, err
		}
		token := ""
		if loc.SessionTokenSecret != nil {
			if token, err = s.secretValue(ctx, namespace, loc.SessionTokenSecret); err != nil {
				return nil, err
			}
		}
		creds = credentials.NewStaticV4(strings.TrimSpace(access), strings.TrimSpace(secret), strings.TrimSpace(token))
	case loc.UseSDKCreds:
		creds = credentials.NewChainCredentials([]credentials.Provider{&credentials.EnvAWS{}, &credentials.IAM{}})
	default:
		return nil, fmt.Errorf("the S3 repository names no accessKeySecret and secretKeySecret and does not set useSDKCreds")
	}
	return minio.New(endpoint, &minio.Options{Creds: creds, Secure: secure, Region: loc.Region})
}

// secretValue reads one key of a Secret. Errors name the Secret and key,
// never a value.
func (s *Store) secretValue(ctx context.Context, namespace string, sel *corev1.SecretKeySelector) (string, error) {
	sec, err := s.Kube.CoreV1().Secrets(namespace).Get(ctx, sel.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read the repository's Secret %s (the plugin's Role must allow get on it: the chart's logArchive.secretNames): %w", sel.Name, err)
	}
	v, ok := sec.Data[sel.Key]
	if !ok {
		return "", fmt.Errorf("the repository's Secret %s has no key %q", sel.Name, sel.Key)
	}
	return string(v), nil
}

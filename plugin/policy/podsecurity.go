package policy

import (
	"maps"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	psaapi "k8s.io/pod-security-admission/api"
	psa "k8s.io/pod-security-admission/policy"
)

// evaluator is the upstream Pod Security Standards evaluator, the one the
// API server's PodSecurity admission runs; made once.
var evaluator = sync.OnceValues(func() (psa.Evaluator, error) {
	return psa.NewEvaluator(psa.DefaultChecks())
})

// podSecurity: each role's pod, as Spark will create it, meets the level
// (pod-security-level), at the newest version of the standards this
// library knows.
func (c *checker) podSecurity() {
	if c.p.PodSecurity == "" {
		return
	}
	ev, err := evaluator()
	if err != nil {
		c.refuse("spark", "pod-security-level", "the Pod Security Standards cannot be evaluated: %s", err)
		return
	}
	lv := psaapi.LevelVersion{Level: psaapi.Level(c.p.PodSecurity), Version: psaapi.LatestVersion()}
	for _, r := range c.roles() {
		pod := asSparkMakesIt(r, c.objs.Conf)
		for _, res := range ev.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec) {
			if res.Allowed {
				continue
			}
			detail := res.ForbiddenReason
			if res.ForbiddenDetail != "" {
				detail += " (" + res.ForbiddenDetail + ")"
			}
			c.refuse(r.field, "pod-security-level", "the %s pod does not meet Pod Security Standard %q: %s", strings.TrimPrefix(r.field, "spark."), c.p.PodSecurity, detail)
		}
	}
}

// asSparkMakesIt is a role's pod with the volumes Spark adds from the conf
// (MountVolumesFeatureStep, MountSecretsFeatureStep): what a level is
// about is the pod that runs, and a hostPath given in sparkConf is in no
// template.
func asSparkMakesIt(r role, conf map[string]string) *corev1.Pod {
	pod := r.pod.DeepCopy()
	have := func(name string) bool {
		return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == name })
	}
	for _, k := range slices.Sorted(maps.Keys(conf)) {
		if name, ok := strings.CutPrefix(k, r.secrets); ok {
			v := corev1.Volume{Name: name + "-volume", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: name}}}
			if !have(v.Name) {
				pod.Spec.Volumes = append(pod.Spec.Volumes, v)
			}
			continue
		}
		rest, ok := strings.CutPrefix(k, r.volumes)
		if !ok {
			continue
		}
		typ, rest, _ := strings.Cut(rest, ".")
		name, _, _ := strings.Cut(rest, ".")
		if name == "" || have(name) {
			continue
		}
		pod.Spec.Volumes = append(pod.Spec.Volumes, sparkVolume(typ, name, conf[r.volumes+typ+"."+name+".options.path"]))
	}
	return pod
}

// sparkVolume is a volume of one of the types Spark's conf knows
// (KubernetesVolumeUtils); an unknown type has no source, which the
// restricted level refuses and Spark would too.
func sparkVolume(typ, name, path string) corev1.Volume {
	v := corev1.Volume{Name: name}
	switch typ {
	case "hostPath":
		v.HostPath = &corev1.HostPathVolumeSource{Path: path}
	case "emptyDir":
		v.EmptyDir = &corev1.EmptyDirVolumeSource{}
	case "nfs":
		v.NFS = &corev1.NFSVolumeSource{Path: path}
	case "persistentVolumeClaim":
		v.PersistentVolumeClaim = &corev1.PersistentVolumeClaimVolumeSource{}
	}
	return v
}

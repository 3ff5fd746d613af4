package spec

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// wantErr is an expected error: its exact field path and a substring of
// its whole message.
type wantErr struct {
	field string
	msg   string
}

// checkErrs asserts that errs are exactly want, in order.
func checkErrs(t *testing.T, errs field.ErrorList, want []wantErr) {
	t.Helper()
	ok := len(errs) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = errs[i].Field == want[i].field && strings.Contains(errs[i].Error(), want[i].msg)
	}
	if ok {
		return
	}
	var got strings.Builder
	for _, e := range errs {
		got.WriteString("\n  " + e.Error())
	}
	var exp strings.Builder
	for _, w := range want {
		exp.WriteString("\n  " + w.field + ": ..." + w.msg + "...")
	}
	t.Errorf("errors:%s\nwant:%s", got.String(), exp.String())
}

// decodeAll decodes raw as ParseWith does and returns the problems kept.
func decodeAll(raw []byte) (*SparkApplicationSpec, field.ErrorList) {
	probs := &problems{decoded: paths{}}
	s := decode(raw, probs)
	return s, probs.errs
}

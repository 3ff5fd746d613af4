package setting

import (
	"errors"
	"testing"
)

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"one setting", Errorf("requeue-pending", "must not be negative, got %s", "-1s"), "--requeue-pending: must not be negative, got -1s"},
		{"several, joined", errors.Join(Errorf("a", "bad"), Errorf("b", "worse")), "--a: bad\n--b: worse"},
		{"a wrapped one", errors.Join(errors.New("plain"), Errorf("c", "odd")), "plain\n--c: odd"},
		{"no setting", errors.New("plain"), "plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Flags(tc.err).Error(); got != tc.want {
				t.Fatalf("Flags = %q, want %q", got, tc.want)
			}
		})
	}
	if Flags(nil) != nil {
		t.Fatal("Flags(nil) is not nil")
	}
	if got := Errorf("x", "y").Error(); got != "x: y" {
		t.Fatalf("Error() = %q", got)
	}
}

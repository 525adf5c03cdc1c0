package lockout

import (
	"reflect"
	"testing"
)

func TestNewLockouts(t *testing.T) {
	before := map[string]bool{"sshd would no longer listen on port 2222 (listens on 22)": true}
	keep, warn := newLockouts([]string{"sshd would no longer listen on port 2222 (listens on 22)", "PermitRootLogin no"}, before, nil)
	if !reflect.DeepEqual(keep, []string{"PermitRootLogin no"}) {
		t.Errorf("kept %q", keep)
	}
	if len(warn) != 1 || warn[0] != "already before the change: sshd would no longer listen on port 2222 (listens on 22)" {
		t.Errorf("warnings %q", warn)
	}
	if keep, _ := newLockouts([]string{"x"}, nil, nil); len(keep) != 1 {
		t.Errorf("without a baseline every lockout counts: %q", keep)
	}
}

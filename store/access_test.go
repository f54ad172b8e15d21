package store

import (
	"errors"
	"testing"
)

// TestRoleAllows checks the rights table: each role holds the rights up
// to its own, and no role holds the zero Right (a need not named) or a
// value that is no right.
func TestRoleAllows(t *testing.T) {
	rights := []Right{RightRead, RightReveal, RightWrite, RightAdmin, RightOwn}
	top := map[Role]Right{RoleViewer: RightRead, RoleReader: RightReveal, RoleEditor: RightWrite, RoleAdmin: RightAdmin, RoleOwner: RightOwn}
	for role, strongest := range top {
		for _, need := range rights {
			if got, want := role.Allows(need), need <= strongest; got != want {
				t.Errorf("%s.Allows(%d) = %v, want %v", role, need, got, want)
			}
		}
		for _, need := range []Right{0, -1, RightOwn + 1} {
			if role.Allows(need) {
				t.Errorf("%s.Allows(%d) = true, want false: not a right", role, need)
			}
		}
	}
	if Role("").Allows(RightRead) || Role("root").Allows(RightRead) {
		t.Error("an empty or unknown role holds a right")
	}
}

// TestCheckUndeclaredNeed checks Path.Check: a caller with a zero Need is
// refused even as the owner; the zero Caller passes it; a missing project
// is still reported first.
func TestCheckUndeclaredNeed(t *testing.T) {
	s := Standing{ProjectID: "p1", OwnerID: "alice"}
	owner := Path{Caller: Caller{UserID: "alice"}, Project: "p"}
	if err := owner.Check(true, s); !errors.Is(err, ErrPermissionDenied) {
		t.Errorf("the owner without a need: %v, want ErrPermissionDenied", err)
	}
	owner.Need = RightOwn
	if err := owner.Check(true, s); err != nil {
		t.Errorf("the owner needing RightOwn: %v", err)
	}
	if err := (Path{Project: "p"}).Check(true, s); err != nil {
		t.Errorf("the zero Caller without a need: %v", err)
	}
	var nf *NotFoundError
	if err := (Path{Caller: Caller{UserID: "alice"}, Project: "p"}).Check(false, Standing{}); !errors.As(err, &nf) || nf.Kind != "project" {
		t.Errorf("a missing project without a need: %v, want project not found", err)
	}
}

package store

import "time"

// Project is the top of the hierarchy. Its name is unique across the
// whole store and it belongs to one user.
type Project struct {
	ID              string
	Name            string
	OwnerID         string
	CreatedAt       time.Time
	UpdatedAt       time.Time
	CollectionCount int
	// Revision is the revision of the newest entry of the project's audit
	// log (0 before the first).
	Revision int64
	// Role is the caller's role on the project, as the project methods
	// (FindProjects, FindProject, CreateProject, RenameProject) report it.
	Role Role
}

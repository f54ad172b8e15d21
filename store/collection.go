package store

import "time"

// Collection groups clusters inside a project. Its name is unique within
// its project.
type Collection struct {
	ID        string
	Name      string
	Project   string // the project's name
	CreatedAt time.Time
	UpdatedAt time.Time
	// ClusterCount counts the collection's clusters.
	ClusterCount int
	// RecordCount counts the records of all its clusters.
	RecordCount int
}

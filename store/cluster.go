package store

import "time"

// Cluster groups records inside a collection. Its name is unique within
// its collection.
type Cluster struct {
	ID          string
	Name        string
	Project     string // the project's name
	Collection  string // the collection's name
	CreatedAt   time.Time
	UpdatedAt   time.Time
	RecordCount int
	// Records holds every record of the cluster when it was asked for
	// (Store.FindCluster with records true), in name order; nil otherwise.
	Records []*Record
}

package store

import (
	"strconv"
	"time"
)

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
	// State counts the changes of the cluster's stored state
	// (docs/api.md#cluster-tags): a store adds at least 1 to it, in the
	// transaction of the change, with every create, update (to the same
	// value too), rename, restore and delete of one of its records, by
	// whatever write path (single writes, batches, imports, promotions),
	// and with every rename of the cluster, its collection or its project
	// to another name; nothing else changes it (not reads, nor key
	// rotation, nor changes elsewhere). It never goes back, so that
	// ETag names each state of the cluster once. A new cluster starts at
	// 0.
	State int64
	// Records holds every record of the cluster when it was asked for
	// (Store.FindCluster with records true), in name order; nil otherwise.
	Records []*Record
}

// ClusterStateKeeper is the optional capability of a Store that keeps
// Cluster.State as its doc says. hds gives GET K and its environment file
// a tag, and answers their If-None-Match, only for a store that has it
// and says true: a store that left State at 0 would name every state of
// a cluster with one tag, and a client polling with If-None-Match would
// be told 304 about a cluster that changed. The memory, PostgreSQL and
// SQLite stores have it.
type ClusterStateKeeper interface {
	// KeepsClusterState reports whether the store keeps Cluster.State.
	KeepsClusterState() bool
}

// KeepsClusterState reports whether s keeps Cluster.State
// (ClusterStateKeeper).
func KeepsClusterState(s Store) bool {
	k, ok := s.(ClusterStateKeeper)
	return ok && k.KeepsClusterState()
}

// ETag returns the entity tag of the cluster's stored state, as GET K
// and GET K?format=env give it (docs/api.md#cluster-tags): a strong tag
// made of the cluster's id and State, so that no other cluster and no
// other state of this one has it.
func (k *Cluster) ETag() string {
	return `"` + k.ID + ".k" + strconv.FormatInt(k.State, 10) + `"`
}

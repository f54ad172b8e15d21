package store

import (
	"errors"
	"fmt"
)

// Quotas bound what one user, cluster or project may hold
// (docs/api.md#8-limits-rate-limits-and-quotas, config limits.*). A field left 0 takes its value in DefaultQuotas,
// so that a Quotas setting one bound keeps the others; Unlimited means no
// bound (see Effective). Stores check them
// atomically with the write that would pass them: such a write fails with
// a *QuotaError and changes nothing. A write that does not grow what a
// quota counts (a delete, a shorter value) always passes, even when a
// lowered quota is already passed.
type Quotas struct {
	// MaxRecordsPerCluster bounds the records of one cluster.
	MaxRecordsPerCluster int
	// MaxBytesPerProject bounds the bytes of one project: the names of its
	// collections, clusters and records and the values of its records
	// (as stored: credentials sealed), current states and kept versions
	// of the history alike (a version counts its name and value).
	MaxBytesPerProject int64
	// MaxProjectsPerUser bounds the projects one owner has.
	MaxProjectsPerUser int
	// MaxWebhooksPerProject bounds the webhooks of one project
	// (limits.max_webhooks_per_project, docs/api.md#22-webhooks). Besides
	// 0 (the default, 20) and Unlimited, it takes NoneAllowed: no
	// webhook at all. (The configuration's 0 is Unlimited, as for every
	// quota of limits.*.)
	MaxWebhooksPerProject int
	// MaxSnapshotsPerProject bounds the snapshots of one project that are
	// not automatic (limits.max_snapshots_per_project,
	// docs/api.md#snapshots-and-rollback-v13).
	MaxSnapshotsPerProject int
}

// DefaultQuotas are the quotas of
// docs/api.md#8-limits-rate-limits-and-quotas, which both shipped stores
// apply unless told otherwise.
var DefaultQuotas = Quotas{MaxRecordsPerCluster: 100_000, MaxBytesPerProject: 256 << 20, MaxProjectsPerUser: 1_000,
	MaxWebhooksPerProject: 20, MaxSnapshotsPerProject: 100}

// Unlimited, as the value of a field of Quotas, means no bound. (A field
// left 0 takes its default: see Quotas.Effective.)
const Unlimited = -1

// NoneAllowed, as the value of Quotas.MaxWebhooksPerProject, allows no
// webhook at all: a bound of 0, which the field's 0 (its default)
// cannot say.
const NoneAllowed = -2

// NoQuotas bounds nothing: every field is Unlimited.
var NoQuotas = Quotas{MaxRecordsPerCluster: Unlimited, MaxBytesPerProject: Unlimited, MaxProjectsPerUser: Unlimited,
	MaxWebhooksPerProject: Unlimited, MaxSnapshotsPerProject: Unlimited}

// Effective returns the quotas q stands for, as stores enforce them: a
// field left 0 takes its value in DefaultQuotas, and a negative field
// (Unlimited) means no bound, which the Check methods read as such.
// Every shipped store applies it in its WithQuotas and SetQuotas.
func (q Quotas) Effective() Quotas {
	if q.MaxRecordsPerCluster == 0 {
		q.MaxRecordsPerCluster = DefaultQuotas.MaxRecordsPerCluster
	}
	if q.MaxBytesPerProject == 0 {
		q.MaxBytesPerProject = DefaultQuotas.MaxBytesPerProject
	}
	if q.MaxProjectsPerUser == 0 {
		q.MaxProjectsPerUser = DefaultQuotas.MaxProjectsPerUser
	}
	if q.MaxWebhooksPerProject == 0 {
		q.MaxWebhooksPerProject = DefaultQuotas.MaxWebhooksPerProject
	}
	if q.MaxSnapshotsPerProject == 0 {
		q.MaxSnapshotsPerProject = DefaultQuotas.MaxSnapshotsPerProject
	}
	return q
}

// The names of the quotas, as the configuration spells them.
const (
	QuotaRecordsPerCluster   = "max_records_per_cluster"
	QuotaBytesPerProject     = "max_bytes_per_project"
	QuotaProjectsPerUser     = "max_projects_per_user"
	QuotaWebhooksPerProject  = "max_webhooks_per_project"
	QuotaSnapshotsPerProject = "max_snapshots_per_project"
)

// ErrQuotaExceeded reports a write refused because it would pass a quota.
// Stores return a *QuotaError, which matches it.
var ErrQuotaExceeded = errors.New("quota exceeded")

// QuotaError names the quota a write would pass and its bound. It matches
// ErrQuotaExceeded; its message is safe to show to the client.
type QuotaError struct {
	Quota string // QuotaRecordsPerCluster, QuotaBytesPerProject or QuotaProjectsPerUser
	Limit int64
}

// Error returns, for example, "max_records_per_cluster: at most 100000
// records per cluster".
func (e *QuotaError) Error() string {
	switch e.Quota {
	case QuotaRecordsPerCluster:
		return fmt.Sprintf("%s: at most %d records per cluster", e.Quota, e.Limit)
	case QuotaBytesPerProject:
		return fmt.Sprintf("%s: at most %d bytes of names and values per project", e.Quota, e.Limit)
	case QuotaProjectsPerUser:
		return fmt.Sprintf("%s: at most %d projects per user", e.Quota, e.Limit)
	case QuotaWebhooksPerProject:
		return fmt.Sprintf("%s: at most %d webhooks per project", e.Quota, e.Limit)
	case QuotaSnapshotsPerProject:
		return fmt.Sprintf("%s: at most %d snapshots per project", e.Quota, e.Limit)
	}
	return fmt.Sprintf("%s: at most %d", e.Quota, e.Limit)
}

// Is reports whether target is ErrQuotaExceeded.
func (e *QuotaError) Is(target error) bool { return target == ErrQuotaExceeded }

// QuotaSetter is implemented by stores that enforce Quotas (both shipped
// stores do); hds.WithQuotas sets them through it. SetQuotas is safe to
// call while the store serves: writes that start after it use
// q.Effective().
type QuotaSetter interface {
	SetQuotas(q Quotas)
}

// CheckRecords returns the *QuotaError of a cluster that holds n records
// and would get one more, or nil. The Check methods read q as it is: a
// field 0 or less bounds nothing (call Effective first).
func (q Quotas) CheckRecords(n int) error {
	if q.MaxRecordsPerCluster > 0 && n >= q.MaxRecordsPerCluster {
		return &QuotaError{Quota: QuotaRecordsPerCluster, Limit: int64(q.MaxRecordsPerCluster)}
	}
	return nil
}

// CheckProjects returns the *QuotaError of an owner who has n projects
// and would get one more, or nil.
func (q Quotas) CheckProjects(n int) error {
	if q.MaxProjectsPerUser > 0 && n >= q.MaxProjectsPerUser {
		return &QuotaError{Quota: QuotaProjectsPerUser, Limit: int64(q.MaxProjectsPerUser)}
	}
	return nil
}

// CheckWebhooks returns the *QuotaError of a project that has n webhooks
// and would get one more, or nil. NoneAllowed refuses every one.
func (q Quotas) CheckWebhooks(n int) error {
	switch limit := q.MaxWebhooksPerProject; {
	case limit == NoneAllowed:
		return &QuotaError{Quota: QuotaWebhooksPerProject, Limit: 0}
	case limit > 0 && n >= limit:
		return &QuotaError{Quota: QuotaWebhooksPerProject, Limit: int64(limit)}
	}
	return nil
}

// CheckBytes returns the *QuotaError of a project that holds used bytes
// and would grow by delta, or nil. A delta of 0 or less always passes.
func (q Quotas) CheckBytes(used, delta int64) error {
	if delta > 0 && q.MaxBytesPerProject > 0 && used+delta > q.MaxBytesPerProject {
		return &QuotaError{Quota: QuotaBytesPerProject, Limit: q.MaxBytesPerProject}
	}
	return nil
}

// CheckSnapshots returns the *QuotaError of a project that has n snapshots
// not automatic and would get one more, or nil.
func (q Quotas) CheckSnapshots(n int) error {
	if q.MaxSnapshotsPerProject > 0 && n >= q.MaxSnapshotsPerProject {
		return &QuotaError{Quota: QuotaSnapshotsPerProject, Limit: int64(q.MaxSnapshotsPerProject)}
	}
	return nil
}

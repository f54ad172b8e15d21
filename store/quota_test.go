package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/hds-go/hds/store"
)

// TestQuotasEffective checks the meaning of a Quotas field: 0 takes its
// value in DefaultQuotas (setting one bound keeps the others), Unlimited
// bounds nothing, any other value is the bound.
func TestQuotasEffective(t *testing.T) {
	d := store.DefaultQuotas
	assert.Equal(t, d, store.Quotas{}.Effective(), "the zero Quotas")
	assert.Equal(t, store.Quotas{MaxRecordsPerCluster: 10, MaxBytesPerProject: d.MaxBytesPerProject, MaxProjectsPerUser: d.MaxProjectsPerUser,
		MaxWebhooksPerProject: 20, MaxSnapshotsPerProject: 100}, store.Quotas{MaxRecordsPerCluster: 10}.Effective(), "only MaxRecordsPerCluster set")
	assert.Equal(t, store.Quotas{MaxRecordsPerCluster: store.Unlimited, MaxBytesPerProject: 5, MaxProjectsPerUser: d.MaxProjectsPerUser,
		MaxWebhooksPerProject: 20, MaxSnapshotsPerProject: 100}, store.Quotas{MaxRecordsPerCluster: store.Unlimited, MaxBytesPerProject: 5}.Effective(), "Unlimited and a bound")
	assert.Equal(t, store.NoneAllowed, store.Quotas{MaxWebhooksPerProject: store.NoneAllowed}.Effective().MaxWebhooksPerProject,
		"NoneAllowed is kept")
	assert.Equal(t, store.NoQuotas, store.NoQuotas.Effective(), "NoQuotas")

	// What the stores check: the effective quotas of the zero Quotas
	// bound at the defaults; Unlimited bounds nothing.
	z := store.Quotas{}.Effective()
	assert.Error(t, z.CheckRecords(d.MaxRecordsPerCluster), "records at the default")
	assert.Error(t, z.CheckProjects(d.MaxProjectsPerUser), "projects at the default")
	assert.Error(t, z.CheckBytes(d.MaxBytesPerProject, 1), "bytes past the default")
	assert.Error(t, z.CheckSnapshots(d.MaxSnapshotsPerProject), "snapshots at the default")
	assert.NoError(t, z.CheckSnapshots(d.MaxSnapshotsPerProject-1), "snapshots below the default")
	assert.NoError(t, store.NoQuotas.CheckSnapshots(1_000_000), "Unlimited snapshots")
	n := store.NoQuotas.Effective()
	assert.NoError(t, n.CheckRecords(1<<30), "records, Unlimited")
	assert.NoError(t, n.CheckProjects(1<<30), "projects, Unlimited")
	assert.NoError(t, n.CheckBytes(1<<40, 1<<40), "bytes, Unlimited")
	assert.NoError(t, n.CheckWebhooks(1<<20), "webhooks, Unlimited")

	// Webhooks: the default 20, and NoneAllowed refusing the first.
	assert.NoError(t, z.CheckWebhooks(19), "a 20th webhook")
	var qe *store.QuotaError
	if assert.ErrorAs(t, z.CheckWebhooks(20), &qe, "a 21st webhook") {
		assert.Equal(t, "max_webhooks_per_project: at most 20 webhooks per project", qe.Error())
	}
	if assert.ErrorAs(t, store.Quotas{MaxWebhooksPerProject: store.NoneAllowed}.CheckWebhooks(0), &qe, "NoneAllowed") {
		assert.Equal(t, int64(0), qe.Limit)
	}
}

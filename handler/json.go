package handler

import (
	"strconv"

	"github.com/hds-go/hds/internal/jsonstr"
	"github.com/hds-go/hds/store"
)

// The JSON shapes of docs/api.md#data-model.

type projectOut struct {
	ID              string  `json:"id"`
	Name            string  `json:"name"`
	OwnerID         string  `json:"owner_id"`
	CreatedAt       string  `json:"created_at"`
	UpdatedAt       string  `json:"updated_at"`
	CollectionCount int     `json:"collection_count"`
	Role            *string `json:"role"` // null: no role (PUT P/owner by a server administrator)
}

func projectJSON(p *store.Project) projectOut {
	var role *string
	if p.Role != "" {
		r := string(p.Role)
		role = &r
	}
	return projectOut{p.ID, p.Name, p.OwnerID, formatTime(p.CreatedAt), formatTime(p.UpdatedAt), p.CollectionCount, role}
}

type collectionOut struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Project      string `json:"project"`
	CreatedAt    string `json:"created_at"`
	UpdatedAt    string `json:"updated_at"`
	ClusterCount int    `json:"cluster_count"`
	RecordCount  int    `json:"record_count"`
}

func collectionJSON(c *store.Collection) collectionOut {
	return collectionOut{c.ID, c.Name, c.Project, formatTime(c.CreatedAt), formatTime(c.UpdatedAt), c.ClusterCount, c.RecordCount}
}

type clusterOut struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Project     string `json:"project"`
	Collection  string `json:"collection"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
	RecordCount int    `json:"record_count"`
}

func clusterJSON(k *store.Cluster) clusterOut {
	return clusterOut{k.ID, k.Name, k.Project, k.Collection, formatTime(k.CreatedAt), formatTime(k.UpdatedAt), k.RecordCount}
}

// appendProject appends the JSON of a project, as projectJSON encodes.
func appendProject(b []byte, p *store.Project) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, p.ID)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, p.Name)
	b = append(b, `,"owner_id":`...)
	b = jsonstr.Append(b, p.OwnerID)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, p.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, p.UpdatedAt)
	b = append(b, `,"collection_count":`...)
	b = strconv.AppendInt(b, int64(p.CollectionCount), 10)
	b = append(b, `,"role":`...)
	b = jsonstr.Append(b, string(p.Role))
	return append(b, '}')
}

// appendCollection appends the JSON of a collection, as collectionJSON
// encodes.
func appendCollection(b []byte, c *store.Collection) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, c.ID)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, c.Name)
	b = append(b, `,"project":`...)
	b = jsonstr.Append(b, c.Project)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, c.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, c.UpdatedAt)
	b = append(b, `,"cluster_count":`...)
	b = strconv.AppendInt(b, int64(c.ClusterCount), 10)
	b = append(b, `,"record_count":`...)
	b = strconv.AppendInt(b, int64(c.RecordCount), 10)
	return append(b, '}')
}

// appendCluster appends the JSON of a cluster without its closing brace,
// so that cluster data can add its "data" member.
func appendCluster(b []byte, k *store.Cluster) []byte {
	b = append(b, `{"id":`...)
	b = jsonstr.Append(b, k.ID)
	b = append(b, `,"name":`...)
	b = jsonstr.Append(b, k.Name)
	b = append(b, `,"project":`...)
	b = jsonstr.Append(b, k.Project)
	b = append(b, `,"collection":`...)
	b = jsonstr.Append(b, k.Collection)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, k.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, k.UpdatedAt)
	b = append(b, `,"record_count":`...)
	return strconv.AppendInt(b, int64(k.RecordCount), 10)
}

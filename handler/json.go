package handler

import (
	"bytes"
	"encoding/json"

	"github.com/hds-go/hds/store"
)

// The JSON shapes of API.md section 2.

type projectOut struct {
	ID              string `json:"id"`
	Name            string `json:"name"`
	OwnerID         string `json:"owner_id"`
	CreatedAt       string `json:"created_at"`
	UpdatedAt       string `json:"updated_at"`
	CollectionCount int    `json:"collection_count"`
}

func projectJSON(p *store.Project) projectOut {
	return projectOut{p.ID, p.Name, p.OwnerID, formatTime(p.CreatedAt), formatTime(p.UpdatedAt), p.CollectionCount}
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
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Project     string       `json:"project"`
	Collection  string       `json:"collection"`
	CreatedAt   string       `json:"created_at"`
	UpdatedAt   string       `json:"updated_at"`
	RecordCount int          `json:"record_count"`
	Data        *clusterData `json:"data,omitempty"`
}

// clusterJSON shapes a cluster; with data non-nil it is the "cluster
// data" shape of GET K.
func clusterJSON(k *store.Cluster, data *clusterData) clusterOut {
	return clusterOut{k.ID, k.Name, k.Project, k.Collection, formatTime(k.CreatedAt), formatTime(k.UpdatedAt), k.RecordCount, data}
}

// clusterData encodes record values as one object mapping each name to
// its value, in name order.
type clusterData struct {
	names  []string
	values []json.RawMessage
}

// MarshalJSON writes {"name": value, ...}.
func (d *clusterData) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, name := range d.names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalString(name))
		b.WriteByte(':')
		b.Write(d.values[i])
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshalString encodes s as a JSON string.
func marshalString(s string) []byte {
	b, _ := json.Marshal(s) // a string always encodes
	return b
}

type recordOut struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Type      store.DataType  `json:"type"`
	Value     json.RawMessage `json:"value"`
	Version   int64           `json:"version"`
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
}

func recordJSON(r *store.Record, value json.RawMessage) recordOut {
	return recordOut{r.ID, r.Name, r.Type, value, r.Version, formatTime(r.CreatedAt), formatTime(r.UpdatedAt)}
}

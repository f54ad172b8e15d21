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

// clusterData encodes records as one object mapping each name to its
// (masked) value, in name order.
type clusterData struct {
	records []*store.Record
	reveal  bool
}

// MarshalJSON writes {"name": value, ...}.
func (d *clusterData) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, r := range d.records {
		if i > 0 {
			b.WriteByte(',')
		}
		name, err := json.Marshal(r.Name)
		if err != nil {
			return nil, err
		}
		b.Write(name)
		b.WriteByte(':')
		b.Write(visibleValue(r, d.reveal))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
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

func recordJSON(r *store.Record, reveal bool) recordOut {
	return recordOut{r.ID, r.Name, r.Type, visibleValue(r, reveal), r.Version, formatTime(r.CreatedAt), formatTime(r.UpdatedAt)}
}

// Mask is what a credential value looks like in a response without
// reveal=true.
const Mask = `"********"`

// visibleValue is the value as a response shows it: credentials masked
// (each element of a []CREDENTIAL) unless reveal is set.
func visibleValue(r *store.Record, reveal bool) json.RawMessage {
	if !r.Type.IsCredential() || reveal {
		return r.Value
	}
	if r.Type == store.Credential {
		return json.RawMessage(Mask)
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(r.Value, &elems) // stored arrays are canonical
	var b bytes.Buffer
	b.WriteByte('[')
	for i := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(Mask)
	}
	b.WriteByte(']')
	return b.Bytes()
}

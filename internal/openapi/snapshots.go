package openapi

// addSnapshotSchemas adds the schemas of the snapshot routes and of the
// promote's answer (docs/api.md#snapshots-and-rollback-v13) to s; page
// is a list without a cursor.
func (f Facts) addSnapshotSchemas(s obj, object func(string, obj, ...string) obj, body func(string, obj, ...string) obj, page func(string) obj, count obj, envelopeOf func(string) obj) {
	props := func() obj {
		return obj{
			"name":        schemaRef("Name"),
			"collection":  obj{"allOf": []any{schemaRef("Name")}, "description": "The collection it was taken of, as named then."},
			"cluster":     obj{"oneOf": []any{schemaRef("Name"), obj{"type": "null"}}, "description": "The cluster it was taken of, as named then; null for a snapshot of a collection."},
			"description": obj{"type": "string"},
			"revision":    obj{"type": "integer", "minimum": 0, "description": "The project's newest audit revision before the snapshot's own snapshot.create entry."},
			"records":     count,
			"automatic":   obj{"type": "boolean", "description": "Taken by a promote (named auto-N)."},
			"created_at":  schemaRef("Timestamp"),
			"created_by":  obj{"type": "string", "description": "Who took it, as an audit entry's actor_name names the caller."},
		}
	}
	fields := []string{"name", "collection", "cluster", "description", "revision", "records", "automatic", "created_at", "created_by"}
	s["Snapshot"] = object("A named, immutable copy of a collection or a cluster at one revision.", props(), fields...)
	data := props()
	data["clusters"] = obj{"type": "object", "description": "Every cluster it holds, empty ones included, by name.", "propertyNames": schemaRef("Name"),
		"additionalProperties": schemaRef("ExportCluster")}
	s["SnapshotData"] = object("A snapshot and its records, as an export holds them: credentials masked unless reveal=true.", data, append(fields, "clusters")...)
	s["SnapshotList"] = page("Snapshot")
	s["SnapshotCreateRequest"] = body("A new snapshot of the collection, or of its cluster when cluster is given.", obj{
		"name":        obj{"allOf": []any{schemaRef("Name")}, "description": "Unique in the project; may not start with auto-."},
		"collection":  schemaRef("Name"),
		"cluster":     schemaRef("Name"),
		"description": obj{"type": "string"},
	}, "name", "collection")
	promote := obj{}
	for k, v := range s["ImportResult"].(obj)["properties"].(obj) {
		promote[k] = v
	}
	promote["snapshot"] = obj{"type": []any{"string", "null"}, "description": "The automatic snapshot the promote took of what it changed (auto-N); null for a dry run, when nothing changed, or with snapshots.keep_automatic 0."}
	s["PromoteResult"] = object("What the promote changed, counting records only, and the automatic snapshot it took.", promote,
		"created", "updated", "deleted", "unchanged", "changes", "revision", "snapshot")
	for _, name := range []string{"Snapshot", "SnapshotData", "SnapshotList", "PromoteResult"} {
		s[name+"Envelope"] = envelopeOf(name)
	}
}

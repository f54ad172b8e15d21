package openapi

// addTransferSchemas adds the schemas of the batch, export and import
// routes (docs/api.md#16-batch-export-and-import) to s.
func (f Facts) addTransferSchemas(s obj, object func(string, obj, ...string) obj, body func(string, obj, ...string) obj, count obj) {
	mapOf := func(description, item string) obj {
		return obj{"type": "object", "description": description, "propertyNames": schemaRef("Name"),
			"additionalProperties": schemaRef(item)}
	}
	s["BatchOperation"] = body("One operation of a batch. name (a new name) is for update only; if_match is an ETag header value, quotes included (update, upsert and delete). create and upsert need type; a value left out is null.",
		obj{
			"op":         obj{"type": "string", "enum": []any{"create", "update", "upsert", "delete"}},
			"collection": schemaRef("Name"), "cluster": schemaRef("Name"),
			"record": obj{"type": "string", "description": "The record's name, or its id (update, upsert, delete)."},
			"type":   schemaRef("TypeName"), "value": schemaRef("RecordValue"), "name": schemaRef("Name"),
			"if_match": obj{"type": "string", "description": "* or a comma-separated list of entity tags, as for If-Match."},
		}, "op", "collection", "cluster", "record")
	s["BatchRequest"] = body("A batch: 1 to 1000 operations. create_parents creates missing collections and clusters for create and upsert.",
		obj{
			"operations": obj{"type": "array", "minItems": 1, "maxItems": f.MaxBatchOps, "items": schemaRef("BatchOperation")},
			// No "default": openapi-typescript (defaultNonNullable) would
			// make a property with one required in the request body.
			"create_parents": obj{"type": "boolean", "description": "Create the missing collection and cluster of create and upsert operations; false when left out."},
		}, "operations")
	s["BatchResult"] = object("What one operation did: status is the HTTP status it would get alone (201 created, 200 updated, 204 deleted); record is null for a delete, credentials masked.", obj{
		"index":  count,
		"status": obj{"type": "integer", "enum": []any{200, 201, 204}},
		"record": obj{"oneOf": []any{schemaRef("RecordItem"), obj{"type": "null"}}},
	}, "index", "status", "record")
	s["BatchResults"] = object("The result of every operation, in order.", obj{
		"results": obj{"type": "array", "items": schemaRef("BatchResult")},
	}, "results")
	s["ExportRecord"] = object("A record of an export: credentials masked unless reveal=true.", obj{
		"type": schemaRef("RecordType"), "value": schemaRef("RecordValue")}, "type", "value")
	s["ExportCluster"] = object("A cluster of an export.", obj{"records": mapOf("Every record, by name.", "ExportRecord")}, "records")
	s["ExportCollection"] = object("A collection of an export.", obj{"clusters": mapOf("Every cluster, by name.", "ExportCluster")}, "clusters")
	s["ExportDocument"] = object("A whole project: every collection, cluster and record, empty ones included, from one consistent snapshot.", obj{
		"format":      obj{"type": "string", "const": f.ExportFormat},
		"project":     schemaRef("Name"),
		"revision":    obj{"type": "integer", "minimum": 0, "description": "The newest audit revision the snapshot includes (0 until the audit log exists)."},
		"exported_at": schemaRef("Timestamp"),
		"collections": mapOf("Every collection, by name.", "ExportCollection"),
	}, "format", "project", "revision", "exported_at", "collections")
	s["ImportRecord"] = body("A record to import. A credential given masked (\"********\", or an array of them) leaves the existing value as it is.",
		obj{"type": schemaRef("TypeName"), "value": schemaRef("RecordValue")}, "type")
	s["ImportCluster"] = body("A cluster to import.", obj{"records": mapOf("Its records, by name.", "ImportRecord")}, "records")
	s["ImportCollection"] = body("A collection to import.", obj{"clusters": mapOf("Its clusters, by name.", "ImportCluster")}, "clusters")
	s["ImportDocument"] = body("An export document; format must be "+f.ExportFormat+".", obj{
		"format":      obj{"type": "string", "const": f.ExportFormat},
		"project":     obj{"description": "Ignored."},
		"revision":    obj{"description": "Ignored."},
		"exported_at": obj{"description": "Ignored."},
		"collections": mapOf("The collections, by name.", "ImportCollection"),
	}, "format", "collections")
	s["ImportChange"] = object("A record the import creates, updates or deletes.", obj{
		"action":     obj{"type": "string", "enum": []any{"create", "update", "delete"}},
		"collection": schemaRef("Name"), "cluster": schemaRef("Name"), "record": schemaRef("Name"),
	}, "action", "collection", "cluster", "record")
	side := obj{"type": "string", "minLength": 1, "description": "A collection (COLLECTION) or a cluster (COLLECTION/CLUSTER)."}
	s["DiffSide"] = object("A record on one side of a comparison: credentials masked unless reveal=true.", obj{
		"type": schemaRef("RecordType"), "value": schemaRef("RecordValue"), "version": obj{"type": "integer", "minimum": 1},
	}, "type", "value", "version")
	sideOrNull := obj{"oneOf": []any{schemaRef("DiffSide"), obj{"type": "null"}}}
	s["DiffItem"] = object("A record name found on either side.", obj{
		"cluster": schemaRef("Name"), "record": schemaRef("Name"),
		"change": obj{"type": "string", "enum": anys(f.Changes)},
		"from":   sideOrNull, "to": sideOrNull,
	}, "cluster", "record", "change", "from", "to")
	s["DiffSummary"] = object("How many records of each change (unchanged ones counted even when not listed).", obj{
		"added": count, "removed": count, "changed": count, "unchanged": count,
	}, "added", "removed", "changed", "unchanged")
	s["Diff"] = object("A comparison of two collections or two clusters, from one snapshot.", obj{
		"from": side, "to": side,
		"revision": obj{"type": "integer", "minimum": 0, "description": "The project's newest audit revision the snapshot saw that changes something (credential.reveal entries not counted): the if_revision of a promote of exactly this comparison."},
		"items":    obj{"type": "array", "items": schemaRef("DiffItem"), "description": "By cluster, then record, byte-wise."},
		"summary":  schemaRef("DiffSummary"),
	}, "from", "to", "revision", "items", "summary")
	s["PromoteRequest"] = body("What to promote: from and to as for GET diff, or from_snapshot instead of from (a rollback).", obj{
		"from": side, "to": side,
		"from_snapshot": obj{"type": "string", "minLength": 1, "description": "A snapshot's name, instead of from: makes to hold what the snapshot holds (with delete: exactly)."},
		"records":       obj{"type": "array", "items": obj{"type": "string"}, "description": "Only these record names (two clusters only)."},
		"delete":        obj{"type": "boolean", "description": "Also delete the records only to holds; false when left out."},
		"dry_run":       obj{"type": "boolean", "description": "Change nothing and answer what would change; false when left out."},
		"if_revision":   obj{"type": "integer", "minimum": 1, "description": "Apply only when the project's newest revision that changes something (credential.reveal entries not counted, as for the revision of GET diff) is still this one (412 otherwise)."},
	}, "to")
	s["ImportResult"] = object("What the import changed, counting records only.", obj{
		"created": count, "updated": count, "deleted": count, "unchanged": count,
		"changes":  obj{"type": "array", "items": schemaRef("ImportChange"), "description": "By collection, cluster and record name."},
		"revision": obj{"type": "integer", "minimum": 0, "description": "The project's audit revision after the import (its newest entry); when nothing was written (a dry run, nothing to change), the revision the import was planned at."},
	}, "created", "updated", "deleted", "unchanged", "changes", "revision")
}

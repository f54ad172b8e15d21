package openapi

// addAccessSchemas adds the schemas of the members and API token routes
// (docs/api.md#17-sharing-and-api-tokens) to s.
func (f Facts) addAccessSchemas(s obj, object func(string, obj, ...string) obj, body func(string, obj, ...string) obj, page func(string) obj) {
	memberRole := obj{"type": "string", "enum": []any{"viewer", "reader", "editor", "admin"}}
	tokenRole := obj{"type": "string", "enum": []any{"viewer", "reader", "editor"}}
	nullable := func(schema obj) obj { return obj{"oneOf": []any{schema, obj{"type": "null"}}} }
	s["Member"] = object("A member of a project; the owner is listed with role owner.", obj{
		"user_id":    obj{"type": "string", "minLength": 1},
		"username":   obj{"type": "string"},
		"role":       obj{"type": "string", "enum": []any{"viewer", "reader", "editor", "admin", "owner"}},
		"created_at": schemaRef("Timestamp"),
	}, "user_id", "username", "role", "created_at")
	s["MemberList"] = page("Member")
	s["MemberPutRequest"] = body("The member's role; case matters.", obj{"role": memberRole}, "role")
	tokenProps := func(withToken bool) (obj, []string) {
		p := obj{
			"id": schemaRef("Id"), "name": obj{"type": "string", "minLength": 1, "maxLength": f.MaxTokenName},
			"role":         tokenRole,
			"collection":   nullable(schemaRef("Name")),
			"cluster":      nullable(schemaRef("Name")),
			"created_at":   schemaRef("Timestamp"),
			"expires_at":   nullable(schemaRef("Timestamp")),
			"last_used_at": obj{"oneOf": []any{schemaRef("Timestamp"), obj{"type": "null"}}, "description": "null until the first use; then updated at most once a minute."},
		}
		fields := []string{"id", "name", "role", "collection", "cluster", "created_at", "expires_at", "last_used_at"}
		if withToken {
			p["token"] = obj{"type": "string", "pattern": "^hds_[0-9A-Za-z]{40,}$", "description": "The token string; shown in this answer only."}
			fields = append(fields, "token")
		}
		return p, fields
	}
	props, fields := tokenProps(false)
	s["APIToken"] = object("An API token of a project; collection and cluster are its scope (null: not narrowed).", props, fields...)
	props, fields = tokenProps(true)
	s["APITokenCreated"] = object("A new API token with its token string.", props, fields...)
	s["APITokenList"] = page("APIToken")
	s["APITokenCreateRequest"] = body("A new API token. role is viewer, reader or editor (case matters); collection, and cluster with it, narrow its scope; expires_in is a positive number of seconds (no expiry when left out).", obj{
		"name":       obj{"type": "string", "minLength": 1, "maxLength": f.MaxTokenName},
		"role":       tokenRole,
		"collection": schemaRef("Name"),
		"cluster":    schemaRef("Name"),
		"expires_in": obj{"type": "integer", "minimum": 1, "maximum": f.MaxExpiresIn},
	}, "name", "role")
}

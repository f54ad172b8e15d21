package openapi

import "github.com/hds-go/hds/auth"

// addUserSchemas adds the schemas of user administration
// (docs/api.md#server-administrators-and-user-accounts-v12: GET
// /api/v1/auth/me, the /api/v1/users routes, PUT P/owner) to s.
func (f Facts) addUserSchemas(s obj, object func(string, obj, ...string) obj, body func(string, obj, ...string) obj, page func(string) obj) {
	username := obj{"type": "string", "minLength": 1, "maxLength": auth.MaxUsernameRunes,
		"description": "1 to 128 characters of valid UTF-8, no control characters, no leading or trailing white space, not \".\" or \"..\"."}
	password := obj{"type": "string", "format": "password", "minLength": 1, "description": "At most 72 bytes."}
	s["User"] = object("A user account, as server administrators see it.", obj{
		"id":         obj{"type": "string", "minLength": 1},
		"username":   obj{"type": "string"},
		"admin":      obj{"type": "boolean", "description": "A server administrator."},
		"disabled":   obj{"type": "boolean", "description": "A disabled user cannot log in; its sessions ended when it was disabled."},
		"created_at": schemaRef("Timestamp"),
	}, "id", "username", "admin", "disabled", "created_at")
	s["UserList"] = page("User")
	s["Me"] = object("The caller.", obj{
		"id":         obj{"type": "string", "minLength": 1},
		"username":   obj{"type": "string"},
		"admin":      obj{"type": "boolean", "description": "A server administrator."},
		"created_at": schemaRef("Timestamp"),
	}, "id", "username", "admin", "created_at")
	s["UserCreateRequest"] = body("A new user; admin defaults to false.", obj{
		"username": username, "password": password, "admin": obj{"type": "boolean"},
	}, "username", "password")
	update := body("What to change: any of admin, disabled and password, at least one.", obj{
		"admin": obj{"type": "boolean"}, "disabled": obj{"type": "boolean"}, "password": password,
	})
	update["minProperties"] = 1
	s["UserUpdateRequest"] = update
	s["OwnerPutRequest"] = body("The new owner's username.", obj{"username": obj{"type": "string", "minLength": 1}}, "username")
}

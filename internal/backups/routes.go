package backups

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/hds-go/hds/handler"
)

// The backup routes of docs/api.md#backups-v13, for server
// administrators, served by the library's handler
// (hds.WithAdminRoutes) only when the server runs on the SQLite store.

// ItemSchema is the JSON Schema of a backup in the API.
var ItemSchema = map[string]any{
	"type": "object", "additionalProperties": false,
	"description": "A backup of the database: a file of the backups directory.",
	"properties": map[string]any{
		"name":       map[string]any{"type": "string", "pattern": namePattern.String(), "description": "hds-YYYYMMDDTHHMMSSZ.db: the UTC time the backup was started."},
		"size":       map[string]any{"type": "integer", "minimum": 0, "description": "The file's size in bytes."},
		"created_at": map[string]any{"type": "string", "format": "date-time", "description": "The time of the name (fraction .000000)."},
	},
	"required": []any{"name", "size", "created_at"},
}

// Routes returns the backup routes of b, for hds.WithAdminRoutes; audit
// receives their log lines (slog message "audit", as user changes), and
// GET /api/v1/backups/{name} is served only with b.AllowDownload
// (otherwise 404).
func (b *Dir) Routes(audit *slog.Logger) []handler.AdminRoute {
	const tag = "backups"
	download := "Served only when backups.allow_download is true (a backup holds every project, which a server administrator cannot otherwise read): otherwise 404."
	return []handler.AdminRoute{
		{
			Pattern: "GET /api/v1/backups", OperationID: "listBackups", Tag: tag, Summary: "List the backups",
			Description: "The backups in the backups directory (backups.dir), newest first: the files named hds-YYYYMMDDTHHMMSSZ.db. Only limit and offset apply.",
			Query:       []string{"limit", "offset"}, Status: http.StatusOK, Errors: []int{http.StatusBadRequest},
			Response: handler.AdminResponse{Description: "A page of backups, newest first.", Data: ItemSchema, List: true},
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				p, err := handler.ParsePage(r)
				if err != nil {
					handler.WriteError(w, r, err)
					return
				}
				items, err := b.List()
				if err != nil {
					handler.WriteError(w, r, err)
					return
				}
				handler.WriteList(w, items, p)
			}),
		},
		{
			Pattern: "POST /api/v1/backups", OperationID: "createBackup", Tag: tag, Summary: "Make a backup now",
			Description: "No body. A consistent copy of the database, made while the server goes on serving, named after the UTC second it starts; a name taken (two backups in one second) is 409. The scheduled pruning (backups.keep) counts it from the next scheduled backup on. keys.json is never in a backup: keep it apart.",
			Status:      http.StatusCreated, Errors: []int{http.StatusConflict},
			Response: handler.AdminResponse{Description: "The new backup.", Data: ItemSchema},
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// A client that goes away does not cut the backup short.
				it, err := b.Create(context.WithoutCancel(r.Context()))
				if err != nil {
					handler.WriteError(w, r, err)
					return
				}
				handler.LogAdminAction(audit, r, "backup.create", it.Name)
				handler.WriteData(w, http.StatusCreated, it, "Backup created")
			}),
		},
		{
			Pattern: "GET /api/v1/backups/{name}", OperationID: "downloadBackup", Tag: tag, Summary: "Download a backup",
			Description: "The backup's file, not enveloped, as an attachment. " + download + " A name that is not a backup of the directory is 404.",
			Status:      http.StatusOK, Errors: []int{http.StatusNotFound},
			Response: handler.AdminResponse{Description: "The SQLite database file of the backup.", MediaType: backupMediaType,
				Headers: map[string]string{"Content-Disposition": `attachment; filename="NAME"`}},
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				name := r.PathValue("name")
				if !b.AllowDownload {
					handler.WriteError(w, r, noBackup(name))
					return
				}
				p, err := b.Path(name)
				if err != nil {
					handler.WriteError(w, r, err)
					return
				}
				f, err := os.Open(p)
				if err != nil {
					handler.WriteError(w, r, noBackup(name))
					return
				}
				defer f.Close()
				info, err := f.Stat()
				if err != nil {
					handler.WriteError(w, r, err)
					return
				}
				if r.Method != http.MethodHead { // the console asks whether downloads are served
					handler.LogAdminAction(audit, r, "backup.download", name)
				}
				w.Header().Set("Content-Type", backupMediaType)
				w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
				http.ServeContent(w, r, "", info.ModTime(), f)
			}),
		},
		{
			Pattern: "DELETE /api/v1/backups/{name}", OperationID: "deleteBackup", Tag: tag, Summary: "Delete a backup",
			Description: "A name that is not a backup of the directory is 404: no other file can be named.",
			Status:      http.StatusNoContent, Errors: []int{http.StatusNotFound},
			Response: handler.AdminResponse{Description: "Deleted."},
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				name := r.PathValue("name")
				if err := b.Remove(name); err != nil {
					handler.WriteError(w, r, err)
					return
				}
				handler.LogAdminAction(audit, r, "backup.delete", name)
				w.WriteHeader(http.StatusNoContent)
			}),
		},
	}
}

// backupMediaType is the content type of a downloaded backup.
const backupMediaType = "application/vnd.sqlite3"

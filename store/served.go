package store

// Projects is the storage of projects that hds serves (hds.WithStore):
// the tree and its records (Store) and who may use each project besides
// its owner (Access), which path resolution checks on every request. Both
// are required; every store of this module (memory, SQLite, PostgreSQL)
// implements them on one type.
//
// hds.New also looks for these optional capabilities on the same value,
// and works without them:
//   - Streamer: lists are streamed as they are read; without it hds reads
//     them with the Find methods (StreamRecords).
//   - Comparer: GET P/diff and POST P/promote read the two sides as
//     ordered streams in one snapshot; without it hds reads the project
//     with ExportProject and holds both sides (Compare).
//   - AuditLog: GET P/audit and the credential.reveal entries; without it
//     that route is not served, and every request with reveal=true is
//     refused (403 AUTHORIZATION_FAILED): every allowed reveal must be
//     audited, and nothing could record it.
//   - EventSource: GET P/events, the change feed; without it that route
//     is not served.
//   - SessionChecker: the session check of a read made in the statement
//     that resolves its path; without it authentication makes the check.
//   - AuditLogSetter: each committed audit entry also goes to the server
//     log; without it only the store keeps them.
//   - ClusterStateKeeper: the cluster tags of GET K and If-None-Match on
//     it; without it GET K has no ETag and always answers 200.
//   - Webhooks: the webhook routes and their deliveries
//     (docs/api.md#webhooks); needed only with hds.WithWebhooks, which
//     hds.NewHandler refuses with an error for a store without it.
//   - QuotaSetter: needed only with hds.WithQuotas, which hds.NewHandler
//     refuses with an error for a store without it.
type Projects interface {
	Store
	Access
}

// Accounts is the storage of users that hds serves (hds.WithUsers): the
// accounts that may log in (UserDirectory) and what ends their sessions
// (Sessions): logout, single-use refresh tokens and password change. Both
// are required; every store of this module (memory, SQLite, PostgreSQL)
// implements them on one type.
type Accounts interface {
	UserDirectory
	Sessions
}

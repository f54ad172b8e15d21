-- hds SQLite schema, version 1 (API.md section 24).
--
-- Times are INTEGER microseconds since 1970-01-01 UTC, ids canonical
-- lower-case UUID text (their text order is their byte order). Names use
-- SQLite's default BINARY collation: byte-wise, as in the other stores.
-- *_lower columns hold strings.ToLower of the name or canonical text,
-- computed in Go, for search and valueContains. Every column a list
-- sorts or filters by is computed in Go when the row is written, so that
-- lists read an index range in the list's order.

CREATE TABLE hds_users (
    id                 TEXT PRIMARY KEY,
    username           TEXT NOT NULL UNIQUE,
    password_hash      BLOB NOT NULL,
    active             INTEGER NOT NULL,
    admin              INTEGER NOT NULL DEFAULT 0,
    session_generation INTEGER NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
);

-- Sessions ended by a logout and refresh tokens already used (API.md
-- section 17), each kept until it may be forgotten.
CREATE TABLE hds_ended_sessions (
    user_id    TEXT NOT NULL REFERENCES hds_users (id) ON DELETE CASCADE,
    session_id TEXT NOT NULL,
    until      INTEGER NOT NULL,
    PRIMARY KEY (user_id, session_id)
) WITHOUT ROWID;
CREATE INDEX hds_ended_sessions_until ON hds_ended_sessions (until);

CREATE TABLE hds_used_tokens (
    user_id  TEXT NOT NULL REFERENCES hds_users (id) ON DELETE CASCADE,
    token_id TEXT NOT NULL,
    until    INTEGER NOT NULL,
    PRIMARY KEY (user_id, token_id)
) WITHOUT ROWID;
CREATE INDEX hds_used_tokens_until ON hds_used_tokens (until);

-- bytes is what limits.max_bytes_per_project counts; revision is the
-- revision of the project's newest audit entry.
CREATE TABLE hds_projects (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    name_lower TEXT NOT NULL,
    owner_id   TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    bytes      INTEGER NOT NULL DEFAULT 0,
    revision   INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX hds_projects_owner ON hds_projects (owner_id, name);

CREATE TABLE hds_collections (
    id         TEXT PRIMARY KEY,
    project_id TEXT NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    name_lower TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    UNIQUE (project_id, name)
);
CREATE INDEX hds_collections_id ON hds_collections (project_id, id);
CREATE INDEX hds_collections_created ON hds_collections (project_id, created_at, name, id);
CREATE INDEX hds_collections_updated ON hds_collections (project_id, updated_at, name, id);

-- records counts the cluster's records (limits.max_records_per_cluster
-- and record_count read it instead of counting).
CREATE TABLE hds_clusters (
    id            TEXT PRIMARY KEY,
    collection_id TEXT NOT NULL REFERENCES hds_collections (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    name_lower    TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    records       INTEGER NOT NULL DEFAULT 0,
    UNIQUE (collection_id, name)
);
CREATE INDEX hds_clusters_id ON hds_clusters (collection_id, id);
CREATE INDEX hds_clusters_created ON hds_clusters (collection_id, created_at, name, id);
CREATE INDEX hds_clusters_updated ON hds_clusters (collection_id, updated_at, name, id);

-- value is the canonical JSON as given. vtext is the canonical text the
-- value filters compare (NULL for credentials, never matched). vkey is a
-- byte string whose byte-wise order is sortBy=value's order (group, then
-- exact number or text); rkey is one whose order is the range filters'
-- order within the record's type (minValue/maxValue). bytes is what the
-- record counts against its project's quota: its name and value and those
-- of every kept version.
CREATE TABLE hds_records (
    id          TEXT PRIMARY KEY,
    cluster_id  TEXT NOT NULL REFERENCES hds_clusters (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    name_lower  TEXT NOT NULL,
    type        TEXT NOT NULL,
    value       TEXT NOT NULL,
    version     INTEGER NOT NULL,
    vtext       TEXT,
    vtext_lower TEXT,
    vkey        BLOB NOT NULL,
    rkey        BLOB,
    bytes       INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    updated_by  TEXT NOT NULL,
    UNIQUE (cluster_id, name)
);
CREATE INDEX hds_records_cluster_id ON hds_records (cluster_id, id);
CREATE INDEX hds_records_created ON hds_records (cluster_id, created_at, name, id);
CREATE INDEX hds_records_updated ON hds_records (cluster_id, updated_at, name, id);
-- A list filtered by type reads the type's range of an index in the
-- list's order.
CREATE INDEX hds_records_type ON hds_records (cluster_id, type, name, id);
CREATE INDEX hds_records_type_id ON hds_records (cluster_id, type, id);
CREATE INDEX hds_records_type_created ON hds_records (cluster_id, type, created_at, name, id);
CREATE INDEX hds_records_type_updated ON hds_records (cluster_id, type, updated_at, name, id);
CREATE INDEX hds_records_type_value ON hds_records (cluster_id, type, vkey, name, id);
CREATE INDEX hds_records_value ON hds_records (cluster_id, vkey, name, id);
CREATE INDEX hds_records_range ON hds_records (cluster_id, type, rkey, name, id) WHERE rkey IS NOT NULL;
-- search= counts its matches by scanning this index, not the table.
CREATE INDEX hds_records_name_lower ON hds_records (cluster_id, name_lower);
CREATE INDEX hds_records_vtext ON hds_records (cluster_id, vtext) WHERE vtext IS NOT NULL;
CREATE INDEX hds_records_credentials ON hds_records (id) WHERE type IN ('CREDENTIAL', '[]CREDENTIAL');

-- One row per kept state a record had before its current one.
CREATE TABLE hds_record_versions (
    record_id  TEXT NOT NULL REFERENCES hds_records (id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    name       TEXT NOT NULL,
    type       TEXT NOT NULL,
    value      TEXT NOT NULL,
    changed_at INTEGER NOT NULL,
    changed_by TEXT NOT NULL,
    PRIMARY KEY (record_id, version)
) WITHOUT ROWID;
CREATE INDEX hds_record_versions_credentials ON hds_record_versions (record_id)
    WHERE type IN ('CREDENTIAL', '[]CREDENTIAL');

-- The audit log and change feed (API.md sections 15 and 16). Fields that
-- do not apply are NULL. No value, password or token is ever written here.
CREATE TABLE hds_audit (
    project_id TEXT NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    revision   INTEGER NOT NULL,
    at         INTEGER NOT NULL,
    action     TEXT NOT NULL,
    actor      TEXT,
    actor_name TEXT,
    project    TEXT NOT NULL,
    collection TEXT,
    cluster    TEXT,
    record     TEXT,
    record_id  TEXT,
    version    INTEGER,
    target     TEXT,
    request_id TEXT,
    PRIMARY KEY (project_id, revision)
) WITHOUT ROWID;

-- Members besides the owner (the user is not a foreign key: the directory
-- may be another store; DeleteUser removes the memberships itself).
CREATE TABLE hds_members (
    project_id TEXT NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    user_id    TEXT NOT NULL,
    username   TEXT NOT NULL,
    role       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (project_id, user_id)
) WITHOUT ROWID;
CREATE INDEX hds_members_user ON hds_members (user_id);

-- API tokens: only the SHA-256 of the token string is kept.
CREATE TABLE hds_api_tokens (
    id           TEXT PRIMARY KEY,
    project_id   TEXT NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    role         TEXT NOT NULL,
    collection   TEXT NOT NULL,
    cluster      TEXT NOT NULL,
    hash         BLOB NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,
    expires_at   INTEGER,
    last_used_at INTEGER,
    created_by   TEXT NOT NULL
);
CREATE INDEX hds_api_tokens_project ON hds_api_tokens (project_id, created_at, id);

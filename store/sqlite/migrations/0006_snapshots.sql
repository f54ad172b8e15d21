-- hds SQLite schema, version 6: snapshots (API.md section 27, v1.3).

-- A snapshot: a named, immutable copy of a collection (cluster '') or of
-- one of its clusters, at revision. collection and cluster are the names
-- it was taken of, kept as they were. bytes is what it counts toward
-- limits.max_bytes_per_project (0 for an automatic one).
CREATE TABLE hds_snapshots (
    id          TEXT PRIMARY KEY,
    project_id  TEXT NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    name_lower  TEXT NOT NULL,
    collection  TEXT NOT NULL,
    cluster     TEXT NOT NULL,
    description TEXT NOT NULL,
    revision    INTEGER NOT NULL,
    records     INTEGER NOT NULL,
    bytes       INTEGER NOT NULL,
    automatic   INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    created_by  TEXT NOT NULL,
    UNIQUE (project_id, name)
);
CREATE INDEX hds_snapshots_newest ON hds_snapshots (project_id, revision DESC, created_at DESC, name);

-- The clusters a snapshot holds, empty ones included.
CREATE TABLE hds_snapshot_clusters (
    snapshot_id TEXT NOT NULL REFERENCES hds_snapshots (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, name)
) WITHOUT ROWID;

-- The records a snapshot holds, as they were: record_id is the id of the
-- record it was taken from, to which a credential value stays sealed.
CREATE TABLE hds_snapshot_records (
    snapshot_id TEXT NOT NULL REFERENCES hds_snapshots (id) ON DELETE CASCADE,
    cluster     TEXT NOT NULL,
    name        TEXT NOT NULL,
    record_id   TEXT NOT NULL,
    type        TEXT NOT NULL,
    value       TEXT NOT NULL,
    version     INTEGER NOT NULL,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    updated_by  TEXT NOT NULL,
    PRIMARY KEY (snapshot_id, cluster, name)
) WITHOUT ROWID;
-- The credential values kept in snapshots, which a key rotation re-seals.
CREATE INDEX hds_snapshot_records_credentials ON hds_snapshot_records (snapshot_id, cluster, name)
    WHERE type IN ('CREDENTIAL', '[]CREDENTIAL');

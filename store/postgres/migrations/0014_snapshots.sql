-- hds schema, version 14: snapshots (API.md section 27, v1.3).

-- A snapshot: a named, immutable copy of a collection (cluster '') or of
-- one of its clusters, at revision; deleted with the project. collection
-- and cluster are the names it was taken of, kept as they were. bytes is
-- what it counts toward limits.max_bytes_per_project (0 for an automatic
-- one).
CREATE TABLE hds_snapshots (
    id          uuid PRIMARY KEY,
    project_id  uuid NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    name        text COLLATE "C" NOT NULL,
    name_lower  text NOT NULL,
    collection  text COLLATE "C" NOT NULL,
    cluster     text COLLATE "C" NOT NULL,
    description text NOT NULL,
    revision    bigint NOT NULL,
    records     integer NOT NULL,
    bytes       bigint NOT NULL,
    automatic   boolean NOT NULL,
    created_at  timestamptz NOT NULL,
    created_by  text NOT NULL,
    UNIQUE (project_id, name)
);
CREATE INDEX hds_snapshots_newest ON hds_snapshots (project_id, revision DESC, created_at DESC, name);

-- The clusters a snapshot holds, empty ones included.
CREATE TABLE hds_snapshot_clusters (
    snapshot_id uuid NOT NULL REFERENCES hds_snapshots (id) ON DELETE CASCADE,
    name        text COLLATE "C" NOT NULL,
    PRIMARY KEY (snapshot_id, name)
);

-- The records a snapshot holds, as they were: record_id is the id of the
-- record it was taken from, to which a credential value stays sealed.
CREATE TABLE hds_snapshot_records (
    snapshot_id uuid NOT NULL REFERENCES hds_snapshots (id) ON DELETE CASCADE,
    cluster     text COLLATE "C" NOT NULL,
    name        text COLLATE "C" NOT NULL,
    record_id   uuid NOT NULL,
    type        text COLLATE "C" NOT NULL,
    value       text NOT NULL,
    version     bigint NOT NULL,
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    updated_by  text NOT NULL,
    PRIMARY KEY (snapshot_id, cluster, name)
);
-- The credential values kept in snapshots, which a key rotation re-seals.
CREATE INDEX hds_snapshot_records_credentials ON hds_snapshot_records (snapshot_id, cluster, name)
    WHERE type IN ('CREDENTIAL', '[]CREDENTIAL');

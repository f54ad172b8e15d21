-- hds schema, version 1.
-- Names are COLLATE "C" so that ORDER BY name is byte-wise, as in the
-- memory store. *_lower columns hold strings.ToLower of the name or the
-- canonical text, computed in Go (PostgreSQL's lower() differs), for the
-- case-insensitive search and valueContains filters.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE hds_users (
    id            text PRIMARY KEY,
    username      text COLLATE "C" NOT NULL UNIQUE,
    password_hash bytea NOT NULL,
    active        boolean NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);

CREATE TABLE hds_projects (
    id         uuid PRIMARY KEY,
    name       text COLLATE "C" NOT NULL UNIQUE,
    name_lower text NOT NULL,
    owner_id   text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX hds_projects_owner ON hds_projects (owner_id, name);

CREATE TABLE hds_collections (
    id         uuid PRIMARY KEY,
    project_id uuid NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    name       text COLLATE "C" NOT NULL,
    name_lower text NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (project_id, name)
);

CREATE TABLE hds_clusters (
    id            uuid PRIMARY KEY,
    collection_id uuid NOT NULL REFERENCES hds_collections (id) ON DELETE CASCADE,
    name          text COLLATE "C" NOT NULL,
    name_lower    text NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL,
    UNIQUE (collection_id, name)
);

-- value is the canonical JSON exactly as the store was given it (text, not
-- jsonb, which would rewrite numbers). vtext is the canonical text used by
-- the value filters (NULL for credentials, never matched); sort_group,
-- sort_num (exact) and sort_text are the keys of sortBy=value.
CREATE TABLE hds_records (
    id          uuid PRIMARY KEY,
    cluster_id  uuid NOT NULL REFERENCES hds_clusters (id) ON DELETE CASCADE,
    name        text COLLATE "C" NOT NULL,
    name_lower  text NOT NULL,
    type        text COLLATE "C" NOT NULL,
    value       text NOT NULL,
    version     bigint NOT NULL,
    vtext       text COLLATE "C",
    vtext_lower text,
    sort_group  smallint NOT NULL,
    sort_num    numeric,
    sort_text   text COLLATE "C",
    created_at  timestamptz NOT NULL,
    updated_at  timestamptz NOT NULL,
    UNIQUE (cluster_id, name)
);
CREATE INDEX hds_records_value_order ON hds_records (cluster_id, sort_group, sort_num, sort_text, name, id);
CREATE INDEX hds_records_type ON hds_records (cluster_id, type, name);
CREATE INDEX hds_records_name_trgm ON hds_records USING gin (name_lower gin_trgm_ops);
CREATE INDEX hds_records_vtext_trgm ON hds_records USING gin (vtext_lower gin_trgm_ops);
CREATE INDEX hds_records_credentials ON hds_records (id) WHERE type IN ('CREDENTIAL', '[]CREDENTIAL');

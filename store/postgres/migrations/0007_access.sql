-- hds schema, version 7: members and API tokens (API.md section 17).
-- Independent of migrations 0005 and 0006.

-- A project's members besides its owner, read by path resolution on every
-- request (by primary key). Deleting the user or the project removes the
-- membership.
CREATE TABLE hds_members (
    project_id uuid NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    user_id    text NOT NULL REFERENCES hds_users (id) ON DELETE CASCADE,
    role       text NOT NULL CHECK (role IN ('viewer', 'reader', 'editor', 'admin')),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
-- The project list of a member.
CREATE INDEX hds_members_user ON hds_members (user_id);

-- API tokens: only the SHA-256 of the token string is kept, looked up by
-- its unique index on every request made with the token. Revoking deletes
-- the row; so does deleting the project. collection and cluster are the
-- scope, names (empty: not narrowed).
CREATE TABLE hds_api_tokens (
    id           uuid PRIMARY KEY,
    project_id   uuid NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    name         text NOT NULL,
    role         text NOT NULL CHECK (role IN ('viewer', 'reader', 'editor')),
    collection   text COLLATE "C" NOT NULL,
    cluster      text COLLATE "C" NOT NULL,
    hash         bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    expires_at   timestamptz,
    last_used_at timestamptz,
    created_by   text NOT NULL
);
CREATE INDEX hds_api_tokens_project ON hds_api_tokens (project_id, created_at, id);

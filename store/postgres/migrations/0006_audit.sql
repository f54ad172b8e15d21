-- hds schema, version 6: the audit log and the change feed (API.md
-- sections 15 and 16).
--
-- revision is the revision of the project's newest audit entry: every
-- change bumps it in its own transaction (UPDATE ... RETURNING revision),
-- whose row lock orders the project's writers until commit, so that
-- revisions are gap-free and in commit order. Existing projects start at
-- 0, with an empty log.
ALTER TABLE hds_projects ADD COLUMN revision bigint NOT NULL DEFAULT 0;

-- One row per entry; deleted with the project. Fields that do not apply
-- are NULL. project is the project's name at the time. No value, password
-- or token is ever written here.
CREATE TABLE hds_audit (
    project_id uuid NOT NULL REFERENCES hds_projects (id) ON DELETE CASCADE,
    revision   bigint NOT NULL,
    at         timestamptz NOT NULL,
    action     text NOT NULL,
    actor      text,
    actor_name text,
    project    text NOT NULL,
    collection text,
    cluster    text,
    record     text,
    record_id  uuid,
    version    bigint,
    target     text,
    request_id text,
    PRIMARY KEY (project_id, revision)
);
CREATE INDEX hds_audit_at ON hds_audit (project_id, at);

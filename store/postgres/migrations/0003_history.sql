-- hds schema, version 3: entity tags and record history (API.md sections
-- 13 and 14). Independent of migration 0002.
--
-- updated_by is who wrote a record's current state. Before sharing, only
-- a project's owner could write under it, so records written before this
-- migration are credited to their project's owner.
ALTER TABLE hds_records ADD COLUMN updated_by text NOT NULL DEFAULT '';
UPDATE hds_records r SET updated_by = p.owner_id
FROM hds_clusters k
JOIN hds_collections c ON c.id = k.collection_id
JOIN hds_projects p ON p.id = c.project_id
WHERE k.id = r.cluster_id;

-- One row per kept state a record had before its current one; dropped
-- with the record. value is stored as hds_records.value is (credentials
-- sealed).
CREATE TABLE hds_record_versions (
    record_id  uuid NOT NULL REFERENCES hds_records (id) ON DELETE CASCADE,
    version    bigint NOT NULL,
    name       text COLLATE "C" NOT NULL,
    type       text COLLATE "C" NOT NULL,
    value      text NOT NULL,
    changed_at timestamptz NOT NULL,
    changed_by text NOT NULL,
    PRIMARY KEY (record_id, version)
);
-- Key rotation walks the records that hold a credential in their history.
CREATE INDEX hds_record_versions_credentials ON hds_record_versions (record_id)
    WHERE type IN ('CREDENTIAL', '[]CREDENTIAL');

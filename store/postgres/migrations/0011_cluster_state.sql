-- hds schema, version 11: cluster tags (API.md section 20).
--
-- hds_clusters.state is store.Cluster.State, the counter the tag of GET K
-- is made of. Triggers keep it, so that every path that writes records
-- (single writes, batches, imports, promotions, and any added later)
-- bumps it in its own transaction, on every instance alike:
--
-- * a statement that inserts or deletes records, or updates their
--   version, name or cluster (a record's create, update, rename, restore,
--   delete), adds 1 to the state of each cluster it touched, once per
--   statement (transition tables), not once per row. Key rotation
--   rewrites values without a new version: it changes no state.
-- * renaming a cluster to another name adds 1 to its state; renaming a
--   collection or a project adds 1 to the state of each of its clusters.
--
-- Writers lock their project's row first (quotas.go), so the cluster rows
-- these triggers lock never make two writers wait on each other in
-- opposite orders. Existing clusters start at 0.
ALTER TABLE hds_clusters ADD COLUMN state bigint NOT NULL DEFAULT 0;

CREATE FUNCTION hds_records_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE hds_clusters SET state = state + 1
    WHERE id IN (SELECT cluster_id FROM hds_new_records);
    RETURN NULL;
END $$;

CREATE FUNCTION hds_records_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE hds_clusters SET state = state + 1
    WHERE id IN (SELECT cluster_id FROM hds_old_records);
    RETURN NULL;
END $$;

CREATE FUNCTION hds_records_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE hds_clusters SET state = state + 1 WHERE id IN (
        SELECT unnest(ARRAY[o.cluster_id, n.cluster_id])
        FROM hds_new_records n JOIN hds_old_records o ON o.id = n.id
        WHERE n.version <> o.version OR n.name <> o.name OR n.cluster_id <> o.cluster_id);
    RETURN NULL;
END $$;

CREATE TRIGGER hds_records_state_insert AFTER INSERT ON hds_records
    REFERENCING NEW TABLE AS hds_new_records
    FOR EACH STATEMENT EXECUTE FUNCTION hds_records_inserted();
CREATE TRIGGER hds_records_state_delete AFTER DELETE ON hds_records
    REFERENCING OLD TABLE AS hds_old_records
    FOR EACH STATEMENT EXECUTE FUNCTION hds_records_deleted();
CREATE TRIGGER hds_records_state_update AFTER UPDATE ON hds_records
    REFERENCING OLD TABLE AS hds_old_records NEW TABLE AS hds_new_records
    FOR EACH STATEMENT EXECUTE FUNCTION hds_records_updated();

CREATE FUNCTION hds_cluster_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.state := OLD.state + 1;
    RETURN NEW;
END $$;

CREATE FUNCTION hds_collection_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE hds_clusters SET state = state + 1 WHERE collection_id = NEW.id;
    RETURN NULL;
END $$;

CREATE FUNCTION hds_project_renamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE hds_clusters SET state = state + 1
    WHERE collection_id IN (SELECT id FROM hds_collections WHERE project_id = NEW.id);
    RETURN NULL;
END $$;

CREATE TRIGGER hds_clusters_state_rename BEFORE UPDATE OF name ON hds_clusters
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
    EXECUTE FUNCTION hds_cluster_renamed();
CREATE TRIGGER hds_collections_state_rename AFTER UPDATE OF name ON hds_collections
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
    EXECUTE FUNCTION hds_collection_renamed();
CREATE TRIGGER hds_projects_state_rename AFTER UPDATE OF name ON hds_projects
    FOR EACH ROW WHEN (OLD.name IS DISTINCT FROM NEW.name)
    EXECUTE FUNCTION hds_project_renamed();

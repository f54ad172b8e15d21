-- hds schema, version 2: cluster tags (API.md section 20).
--
-- hds_clusters.state is store.Cluster.State, the counter the tag of GET K
-- is made of. Triggers keep it, so that every path that writes records
-- (single writes, batches, imports, promotions, and any added later)
-- bumps it in its own transaction: inserting or deleting a record, or
-- changing its version, name or cluster (a record's create, update,
-- rename, restore, delete) adds 1 to the state of its cluster; renaming
-- a cluster to another name adds 1 to its state, renaming a collection or
-- a project adds 1 to the state of each of its clusters. Key rotation
-- rewrites values without a new version: it changes no state. Existing
-- clusters start at 0.
ALTER TABLE hds_clusters ADD COLUMN state INTEGER NOT NULL DEFAULT 0;

CREATE TRIGGER hds_records_state_insert AFTER INSERT ON hds_records
BEGIN
    UPDATE hds_clusters SET state = state + 1 WHERE id = NEW.cluster_id;
END;

CREATE TRIGGER hds_records_state_delete AFTER DELETE ON hds_records
BEGIN
    UPDATE hds_clusters SET state = state + 1 WHERE id = OLD.cluster_id;
END;

CREATE TRIGGER hds_records_state_update AFTER UPDATE OF version, name, cluster_id ON hds_records
WHEN NEW.version IS NOT OLD.version OR NEW.name IS NOT OLD.name OR NEW.cluster_id IS NOT OLD.cluster_id
BEGIN
    UPDATE hds_clusters SET state = state + 1 WHERE id IN (OLD.cluster_id, NEW.cluster_id);
END;

CREATE TRIGGER hds_clusters_state_rename AFTER UPDATE OF name ON hds_clusters
WHEN NEW.name IS NOT OLD.name
BEGIN
    UPDATE hds_clusters SET state = state + 1 WHERE id = NEW.id;
END;

CREATE TRIGGER hds_collections_state_rename AFTER UPDATE OF name ON hds_collections
WHEN NEW.name IS NOT OLD.name
BEGIN
    UPDATE hds_clusters SET state = state + 1 WHERE collection_id = NEW.id;
END;

CREATE TRIGGER hds_projects_state_rename AFTER UPDATE OF name ON hds_projects
WHEN NEW.name IS NOT OLD.name
BEGIN
    UPDATE hds_clusters SET state = state + 1
    WHERE collection_id IN (SELECT id FROM hds_collections WHERE project_id = NEW.id);
END;

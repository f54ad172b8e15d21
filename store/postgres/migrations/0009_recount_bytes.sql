-- hds schema, version 9: recount every project's bytes.
--
-- Before this version, a single write took its locks child first and the
-- project's row last while batches took the project first, and a delete
-- of a collection or cluster counted what it removed before locking its
-- row: creates racing deletes of their parent left hds_projects.bytes
-- above what the project holds (issue 24), and nothing brought it back.
-- Every write in a project now locks the project's row first (see
-- quotas.go); this recount, as 0004 computed it, repairs the counts that
-- drifted. The table lock makes the writers of older instances still
-- running wait, so that the recount is exact when it commits.
LOCK TABLE hds_projects IN EXCLUSIVE MODE;

UPDATE hds_projects p SET bytes = n.bytes FROM (
  SELECT p.id,
      (SELECT coalesce(sum(octet_length(c.name)), 0) FROM hds_collections c WHERE c.project_id = p.id)
    + (SELECT coalesce(sum(octet_length(k.name)), 0)
       FROM hds_clusters k JOIN hds_collections c ON c.id = k.collection_id WHERE c.project_id = p.id)
    + (SELECT coalesce(sum(octet_length(r.name) + octet_length(r.value)), 0)
       FROM hds_records r JOIN hds_clusters k ON k.id = r.cluster_id JOIN hds_collections c ON c.id = k.collection_id
       WHERE c.project_id = p.id)
    + (SELECT coalesce(sum(octet_length(v.name) + octet_length(v.value)), 0)
       FROM hds_record_versions v JOIN hds_records r ON r.id = v.record_id JOIN hds_clusters k ON k.id = r.cluster_id
       JOIN hds_collections c ON c.id = k.collection_id WHERE c.project_id = p.id) AS bytes
  FROM hds_projects p
) n
WHERE n.id = p.id AND p.bytes <> n.bytes;

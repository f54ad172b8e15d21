-- hds schema, version 4: quotas (API.md section 8).
--
-- bytes is what limits.max_bytes_per_project counts: the names of the
-- project's collections, clusters and records and the values of its
-- records (as stored), current states and kept versions alike, in bytes
-- (octet_length, as Go's len). Every write that changes it updates it in
-- its own transaction, the project's row last, so that the row lock
-- serialises the writes that grow a project and the quota check is exact.
ALTER TABLE hds_projects ADD COLUMN bytes bigint NOT NULL DEFAULT 0;

UPDATE hds_projects p SET bytes =
    (SELECT coalesce(sum(octet_length(c.name)), 0) FROM hds_collections c WHERE c.project_id = p.id)
  + (SELECT coalesce(sum(octet_length(k.name)), 0)
     FROM hds_clusters k JOIN hds_collections c ON c.id = k.collection_id WHERE c.project_id = p.id)
  + (SELECT coalesce(sum(octet_length(r.name) + octet_length(r.value)), 0)
     FROM hds_records r JOIN hds_clusters k ON k.id = r.cluster_id JOIN hds_collections c ON c.id = k.collection_id
     WHERE c.project_id = p.id)
  + (SELECT coalesce(sum(octet_length(v.name) + octet_length(v.value)), 0)
     FROM hds_record_versions v JOIN hds_records r ON r.id = v.record_id JOIN hds_clusters k ON k.id = r.cluster_id
     JOIN hds_collections c ON c.id = k.collection_id WHERE c.project_id = p.id);

-- hds SQLite schema, version 8: a record's create writes five indexes
-- fewer (issue 38). Lists by created_at, updated_at or type, descending,
-- read the ascending index backwards, a run of equal keys at a time
-- (recordlist.go: descByRuns), instead of a descending twin. Each index
-- of hds_records cost a create 3 to 6 pages of the WAL a commit; these
-- five were a quarter of what a commit wrote. The twins by value and by
-- range stay: their keys are cut (keyprefix.go), and runs of equal cut
-- keys are ordered by the whole texts.
DROP INDEX hds_records_created_desc;
DROP INDEX hds_records_updated_desc;
DROP INDEX hds_records_type_desc;
DROP INDEX hds_records_type_created_desc;
DROP INDEX hds_records_type_updated_desc;

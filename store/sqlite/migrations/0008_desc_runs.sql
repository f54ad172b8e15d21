-- hds SQLite schema, version 8: a record's create writes eight indexes
-- fewer (issue 38). Descending lists read the ascending index backwards,
-- a run of equal keys at a time (recordlist.go: descByRuns), instead of a
-- descending twin (migration 0003). Each index of hds_records cost a
-- create 3 to 6 pages of the WAL a commit; the eight twins were 38% of
-- what a commit wrote.
DROP INDEX hds_records_created_desc;
DROP INDEX hds_records_updated_desc;
DROP INDEX hds_records_type_desc;
DROP INDEX hds_records_value_desc;
DROP INDEX hds_records_type_created_desc;
DROP INDEX hds_records_type_updated_desc;
DROP INDEX hds_records_type_value_desc;
DROP INDEX hds_records_range_desc;

-- hds SQLite schema, version 7: big values are not copied into the
-- indexes (issue 38: the database file at most 3 times what the quota
-- counts). Before it, a record of 8 KB of text was held six times over
-- in the table and its indexes.
--
-- vkey and rkey hold at most their first 64 bytes. A key is longer only
-- when it is a group byte followed by the record's text (vtext): lists
-- by value break the ties of two keys cut alike by their texts, which
-- hold the rest, so that the order is the full keys' (keyprefix.go).
UPDATE hds_records SET vkey = substr(vkey, 1, 64) WHERE length(vkey) > 64;
UPDATE hds_records SET rkey = substr(rkey, 1, 64) WHERE length(rkey) > 64;

-- vtext_lower is kept only for the texts hds_records_text holds (4096
-- characters at most): a valueContains lower-cases the longer ones as
-- it reads them, found by hds_records_long_text.
UPDATE hds_records SET vtext_lower = NULL WHERE length(vtext_lower) > 4096;
DROP INDEX hds_records_long_text;
CREATE INDEX hds_records_long_text ON hds_records (cluster_id) WHERE vtext_lower IS NULL AND vtext IS NOT NULL;

-- value= finds its matches by the texts' first 64 characters, then
-- compares the whole text.
DROP INDEX hds_records_vtext;
CREATE INDEX hds_records_vtext ON hds_records (cluster_id, substr(vtext, 1, 64)) WHERE vtext IS NOT NULL;

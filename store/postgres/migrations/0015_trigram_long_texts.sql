-- hds schema, version 15: a big value written in a fraction of the time
-- (issue 38: a 900 KB value took 385 ms, most of it spent putting every
-- trigram of its text into hds_records_vtext_trgm).
--
-- The trigram index holds the texts of 4096 characters at most, as
-- SQLite's does; valueContains reads the longer ones, found by
-- hds_records_long_text, and matches them with LIKE as before.
DROP INDEX hds_records_vtext_trgm;
CREATE INDEX hds_records_vtext_trgm ON hds_records USING gin (vtext_lower gin_trgm_ops) WHERE length(vtext_lower) <= 4096;
CREATE INDEX hds_records_long_text ON hds_records (cluster_id) WHERE length(vtext_lower) > 4096;

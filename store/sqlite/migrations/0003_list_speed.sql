-- hds SQLite schema, version 3: record lists served from indexes in
-- every order and for the substring filters (API.md section 5).

-- seq is the record's number in hds_records_text: a record's rowid is
-- not it, since VACUUM may renumber the rowids of a table without an
-- INTEGER PRIMARY KEY. New records take the highest number plus one. The
-- index answers which records of the trigram index's matches are in a
-- cluster without reading the table (a count reads nothing else).
ALTER TABLE hds_records ADD COLUMN seq INTEGER;
UPDATE hds_records SET seq = rowid;
CREATE UNIQUE INDEX hds_records_seq ON hds_records (seq, cluster_id);

-- search and valueContains of 3 characters or more: a trigram index of
-- the lower-cased name and canonical text (both lower-cased in Go, with
-- strings.ToLower, so the index compares them as they are). A phrase of
-- the pattern's trigrams matches exactly the texts that contain it.
-- Contentless: the texts are the table's; the triggers keep the index in
-- step with every insert, update and delete, cascades included. A text
-- longer than 4096 characters is left out (indexing a mebibyte costs a
-- write a quarter of a second): valueContains reads those texts, found
-- by hds_records_long_text.
CREATE VIRTUAL TABLE hds_records_text USING fts5(name_lower, vtext_lower,
    content='', contentless_delete=1, tokenize='trigram case_sensitive 1');
INSERT INTO hds_records_text (rowid, name_lower, vtext_lower)
    SELECT seq, name_lower, CASE WHEN length(vtext_lower) <= 4096 THEN vtext_lower END FROM hds_records;
CREATE INDEX hds_records_long_text ON hds_records (cluster_id) WHERE length(vtext_lower) > 4096;

CREATE TRIGGER hds_records_text_insert AFTER INSERT ON hds_records BEGIN
    INSERT INTO hds_records_text (rowid, name_lower, vtext_lower)
        VALUES (new.seq, new.name_lower, CASE WHEN length(new.vtext_lower) <= 4096 THEN new.vtext_lower END);
END;
CREATE TRIGGER hds_records_text_delete AFTER DELETE ON hds_records BEGIN
    DELETE FROM hds_records_text WHERE rowid = old.seq;
END;
CREATE TRIGGER hds_records_text_update AFTER UPDATE OF seq, name_lower, vtext_lower ON hds_records
    WHEN old.seq IS NOT new.seq OR old.name_lower IS NOT new.name_lower OR old.vtext_lower IS NOT new.vtext_lower BEGIN
    DELETE FROM hds_records_text WHERE rowid = old.seq;
    INSERT INTO hds_records_text (rowid, name_lower, vtext_lower)
        VALUES (new.seq, new.name_lower, CASE WHEN length(new.vtext_lower) <= 4096 THEN new.vtext_lower END);
END;

-- search of 1 or 2 characters scans names: with the name beside its
-- lower-cased form, a list by name checks each in the index, in order,
-- and reads only the matches' rows; a count reads the index alone.
DROP INDEX hds_records_name_lower;
CREATE INDEX hds_records_name_lower ON hds_records (cluster_id, name, name_lower);

-- sortOrder=desc: ties are still broken by name, then id, ascending, so a
-- descending list reads an index whose sort column descends and whose
-- name and id ascend, rather than sorting each run of equal values (a
-- batch's records share their times; a type has many records).
CREATE INDEX hds_records_created_desc ON hds_records (cluster_id, created_at DESC, name, id);
CREATE INDEX hds_records_updated_desc ON hds_records (cluster_id, updated_at DESC, name, id);
CREATE INDEX hds_records_type_desc ON hds_records (cluster_id, type DESC, name, id);
CREATE INDEX hds_records_value_desc ON hds_records (cluster_id, vkey DESC, name, id);
CREATE INDEX hds_records_type_created_desc ON hds_records (cluster_id, type, created_at DESC, name, id);
CREATE INDEX hds_records_type_updated_desc ON hds_records (cluster_id, type, updated_at DESC, name, id);
CREATE INDEX hds_records_type_value_desc ON hds_records (cluster_id, type, vkey DESC, name, id);
CREATE INDEX hds_records_range_desc ON hds_records (cluster_id, type, rkey DESC, name, id) WHERE rkey IS NOT NULL;

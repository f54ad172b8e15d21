-- hds schema, version 2: values of any size.
--
-- A btree index entry holds at most about 2.7 kB, and version 1 indexed
-- sort_text, the whole canonical text of a value, so longer values could
-- not be written. From version 2 on no index holds a whole value:
--
-- * sort_text holds only the first 256 code points of the canonical text
--   (NULL outside the text group, as before). Byte-wise order of these
--   prefixes never contradicts the order of the whole texts, so
--   sortBy=value reads hds_records_value_order (unchanged) and breaks ties
--   of equal prefixes with the whole text in vtext.
-- * value= (equality with the whole canonical text) is served by an index
--   of the first 64 code points of vtext; the statement compares that
--   prefix, then the whole text.
-- * valueContains keeps its trigram index of vtext_lower, which holds
--   trigrams rather than the text.

UPDATE hds_records SET sort_text = left(sort_text, 256) WHERE length(sort_text) > 256;
CREATE INDEX hds_records_vtext_prefix ON hds_records (cluster_id, left(vtext, 64));

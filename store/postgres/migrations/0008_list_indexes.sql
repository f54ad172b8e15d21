-- hds schema, version 8: lists fast at any size (API.md section 5:
-- sortBy, cursors, minValue/maxValue). Independent of migrations 0003 to
-- 0007. Only indexes and one function: no row changes.
--
-- Every statement is IF NOT EXISTS / OR REPLACE, and the migration runner
-- runs a file in one transaction, where CREATE INDEX CONCURRENTLY is not
-- allowed: these builds take a SHARE lock on their table (reads go on,
-- writes wait) for as long as the build runs. An operator with large
-- tables who cannot pause writes runs this file's statements by hand
-- first, each CREATE INDEX as CREATE INDEX CONCURRENTLY, outside a
-- transaction (dropping any index a failed concurrent build left INVALID),
-- and then migrates: the migration finds the indexes and builds nothing.

-- The instant a DATETIME record's canonical text denotes, in exact decimal
-- seconds since 1970-01-01 UTC, as store.EpochDecimal writes it: the days
-- are counted from the date shifted by 400 years (a whole Gregorian cycle,
-- so that year 0000 parses too), the fraction (up to nine digits) is kept
-- exactly and the offset is subtracted. NULL for any other type, so that
-- no other record's text is ever parsed. The range filters of a DATETIME
-- list compare it (hds_records_datetime). A one-SELECT SQL function, so
-- that the planner inlines it in the statements and in the index alike.
CREATE OR REPLACE FUNCTION hds_datetime_instant(typ text, txt text) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT CASE WHEN typ = 'DATETIME' THEN
	(make_date(substr(txt, 1, 4)::int + 400, substr(txt, 6, 2)::int, substr(txt, 9, 2)::int) - DATE '2370-01-01')::numeric * 86400
	+ substr(txt, 12, 2)::int * 3600 + substr(txt, 15, 2)::int * 60 + substr(txt, 18, 2)::int
	+ coalesce(('0' || substring(txt from '^.{19}(\.[0-9]+)'))::numeric, 0)
	- CASE WHEN upper(right(txt, 1)) = 'Z' THEN 0
		ELSE (CASE WHEN substr(txt, length(txt) - 5, 1) = '-' THEN -1 ELSE 1 END)
			* (substr(txt, length(txt) - 4, 2)::int * 3600 + substr(txt, length(txt) - 1, 2)::int * 60) END
END
$$;

-- Records. sortBy=id, created_at and updated_at, first pages and cursors
-- alike, read an index range in the list's order (ties by name, then id,
-- as API.md wants) instead of sorting the cluster; desc reads it
-- backwards (ties then sorted within equal times only).
CREATE INDEX IF NOT EXISTS hds_records_cluster_id ON hds_records (cluster_id, id);
CREATE INDEX IF NOT EXISTS hds_records_created ON hds_records (cluster_id, created_at, name, id);
CREATE INDEX IF NOT EXISTS hds_records_updated ON hds_records (cluster_id, updated_at, name, id);

-- Numbers of one type: minValue/maxValue of an INTEGER or FLOAT list are
-- a range of sort_num within the type (hds_records_value_order holds both
-- types in one group, so an INTEGER range there also walks the FLOATs),
-- and sortBy=value of such a list reads it in order.
CREATE INDEX IF NOT EXISTS hds_records_number ON hds_records (cluster_id, type, sort_num, name, id)
    WHERE type IN ('INTEGER', 'FLOAT');

-- A record's type decides its sort group (store.KeyOf): told so, the
-- planner does not count a list filtered by type and read by group
-- (sortBy=value) as if the two were independent.
CREATE STATISTICS IF NOT EXISTS hds_records_type_group (dependencies) ON type, sort_group FROM hds_records;

-- DATETIME instants: minValue/maxValue of a DATETIME list are a range here.
CREATE INDEX IF NOT EXISTS hds_records_datetime ON hds_records (cluster_id, hds_datetime_instant(type, vtext))
    WHERE type = 'DATETIME';

-- Collections and clusters: the same three sorts within their parent
-- (name is served by the UNIQUE (parent, name) keys). Projects are listed
-- by owner OR membership, which no one index orders, and a user has at
-- most limits.max_projects_per_user of them: they are sorted as found.
CREATE INDEX IF NOT EXISTS hds_collections_id ON hds_collections (project_id, id);
CREATE INDEX IF NOT EXISTS hds_collections_created ON hds_collections (project_id, created_at, name, id);
CREATE INDEX IF NOT EXISTS hds_collections_updated ON hds_collections (project_id, updated_at, name, id);
CREATE INDEX IF NOT EXISTS hds_clusters_id ON hds_clusters (collection_id, id);
CREATE INDEX IF NOT EXISTS hds_clusters_created ON hds_clusters (collection_id, created_at, name, id);
CREATE INDEX IF NOT EXISTS hds_clusters_updated ON hds_clusters (collection_id, updated_at, name, id);

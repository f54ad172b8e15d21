-- hds schema, version 9: server administrators (API.md section 24).
-- Independent of migrations after 0008.
--
-- An existing installation has no administrator: every user it has
-- becomes one, so that whoever managed it keeps managing it (a
-- configuration without any administrator gets none, as the contract
-- allows, until the CLI makes one).
ALTER TABLE hds_users ADD COLUMN admin boolean NOT NULL DEFAULT false;
UPDATE hds_users SET admin = true WHERE NOT EXISTS (SELECT 1 FROM hds_users WHERE admin);

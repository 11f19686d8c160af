-- Petstore schema, version 17: a fourth scope of API key, `till`, a till's key, which reads
-- as `read` does and writes only for the staff member signed in at it (src/api_key.rs).
-- Never edit this file once landed.
--
-- SQLite cannot change a CHECK constraint in place: the table is made again with the new
-- check and the keys copied over, ids and all (as version 14 did).

CREATE TABLE api_keys_new (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    name       TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 100),
    scope      TEXT NOT NULL CHECK (scope IN ('read', 'write', 'reports', 'till')),
    hash       BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
    prefix     TEXT NOT NULL CHECK (length(prefix) BETWEEN 1 AND 12),
    created_at TEXT NOT NULL,
    rotated_at TEXT,
    revoked_at TEXT
);

INSERT INTO api_keys_new (id, name, scope, hash, prefix, created_at, rotated_at, revoked_at)
    SELECT id, name, scope, hash, prefix, created_at, rotated_at, revoked_at FROM api_keys;

-- Keys are revoked, never deleted, so the copy's highest id is the counter's too; and
-- were one deleted, its counter is carried over.
UPDATE sqlite_sequence SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'api_keys')
    WHERE name = 'api_keys_new';

DROP TABLE api_keys;
ALTER TABLE api_keys_new RENAME TO api_keys;

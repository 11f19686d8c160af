-- Petstore schema, version 2: named API keys. Never edit this file once landed.
--
-- A key is kept only as the SHA-256 hash of its secret; the secret itself is shown once,
-- when the key is created or rotated. There is deliberately no last_used_at: keeping it
-- would cost a write on every authenticated request.

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    -- Names identify keys to people ("till", "label printer"), case-insensitively, and
    -- stay taken after revocation so that a listing never shows two keys of one name.
    name       TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 100),
    scope      TEXT NOT NULL CHECK (scope IN ('read', 'write')),
    -- The unique index on the hash is how a presented key is found.
    hash       BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
    -- `psk_` and the first 8 hex digits of the secret, to tell keys apart in listings.
    prefix     TEXT NOT NULL CHECK (length(prefix) BETWEEN 1 AND 12),
    created_at TEXT NOT NULL,
    rotated_at TEXT,
    -- NULL while the key is active.
    revoked_at TEXT
);

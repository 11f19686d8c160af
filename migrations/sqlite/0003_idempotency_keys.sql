-- Petstore schema, version 3: Idempotency-Key records for POST /store/orders (IETF httpapi
-- draft "The Idempotency-Key HTTP Header Field"). Never edit this file once landed.

CREATE TABLE idempotency_keys (
    id          INTEGER PRIMARY KEY,
    -- SHA-256 of the client's credential (its Bearer key), never the credential itself:
    -- keys are unique per client, so two clients may use the same key independently.
    scope       BLOB NOT NULL CHECK (length(scope) = 32),
    key         TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    -- SHA-256 of the parsed request in canonical JSON: a retry must ask for the same thing.
    fingerprint BLOB NOT NULL CHECK (length(fingerprint) = 32),
    -- The first response: 201 with the order as placed, or the refusal (an Error object).
    -- No foreign key to orders: the order may be cancelled later and the replay must
    -- still be the first response.
    status      INTEGER NOT NULL CHECK (status BETWEEN 200 AND 499),
    body        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    -- Unix seconds: an integer compares exactly, whatever the text form of a timestamp.
    expires_at  INTEGER NOT NULL,
    UNIQUE (scope, key)
);

CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);

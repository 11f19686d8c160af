-- Petstore schema, version 16: staff at the till, who made each record, and the activity
-- log. Never edit this file once landed.
--
-- A shop names the person behind every write: staff members sign in at a till with a PIN
-- and act within their role (domain::staff decides who may do what; the store keeps rows).
-- A database made before this version has no staff: it gets the one owner every shop
-- starts with, id 1, with no PIN, so a shop of one owner works as it did (a sole member
-- without a PIN signs in without one), and new databases get it the same way, here.

-- Names are unique ignoring case: `name_lower` is the name lowercased by the store (Rust's
-- Unicode lowercasing; SQLite's lower() and NOCASE fold ASCII only). Staff are deactivated,
-- never deleted, so every record that names one keeps finding them.
CREATE TABLE staff (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    name_lower  TEXT NOT NULL UNIQUE,
    role        TEXT NOT NULL CHECK (role IN ('cashier', 'manager', 'owner')),
    -- The PIN's argon2id hash (a PHC string); NULL for the owner made here, until one is set.
    pin_hash    TEXT,
    active      INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    -- Wrong PINs in a row, and the lockout they earned (domain::lock_after).
    failed_pins INTEGER NOT NULL DEFAULT 0 CHECK (failed_pins >= 0),
    locked_until TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

INSERT INTO staff (id, name, name_lower, role, created_at, updated_at)
    VALUES (1, 'Owner', 'owner', 'owner',
            strftime('%Y-%m-%dT%H:%M:%SZ', 'now'), strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));

-- Signed-in sessions: a shift at a till, or a manager's one-use approval. Only the SHA-256
-- of a token is kept, so a copy of the database signs nobody in. Expired rows are deleted
-- as new sessions begin, by their expiry.
CREATE TABLE staff_sessions (
    token_hash BLOB PRIMARY KEY CHECK (length(token_hash) = 32),
    staff_id   INTEGER NOT NULL REFERENCES staff (id),
    purpose    TEXT NOT NULL CHECK (purpose IN ('shift', 'approval')),
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
) WITHOUT ROWID;
CREATE INDEX staff_sessions_by_expiry ON staff_sessions (expires_at);

-- The activity log: one row per write of the shop, written in the write's own transaction.
-- `actor` is the whole domain::Actor as JSON (as the records below keep it); `staff_id` and
-- `approver_id` are its people, for the filter by person, with no foreign key: a till's
-- mirror keeps this schema too, and logs what its server's staff did there, whom its own
-- staff table does not hold (staff are never deleted, so on a shop's own database every id
-- stays a member's). The log reads newest first, by id. Placing an order writes a row here, so the indexes are few and the person indexes
-- partial: a write by a key acting as itself (no staff) costs only the table's own row.
CREATE TABLE activity (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    at             TEXT NOT NULL,
    kind           TEXT NOT NULL,
    subject_entity TEXT,
    subject_id     TEXT,
    staff_id       INTEGER,
    approver_id    INTEGER,
    actor          TEXT,
    detail         TEXT
);
CREATE INDEX activity_by_staff ON activity (staff_id, id) WHERE staff_id IS NOT NULL;
CREATE INDEX activity_by_approver ON activity (approver_id, id) WHERE approver_id IS NOT NULL;
CREATE INDEX activity_by_kind ON activity (kind, id);

-- Who made each record, as the domain::Actor's JSON: NULL is "before staff", which every
-- existing row is (the shop did not know who then).
ALTER TABLE orders ADD COLUMN placed_by TEXT;
ALTER TABLE orders ADD COLUMN completed_by TEXT;
ALTER TABLE orders ADD COLUMN cancelled_by TEXT;
ALTER TABLE inventory_adjustments ADD COLUMN made_by TEXT;

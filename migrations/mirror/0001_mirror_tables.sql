-- Mirror schema, version 1. Never edit this file once landed.
--
-- The tables of a till's mirror (src/mirror/local/), beside the shop's own (the store's
-- migrations): which remote it copies and how far, what a full copy has received, the
-- outbox of writes taken offline, the provisional orders' server ids, and the keys of
-- writes the server has taken. Only mirror files have them.
--
-- `IF NOT EXISTS`: before the mirror had numbered migrations, its tables were made just so
-- on every opening, and a till's file from then has them all, with no version. This first
-- migration makes what such a file lacks (everything, in a new one) and keeps what it has:
-- the outbox of a till that was offline when it was upgraded waits in it.
CREATE TABLE mirror_schema (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    -- The number of the last migration of migrations/mirror/ applied.
    version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS mirror_state (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    -- The remote's origin (scheme, host, port): one mirror file per remote.
    origin          TEXT NOT NULL,
    -- Every change of the remote's feed up to here is in the mirror; NULL until the first
    -- full sync has ended.
    position        INTEGER,
    synced_at       TEXT,
    -- The next id for an order placed offline (see PROVISIONAL_ORDER_IDS).
    next_provisional INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS mirror_seen (
    entity TEXT NOT NULL,
    id     INTEGER NOT NULL,
    PRIMARY KEY (entity, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outbox (
    -- AUTOINCREMENT: a place in the queue is never given twice, even once the queue was empty.
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    -- The Idempotency-Key it is sent with.
    key         TEXT NOT NULL UNIQUE,
    command     TEXT NOT NULL,
    pet_id      INTEGER,
    order_id    INTEGER,
    -- What it did to the pet's stock here, kept on top of the server's stock while pending.
    stock_delta INTEGER NOT NULL DEFAULT 0,
    state       TEXT NOT NULL CHECK (state IN ('pending', 'attention')),
    reason      TEXT,
    created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_pending_by_pet ON outbox (pet_id) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS outbox_pending_by_order ON outbox (order_id) WHERE state = 'pending';
CREATE TABLE IF NOT EXISTS provisional_orders (
    provisional INTEGER PRIMARY KEY,
    server      INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_sent (
    key      TEXT PRIMARY KEY,
    command  TEXT NOT NULL,
    -- The server's id of the order it placed or completed.
    order_id INTEGER,
    sent_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS outbox_sent_by_time ON outbox_sent (sent_at);

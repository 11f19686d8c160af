-- Petstore schema, version 1. Never edit this file once landed: add 0002_*.sql instead.

CREATE TABLE categories (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    -- Unicode lower-cased name: uniqueness and sorting ignore case.
    name_folded TEXT NOT NULL UNIQUE,
    description TEXT CHECK (description IS NULL OR length(description) <= 500),
    created_at  TEXT NOT NULL
);

CREATE TABLE pets (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    name             TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    name_folded      TEXT NOT NULL,
    category_id      INTEGER REFERENCES categories (id),
    status           TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold')),
    description      TEXT CHECK (description IS NULL OR length(description) <= 500),
    -- The inventory lives on the pet row: one row to lock and update per order.
    stock            INTEGER NOT NULL DEFAULT 0 CHECK (stock >= 0 AND stock <= 1000000),
    stock_updated_at TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    updated_at       TEXT NOT NULL
);

CREATE INDEX pets_by_category ON pets (category_id, status, name_folded);
CREATE INDEX pets_by_status ON pets (status, name_folded);
CREATE INDEX pets_by_name ON pets (name_folded);
CREATE INDEX pets_by_stock ON pets (stock, id);

CREATE TABLE orders (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    pet_id     INTEGER NOT NULL REFERENCES pets (id),
    quantity   INTEGER NOT NULL CHECK (quantity BETWEEN 1 AND 10000),
    ship_date  TEXT,
    complete   INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
    created_at TEXT NOT NULL
);

CREATE INDEX orders_by_pet ON orders (pet_id, complete);
CREATE INDEX orders_by_complete ON orders (complete);

CREATE TABLE inventory_adjustments (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    pet_id         INTEGER NOT NULL REFERENCES pets (id) ON DELETE CASCADE,
    delta          INTEGER NOT NULL CHECK (delta <> 0),
    reason         TEXT NOT NULL CHECK (length(reason) BETWEEN 1 AND 200),
    quantity_after INTEGER NOT NULL CHECK (quantity_after >= 0),
    created_at     TEXT NOT NULL
);

CREATE INDEX adjustments_by_pet ON inventory_adjustments (pet_id, id);

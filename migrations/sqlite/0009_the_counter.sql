-- Petstore schema, version 9: the counter (prices, barcodes, order totals and customers,
-- the shop's settings). Never edit this file once landed.
--
-- Money is whole cents (INTEGER): exact, never a float. Older pets have no price and older
-- orders no unit price, completion time or customer: NULL, as the API shows them.

ALTER TABLE pets ADD COLUMN price_cents INTEGER
    CHECK (price_cents IS NULL OR price_cents BETWEEN 0 AND 99999999);
ALTER TABLE pets ADD COLUMN sku TEXT CHECK (sku IS NULL OR length(sku) BETWEEN 1 AND 64);
-- The barcode lower-cased: unique ignoring case, and found by exact code.
ALTER TABLE pets ADD COLUMN sku_folded TEXT;
CREATE UNIQUE INDEX pets_by_sku ON pets (sku_folded) WHERE sku_folded IS NOT NULL;

-- 0006's covering index, with the columns the list now returns as well.
DROP INDEX pets_by_category_status_name;
CREATE INDEX pets_by_category_status_name
    ON pets (category_id, status, name_folded, id, name, description, price_cents, sku, created_at, updated_at);

-- A pet's price or barcode changed is a change of the pet for the feed (0008's trigger
-- named the columns it watched).
DROP TRIGGER changes_pet_updated;
CREATE TRIGGER changes_pet_updated AFTER UPDATE OF name, category_id, status, description, price_cents, sku ON pets
    WHEN OLD.name IS NOT NEW.name OR OLD.category_id IS NOT NEW.category_id
        OR OLD.status IS NOT NEW.status OR OLD.description IS NOT NEW.description
        OR OLD.price_cents IS NOT NEW.price_cents OR OLD.sku IS NOT NEW.sku
BEGIN
    INSERT INTO changes (entity, entity_id, action, at)
        VALUES ('pet', NEW.id, 'updated', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;

-- The pet's price when the order was placed; the total is it times the quantity.
ALTER TABLE orders ADD COLUMN unit_price_cents INTEGER
    CHECK (unit_price_cents IS NULL OR unit_price_cents BETWEEN 0 AND 99999999);
-- When it was completed, apart from the planned ship date.
ALTER TABLE orders ADD COLUMN completed_at TEXT;
ALTER TABLE orders ADD COLUMN customer_name TEXT
    CHECK (customer_name IS NULL OR length(customer_name) BETWEEN 1 AND 100);
-- Folded as pet names are (lower case, no accents): the orders' search.
ALTER TABLE orders ADD COLUMN customer_name_folded TEXT;
ALTER TABLE orders ADD COLUMN customer_phone TEXT
    CHECK (customer_phone IS NULL OR length(customer_phone) BETWEEN 1 AND 40);
ALTER TABLE orders ADD COLUMN note TEXT CHECK (note IS NULL OR length(note) <= 500);
-- The sales report: completed orders by when they were completed.
CREATE INDEX orders_by_completed_at ON orders (completed_at) WHERE completed_at IS NOT NULL;

-- The shop's settings, one row once saved (until then the defaults apply).
CREATE TABLE shop_settings (
    id              INTEGER PRIMARY KEY CHECK (id = 1),
    shop_name       TEXT NOT NULL CHECK (length(shop_name) BETWEEN 1 AND 100),
    currency        TEXT NOT NULL CHECK (length(currency) = 3),
    time_zone       TEXT NOT NULL CHECK (length(time_zone) BETWEEN 1 AND 64),
    low_stock_below INTEGER NOT NULL CHECK (low_stock_below BETWEEN 0 AND 1000000)
);

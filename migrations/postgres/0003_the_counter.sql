-- Petstore schema on PostgreSQL, version 3: the counter (prices, barcodes, order totals
-- and customers, the shop's settings); SQLite's 0009. Never edit this file once landed.
--
-- Money is whole cents (bigint): exact, never a float. Older rows have NULLs.

ALTER TABLE pets ADD COLUMN price_cents bigint
    CHECK (price_cents IS NULL OR price_cents BETWEEN 0 AND 99999999);
ALTER TABLE pets ADD COLUMN sku text CHECK (sku IS NULL OR char_length(sku) BETWEEN 1 AND 64);
-- The barcode lower-cased: unique ignoring case, and found by exact code.
ALTER TABLE pets ADD COLUMN sku_folded text COLLATE "C";
CREATE UNIQUE INDEX pets_by_sku ON pets (sku_folded) WHERE sku_folded IS NOT NULL;

-- A pet's price or barcode changed is a change of the pet for the feed.
CREATE OR REPLACE FUNCTION changes_of_pets() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO changes (entity, entity_id, action) VALUES ('pet', NEW.id, 'created');
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO changes (entity, entity_id, action) VALUES ('pet', OLD.id, 'deleted');
    ELSE
        IF (OLD.name, OLD.category_id, OLD.status, OLD.description, OLD.price_cents, OLD.sku)
           IS DISTINCT FROM (NEW.name, NEW.category_id, NEW.status, NEW.description, NEW.price_cents, NEW.sku) THEN
            INSERT INTO changes (entity, entity_id, action) VALUES ('pet', NEW.id, 'updated');
        END IF;
        IF OLD.stock IS DISTINCT FROM NEW.stock THEN
            INSERT INTO changes (entity, entity_id, action) VALUES ('inventory', NEW.id, 'updated');
        END IF;
    END IF;
    RETURN NULL;
END $$;

ALTER TABLE orders ADD COLUMN unit_price_cents bigint
    CHECK (unit_price_cents IS NULL OR unit_price_cents BETWEEN 0 AND 99999999);
ALTER TABLE orders ADD COLUMN completed_at text;
ALTER TABLE orders ADD COLUMN customer_name text
    CHECK (customer_name IS NULL OR char_length(customer_name) BETWEEN 1 AND 100);
ALTER TABLE orders ADD COLUMN customer_name_folded text COLLATE "C";
ALTER TABLE orders ADD COLUMN customer_phone text
    CHECK (customer_phone IS NULL OR char_length(customer_phone) BETWEEN 1 AND 40);
ALTER TABLE orders ADD COLUMN note text CHECK (note IS NULL OR char_length(note) <= 500);
CREATE INDEX orders_by_completed_at ON orders (completed_at) WHERE completed_at IS NOT NULL;

CREATE TABLE shop_settings (
    id              integer PRIMARY KEY CHECK (id = 1),
    shop_name       text NOT NULL CHECK (char_length(shop_name) BETWEEN 1 AND 100),
    currency        text NOT NULL CHECK (char_length(currency) = 3),
    time_zone       text NOT NULL CHECK (char_length(time_zone) BETWEEN 1 AND 64),
    low_stock_below bigint NOT NULL CHECK (low_stock_below BETWEEN 0 AND 1000000)
);

-- Petstore PostgreSQL schema, version 8: an order can be deleted, and a completed order
-- has shipped. Never edit this file once landed. See migrations/sqlite/0012 for why.
--
-- The deleted order's row stays for the shop's records, stamped `deleted_at`; it is always
-- cancelled first, so only the Cancelled tab's list must leave it out: its index does.
ALTER TABLE orders ADD COLUMN deleted_at text;
DROP INDEX orders_cancelled;
CREATE INDEX orders_cancelled ON orders (id) WHERE cancelled_at IS NOT NULL AND deleted_at IS NULL;

-- Orders get their own feed trigger: a deletion is the order `deleted` (categories keep
-- 0002's changes_of_rows).
DROP TRIGGER changes_of_orders ON orders;

-- Completed orders with no planned ship date shipped when completed; backfilled while the
-- trigger is away, with one `reset` of the shop for every follower instead of a change
-- per order ever completed.
INSERT INTO changes (entity, action)
    SELECT 'shop', 'reset'
    WHERE EXISTS (SELECT 1 FROM orders WHERE complete AND ship_date IS NULL AND completed_at IS NOT NULL);
UPDATE orders SET ship_date = completed_at WHERE complete AND ship_date IS NULL AND completed_at IS NOT NULL;

CREATE FUNCTION changes_of_orders() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO changes (entity, entity_id, action) VALUES ('order', OLD.id, 'deleted');
    ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO changes (entity, entity_id, action) VALUES ('order', NEW.id, 'created');
    ELSIF OLD.deleted_at IS NULL AND NEW.deleted_at IS NOT NULL THEN
        INSERT INTO changes (entity, entity_id, action) VALUES ('order', NEW.id, 'deleted');
    ELSE
        INSERT INTO changes (entity, entity_id, action) VALUES ('order', NEW.id, 'updated');
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER changes_of_orders AFTER INSERT OR UPDATE OR DELETE ON orders
    FOR EACH ROW EXECUTE FUNCTION changes_of_orders();

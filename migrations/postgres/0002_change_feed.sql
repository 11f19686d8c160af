-- Petstore PostgreSQL schema, version 2. Never edit this file once landed.
--
-- The change feed (GET /changes, GET /events): a row per committed change to the shop's
-- data, written by triggers in the same transaction as the change.
--
-- Numbering them in commit order is the hard part with many writers: a number drawn from
-- a sequence inside the transaction can commit after a higher one, and a client that read
-- up to the higher one would never see it. So the rows are written without a number, and
-- the sequencer (src/postgres/feed.rs) numbers them afterwards, in batches, only the rows
-- of transactions older than every transaction still running (xid below the snapshot's
-- xmin): no row can appear later below a number already given. One sequencer at a time
-- (it locks `feed_counter`), any replica.
--
-- entity: pet (the pet's own fields), inventory (its stock), category, order, or shop (the
-- whole shop changed, as a bulk seed does: resynchronise); entity_id is NULL for shop.
CREATE TABLE changes (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    xid       xid8 NOT NULL DEFAULT pg_current_xact_id(),
    seq       bigint UNIQUE,
    entity    text NOT NULL CHECK (entity IN ('pet', 'inventory', 'category', 'order', 'shop')),
    entity_id bigint,
    action    text NOT NULL CHECK (action IN ('created', 'updated', 'deleted', 'reset')),
    at        text NOT NULL DEFAULT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
);

-- The sequencer's work: rows not yet numbered, in the order it numbers them.
CREATE INDEX changes_to_number ON changes (xid, id) WHERE seq IS NULL;

-- The last number given. One row; its lock makes one sequencer run at a time.
CREATE TABLE feed_counter (
    id   integer PRIMARY KEY CHECK (id = 1),
    last bigint NOT NULL
);
INSERT INTO feed_counter (id, last) VALUES (1, 0);

-- The last number purged past the retention window: a client behind it has missed changes
-- and must resynchronise (410). One row.
CREATE TABLE change_horizon (
    id             integer PRIMARY KEY CHECK (id = 1),
    purged_through bigint NOT NULL
);
INSERT INTO change_horizon (id, purged_through) VALUES (1, 0);

CREATE FUNCTION changes_of_pets() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO changes (entity, entity_id, action) VALUES ('pet', NEW.id, 'created');
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO changes (entity, entity_id, action) VALUES ('pet', OLD.id, 'deleted');
    ELSE
        IF (OLD.name, OLD.category_id, OLD.status, OLD.description)
           IS DISTINCT FROM (NEW.name, NEW.category_id, NEW.status, NEW.description) THEN
            INSERT INTO changes (entity, entity_id, action) VALUES ('pet', NEW.id, 'updated');
        END IF;
        IF OLD.stock IS DISTINCT FROM NEW.stock THEN
            INSERT INTO changes (entity, entity_id, action) VALUES ('inventory', NEW.id, 'updated');
        END IF;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER changes_of_pets AFTER INSERT OR UPDATE OR DELETE ON pets
    FOR EACH ROW EXECUTE FUNCTION changes_of_pets();

-- Categories and orders: the entity is the trigger's argument.
CREATE FUNCTION changes_of_rows() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO changes (entity, entity_id, action) VALUES (TG_ARGV[0], OLD.id, 'deleted');
    ELSE
        INSERT INTO changes (entity, entity_id, action)
            VALUES (TG_ARGV[0], NEW.id, CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER changes_of_categories AFTER INSERT OR UPDATE OR DELETE ON categories
    FOR EACH ROW EXECUTE FUNCTION changes_of_rows('category');
CREATE TRIGGER changes_of_orders AFTER INSERT OR UPDATE OR DELETE ON orders
    FOR EACH ROW EXECUTE FUNCTION changes_of_rows('order');

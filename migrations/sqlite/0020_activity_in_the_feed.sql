-- Petstore schema, version 20: the activity log's entries are in the change feed. Never
-- edit this file once landed.
--
-- Each entry of the log adds a change `activity`, `created`, with the entry's id, in the
-- entry's own transaction: the feed's readers that ask for them (GET /changes?include=
-- activity, GET /events's `activity` events; src/domain/feed.rs, FeedScope) follow the log
-- as they follow the shop. Every entry but a sale's (domain::activity::UNINDEXED_KIND): a
-- sale's order is in the feed already (`order`, `created`, written by 0008's trigger),
-- and the order says who placed it, so a sale writes no more than it did before the log.
--
-- The table is made again because a CHECK cannot be altered, as 0011 did, with the same
-- columns and rows and `activity` among the entities; with legacy_alter_table on, the
-- rename leaves the text of the triggers that write to it alone.

PRAGMA legacy_alter_table = ON;

CREATE TABLE changes_0020 (
    seq       INTEGER PRIMARY KEY,
    entity    TEXT NOT NULL CHECK (entity = 'pet' OR entity = 'inventory' OR entity = 'category'
                                   OR entity = 'order' OR entity = 'shop' OR entity = 'activity'),
    entity_id INTEGER,
    action    TEXT NOT NULL CHECK (action = 'created' OR action = 'updated' OR action = 'deleted'
                                   OR action = 'reset'),
    at        TEXT NOT NULL
);
INSERT INTO changes_0020 (seq, entity, entity_id, action, at)
    SELECT seq, entity, entity_id, action, at FROM changes ORDER BY seq;
DROP TABLE changes;
ALTER TABLE changes_0020 RENAME TO changes;

PRAGMA legacy_alter_table = OFF;

CREATE TRIGGER changes_activity_created AFTER INSERT ON activity
    WHEN NEW.kind <> 'order_placed'
BEGIN
    INSERT INTO changes (entity, entity_id, action, at)
        VALUES ('activity', NEW.id, 'created', strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
END;

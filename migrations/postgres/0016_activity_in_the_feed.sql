-- Petstore schema on PostgreSQL, version 16: the activity log's entries are in the change
-- feed. Never edit this file once landed.
--
-- Each entry of the log adds a change `activity`, `created`, with the entry's id, in the
-- entry's own transaction, for the feed's readers that ask for them (GET /changes?include=
-- activity, GET /events's `activity` events; src/domain/feed.rs, FeedScope). Every entry
-- but a sale's (domain::activity::UNINDEXED_KIND): a sale's order is in the feed already,
-- and it says who placed it, so a sale writes no more than it did before the log. As on
-- SQLite (migration 0020). The table has no CHECK of its entities to widen: 0005 dropped
-- them, the triggers being its only writers.

CREATE FUNCTION changes_of_activity() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO changes (entity, entity_id, action) VALUES ('activity', NEW.id, 'created');
    RETURN NULL;
END $$;

CREATE TRIGGER changes_of_activity AFTER INSERT ON activity
    FOR EACH ROW WHEN (NEW.kind <> 'order_placed') EXECUTE FUNCTION changes_of_activity();

//! Idempotency keys for placing orders (IETF httpapi draft "The Idempotency-Key HTTP Header
//! Field"), the part every engine shares: what a key is, how a request is fingerprinted,
//! how an outcome is kept and replayed, and the rule for a key seen again. Each store runs
//! [`decide`] inside the transaction that places the order, so the lookup, the order and
//! the record commit together or not at all.

use chrono::{DateTime, TimeDelta, Utc};
use sha2::{Digest, Sha256};

use crate::domain::{NewOrder, Order, Timestamp};
use crate::error::{Error, ErrorCode, Result};

/// How long a key is remembered unless the server is told otherwise (`--idempotency-window`).
/// The draft asks servers to publish this; openapi.yaml does. A week: a till that sold
/// through a long outage replays its queue days later, and each retry must still be known.
pub const KEY_LIFETIME: TimeDelta = TimeDelta::days(7);

/// Longest key accepted, in characters (printable ASCII, so also in bytes).
pub const MAX_KEY_LEN: usize = 255;

/// Expired records deleted with each new one. More than the one added, so the table holds
/// at most about one window of keys however long the server runs, and no timer is needed.
pub const PURGE_BATCH: i64 = 16;

/// The status kept for a placed order: what `POST /store/orders` answers.
pub const CREATED: u16 = 201;

/// A client's key. The draft makes keys unique per client, and a client here is the
/// credential it authenticates with, so the key is scoped by a hash of that credential:
/// two programs with different API keys never see each other's orders, and the credential
/// itself is never stored.
#[derive(Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    scope: [u8; 32],
    key: String,
    /// How long the server keeps it.
    lifetime: TimeDelta,
}

impl IdempotencyKey {
    /// `key` (already unquoted) as sent by the client that authenticated with `credential`.
    pub fn new(credential: &str, key: &str) -> Result<Self, String> {
        let printable = key.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
        if key.is_empty() || key.len() > MAX_KEY_LEN || !printable {
            return Err(format!("must be 1 to {MAX_KEY_LEN} printable ASCII characters"));
        }
        // A label of our own in front, so this hash is never the same as the one the key
        // table keeps to recognise the credential.
        let scope = Sha256::new()
            .chain_update(b"petstore idempotency scope\0")
            .chain_update(credential.as_bytes())
            .finalize()
            .into();
        Ok(Self { scope, key: key.to_owned(), lifetime: KEY_LIFETIME })
    }

    /// The key kept for `lifetime` instead of [`KEY_LIFETIME`].
    pub fn kept_for(self, lifetime: TimeDelta) -> Self {
        Self { lifetime, ..self }
    }

    /// The expiry of its record made at `now`, in Unix seconds: an integer compares
    /// exactly, whatever the text form of a timestamp.
    pub fn expires_at(&self, now: DateTime<Utc>) -> i64 {
        (now + self.lifetime).timestamp()
    }
}

// Not derived: the scope is a hash of a secret and has no business in a log line.
impl std::fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("IdempotencyKey").field(&self.key).finish()
    }
}

/// What placing an order under a key came to.
#[derive(Debug)]
pub struct Placed {
    /// The order, or why the shop refused it: the first request's outcome, on a replay too.
    pub outcome: Result<Order>,
    /// The outcome is an earlier request's, and nothing was placed now.
    pub replayed: bool,
}

/// The request as the order it asks for, in canonical JSON, hashed. The parsed order, not
/// the raw bytes: key order, spacing, a default written out (`"quantity": 1`) or a time in
/// another zone do not make a retry a different request, while every field that changes
/// what is placed does. `NewOrder` rejects unknown fields, so nothing escapes the hash.
pub fn fingerprint(new: &NewOrder) -> Result<[u8; 32]> {
    let canonical = serde_json::to_vec(new).map_err(Error::internal)?;
    Ok(Sha256::digest(canonical).into())
}

pub struct Record {
    pub fingerprint: Vec<u8>,
    pub status: u16,
    pub body: String,
    pub created_at: Timestamp,
}

impl Record {
    /// The first response again.
    pub fn outcome(&self) -> Result<Result<Order>> {
        let unreadable =
            |e: serde_json::Error| Error::internal(format!("an unreadable idempotency record: {e}"));
        if self.status == CREATED {
            serde_json::from_str::<Order>(&self.body).map(Ok).map_err(unreadable)
        } else {
            serde_json::from_str::<Error>(&self.body).map(Err).map_err(unreadable)
        }
    }
}

impl IdempotencyKey {
    /// The hash of the client's credential the key is scoped by.
    pub fn scope(&self) -> &[u8; 32] {
        &self.scope
    }

    /// The key as the client sent it.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// What an outcome is kept as: the status the API answers and its body.
pub fn encode(outcome: &Result<Order>) -> Result<(u16, String)> {
    let (status, body) = match outcome {
        Ok(order) => (CREATED, serde_json::to_string(order)),
        Err(refusal) => (refusal.status(), serde_json::to_string(refusal)),
    };
    Ok((status, body.map_err(Error::internal)?))
}

/// The answer to a key already recorded: the first outcome if the request is the same
/// order, else `idempotency_key_reused`.
pub fn replay(key: &IdempotencyKey, first: &Record, fingerprint: &[u8; 32]) -> Result<Placed> {
    if first.fingerprint != fingerprint {
        return Err(Error::new(
            ErrorCode::IdempotencyKeyReused,
            format!(
                "Idempotency-Key {:?} was used at {} for a different order; send that same \
                 order again to get its response, or use a new key for a new order",
                key.key, first.created_at
            ),
        ));
    }
    Ok(Placed { outcome: first.outcome()?, replayed: true })
}

/// Whether a failed attempt is the shop's refusal, kept as the request's outcome, or an
/// internal failure, which rolls everything back so that a retry is processed afresh.
pub fn is_kept(refusal: &Error) -> bool {
    refusal.code != ErrorCode::Internal
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::parse_body;

    fn order(json: &str) -> NewOrder {
        parse_body(json.as_bytes()).unwrap()
    }
    #[test]
    fn the_fingerprint_is_of_the_order_asked_for_not_of_its_spelling() {
        let same = [
            r#"{"petId": 1}"#,
            r#"{"quantity": 1, "petId": 1}"#,
            r#"{ "petId":1, "complete": false, "shipDate": null }"#,
        ];
        for json in same {
            assert_eq!(fingerprint(&order(json)).unwrap(), fingerprint(&order(same[0])).unwrap(), "{json}");
        }
        let zoned = r#"{"petId": 1, "shipDate": "2026-11-28T11:00:00+01:00"}"#;
        let utc = r#"{"petId": 1, "shipDate": "2026-11-28T10:00:00Z"}"#;
        assert_eq!(fingerprint(&order(zoned)).unwrap(), fingerprint(&order(utc)).unwrap());
        for different in
            [r#"{"petId": 2}"#, r#"{"petId": 1, "quantity": 2}"#, r#"{"petId": 1, "complete": true}"#]
        {
            assert_ne!(
                fingerprint(&order(different)).unwrap(),
                fingerprint(&order(same[0])).unwrap(),
                "{different}"
            );
        }
    }

    #[test]
    fn keys_are_printable_ascii_and_scoped_by_credential() {
        assert!(IdempotencyKey::new("k", "").is_err());
        assert!(IdempotencyKey::new("k", &"a".repeat(256)).is_err());
        assert!(IdempotencyKey::new("k", "caf\u{e9}").is_err());
        assert!(IdempotencyKey::new("k", "tab\there").is_err());
        assert!(IdempotencyKey::new("k", &"a".repeat(255)).is_ok());
        let one = IdempotencyKey::new("key one", "x").unwrap();
        assert_eq!(one, IdempotencyKey::new("key one", "x").unwrap());
        assert_ne!(one, IdempotencyKey::new("key two", "x").unwrap());
        assert_ne!(one.scope, <[u8; 32]>::from(Sha256::digest("key one")), "not the key table's hash");
        assert!(!format!("{one:?}").contains("key one"));
    }
}

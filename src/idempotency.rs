//! Idempotency keys (IETF httpapi draft "The Idempotency-Key HTTP Header Field") for the
//! commands a till may have to send again: placing an order, adjusting stock, changing or
//! completing an order, cancelling one. This is the part every engine shares: what a key
//! is, how a [`Request`] is fingerprinted, how an outcome is kept and replayed, and the
//! rule for a key seen again ([`replay`]). Each store looks the key up, runs the command
//! and keeps its outcome in one transaction, so the three commit together or not at all.
//!
//! One kind of record serves every command: the fingerprint covers the operation and its
//! target (a label such as `adjust pet 7`) as well as the body, so a key sent again for
//! another command, or for the same command on another id, is another request.

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};

use crate::domain::{
    CounterAnswer, CounterWrite, InventoryItem, NewInventoryAdjustment, NewOrder, Order, OrderId, OrderPatch,
    PetId, Timestamp,
};
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

/// The status kept for an adjustment and a changed order: the item or order, `200`.
pub const OK: u16 = 200;

/// The status kept for a deletion: `204`, no body.
pub const NO_CONTENT: u16 = 204;

/// A client's key. The draft makes keys unique per client, and a client here is the API
/// key it authenticates with, known by its identity (`crate::api_key::KeyIdentity`: a named
/// key's id, the operator's key its place among the operator's keys), not by its secret:
/// a key rotated (`keys rotate`, a new `PETSTORE_API_KEY`, the app's local key made anew)
/// is the same client, and a retry it sends with the new secret is the same request. Two
/// programs with different API keys never see each other's orders. What is stored is a
/// hash of the identity.
///
/// Records kept before (schema 11 on SQLite, 7 on PostgreSQL) are scoped by a hash of the
/// secret instead, which only that secret can recognise: a key from a request carries that
/// older scope too ([`IdempotencyKey::recognising`]), and the store moves such a record to
/// the identity's scope the first time the secret's client sends its key again.
#[derive(Clone, PartialEq, Eq)]
pub struct IdempotencyKey {
    scope: [u8; 32],
    key: String,
    /// How long the server keeps it.
    lifetime: TimeDelta,
    /// The scope records of this client were kept under before they were scoped by its
    /// identity, if the request's secret is known.
    secret_scope: Option<[u8; 32]>,
}

impl IdempotencyKey {
    /// `key` (already unquoted) as sent by the client whose identity is `identity` (see
    /// `KeyIdentity::label`).
    pub fn new(identity: &str, key: &str) -> Result<Self, String> {
        let printable = key.bytes().all(|b| b == b' ' || b.is_ascii_graphic());
        if key.is_empty() || key.len() > MAX_KEY_LEN || !printable {
            return Err(format!("must be 1 to {MAX_KEY_LEN} printable ASCII characters"));
        }
        Ok(Self {
            scope: identity_scope(identity),
            key: key.to_owned(),
            lifetime: KEY_LIFETIME,
            secret_scope: None,
        })
    }

    /// The key, also recognising the records its client kept under the scope of its secret
    /// `credential` before keys were scoped by identity.
    pub fn recognising(self, credential: &str) -> Self {
        Self { secret_scope: Some(secret_scope(credential)), ..self }
    }

    /// The older scope of this key's records, if the request's secret was given.
    pub fn secret_scope(&self) -> Option<&[u8; 32]> {
        self.secret_scope.as_ref()
    }

    /// The key kept for `lifetime` instead of [`KEY_LIFETIME`].
    pub fn kept_for(self, lifetime: TimeDelta) -> Self {
        Self { lifetime, ..self }
    }

    /// The key as a till passes it on to its server (the local API in remote mode): one
    /// value per client and key, so two programs on one till never share a key at the
    /// server, and neither the credential nor its hash leaves the till.
    pub fn forwarded(&self) -> String {
        let digest = Sha256::new()
            .chain_update(b"petstore forwarded key\0")
            .chain_update(self.scope)
            .chain_update(self.key.as_bytes())
            .finalize();
        hex::encode(digest)
    }

    /// The expiry of its record made at `now`, in Unix seconds: an integer compares
    /// exactly, whatever the text form of a timestamp.
    pub fn expires_at(&self, now: DateTime<Utc>) -> i64 {
        (now + self.lifetime).timestamp()
    }
}

/// The scope of the records of the client whose identity is `identity`. A label of our own
/// in front, so that it is never a scope of the older kind ([`secret_scope`]).
pub fn identity_scope(identity: &str) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"petstore idempotency identity\0")
        .chain_update(identity.as_bytes())
        .finalize()
        .into()
}

/// The scope records were kept under before identities: a hash of the secret, with a label
/// of our own in front so that it is never the hash the key table keeps.
pub fn secret_scope(credential: &str) -> [u8; 32] {
    Sha256::new()
        .chain_update(b"petstore idempotency scope\0")
        .chain_update(credential.as_bytes())
        .finalize()
        .into()
}

// Not derived: the older scope is a hash of a secret and has no business in a log line.
impl std::fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("IdempotencyKey").field(&self.key).finish()
    }
}

/// What a command sent under a key came to.
#[derive(Debug)]
pub struct Once<T> {
    /// What the command answered (the order, the item, nothing for a deletion), or why
    /// the shop refused it: the first request's outcome, on a replay too.
    pub outcome: Result<T>,
    /// The outcome is an earlier request's, and nothing was done now.
    pub replayed: bool,
}

/// The request as the order it asks for, in canonical JSON, hashed. The parsed order, not
/// the raw bytes: key order, spacing, a default written out (`"quantity": 1`) or a time in
/// another zone do not make a retry a different request, while every field that changes
/// what is placed does. `NewOrder` rejects unknown fields, so nothing escapes the hash.
///
/// The one fingerprint without a label (see [`Request`]): it is what records of orders
/// were kept under before other commands had keys, so a till's retry across an upgrade
/// still matches. The labelled ones hash a label first, and a label never begins with the
/// `{` that an order's JSON does, so no command's fingerprint is an order's.
///
/// `placedAt` is left out: when the till made the order is not what it asks for, and a
/// till's first try (sent at once) and its replay (sent from the outbox, stamped when it
/// was queued) are the same sale. Left out, every fingerprint is the one it was before the
/// field existed.
pub fn fingerprint(new: &NewOrder) -> Result<[u8; 32]> {
    let new = NewOrder { placed_at: None, ..new.clone() };
    let canonical = serde_json::to_vec(&new).map_err(Error::internal)?;
    Ok(Sha256::digest(canonical).into())
}

/// `label` (the operation and its target) and the parsed body in canonical JSON, hashed.
fn labelled(label: &str, body: &impl Serialize) -> Result<[u8; 32]> {
    let canonical = serde_json::to_vec(body).map_err(Error::internal)?;
    Ok(Sha256::new()
        .chain_update(label.as_bytes())
        .chain_update(b"\0")
        .chain_update(canonical)
        .finalize()
        .into())
}

/// A command as its key's record knows it: a fingerprint of what was asked (operation,
/// target and body) and the status its success answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    fingerprint: [u8; 32],
    success: u16,
    /// What its success answers, to read a kept one back as.
    answers: Answers,
    /// The fingerprint the same request was kept under by an earlier version, also taken
    /// as this request (see [`Request::delete_order`]).
    earlier: Option<[u8; 32]>,
}

/// What a counter write's success answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Answers {
    Order,
    Item,
    Nothing,
}

impl Request {
    /// `write` as its key's record knows it. The one rule for a key sent again: it is the
    /// same request when this fingerprint is the first one's (see [`Request::is`]), on
    /// every engine and in a till's outbox alike.
    pub fn of(write: &CounterWrite) -> Result<Self> {
        match write {
            CounterWrite::Place(new) => Self::place_order(new),
            CounterWrite::Update { order, patch } => Self::update_order(*order, patch),
            CounterWrite::Cancel(order) => Self::cancel_order(*order),
            CounterWrite::Delete(order) => Self::delete_order(*order),
            CounterWrite::Adjust { pet, adjustment } => Self::adjust_inventory(*pet, adjustment),
        }
    }

    /// Whether a request kept under `first` (a fingerprint) is this one.
    pub fn is(&self, first: &[u8]) -> bool {
        first == self.fingerprint || self.earlier.is_some_and(|earlier| first == earlier)
    }

    /// `POST /store/orders` with `new`.
    fn place_order(new: &NewOrder) -> Result<Self> {
        Ok(Self { fingerprint: fingerprint(new)?, success: CREATED, answers: Answers::Order, earlier: None })
    }

    /// `POST /store/inventory/{pet}/adjustments` with `adjustment`.
    fn adjust_inventory(pet: PetId, adjustment: &NewInventoryAdjustment) -> Result<Self> {
        Ok(Self {
            fingerprint: labelled(&format!("adjust pet {pet}"), adjustment)?,
            success: OK,
            answers: Answers::Item,
            earlier: None,
        })
    }

    /// `PATCH /store/orders/{id}` with `patch`. The patch's canonical JSON keeps a
    /// `"shipDate": null` apart from no `shipDate`, as the operation does.
    /// `completedAt` is left out, as `placedAt` is from an order's.
    fn update_order(id: OrderId, patch: &OrderPatch) -> Result<Self> {
        let patch = OrderPatch { completed_at: None, ..patch.clone() };
        let fingerprint = labelled(&format!("update order {id}"), &patch)?;
        Ok(Self { fingerprint, success: OK, answers: Answers::Order, earlier: None })
    }

    /// `POST /store/orders/{id}/cancel`: answers the cancelled order. Its own label: the
    /// cancellations kept before it existed were made by `DELETE` (see
    /// [`delete_order`](Self::delete_order)) and answered no order to replay.
    fn cancel_order(id: OrderId) -> Result<Self> {
        let fingerprint = labelled(&format!("cancel order {id}, answering it"), &())?;
        Ok(Self { fingerprint, success: OK, answers: Answers::Order, earlier: None })
    }

    /// `DELETE /store/orders/{id}`. Before `POST .../cancel` existed, `DELETE` cancelled
    /// and its keys were kept as `cancel order {id}` with `204`: a till still sending that
    /// `DELETE` again with the same key is the same request, and gets its first answer
    /// (`204`, the order cancelled and kept) rather than `idempotency_key_reused`.
    fn delete_order(id: OrderId) -> Result<Self> {
        Ok(Self {
            fingerprint: labelled(&format!("delete order {id}"), &())?,
            success: NO_CONTENT,
            answers: Answers::Nothing,
            earlier: Some(labelled(&format!("cancel order {id}"), &())?),
        })
    }

    pub fn fingerprint(&self) -> &[u8; 32] {
        &self.fingerprint
    }

    /// The status kept for the command's success.
    pub fn success(&self) -> u16 {
        self.success
    }
}

pub struct Record {
    pub fingerprint: Vec<u8>,
    pub status: u16,
    pub body: String,
    pub created_at: Timestamp,
}

impl Record {
    /// The first response again: a success (2xx) as what the command answers, anything
    /// else as the shop's refusal.
    pub fn outcome(&self, request: &Request) -> Result<Result<CounterAnswer>> {
        Ok(match request.answers {
            Answers::Order => self.read::<Order>()?.map(CounterAnswer::Order),
            Answers::Item => self.read::<InventoryItem>()?.map(CounterAnswer::Item),
            Answers::Nothing => self.read::<()>()?.map(|()| CounterAnswer::Done),
        })
    }

    fn read<T: DeserializeOwned>(&self) -> Result<Result<T>> {
        let unreadable =
            |e: serde_json::Error| Error::internal(format!("an unreadable idempotency record: {e}"));
        if (200..300).contains(&self.status) {
            serde_json::from_str::<T>(&self.body).map(Ok).map_err(unreadable)
        } else {
            serde_json::from_str::<Error>(&self.body).map(Err).map_err(unreadable)
        }
    }
}

impl IdempotencyKey {
    /// The hash of the client's identity the key is scoped by.
    pub fn scope(&self) -> &[u8; 32] {
        &self.scope
    }

    /// The key as the client sent it.
    pub fn key(&self) -> &str {
        &self.key
    }
}

/// What the outcome of `request` is kept as: the status the API answers and its body (for
/// a deletion, `204` and `null`).
pub fn encode(request: &Request, outcome: &Result<CounterAnswer>) -> Result<(u16, String)> {
    let (status, body) = match outcome {
        Ok(answer) => (request.success, serde_json::to_string(answer)),
        Err(refusal) => (refusal.status(), serde_json::to_string(refusal)),
    };
    Ok((status, body.map_err(Error::internal)?))
}

/// The answer to a key already recorded: the first outcome if `request` is the same
/// request (the same operation on the same target with the same body), else
/// `idempotency_key_reused`.
pub fn replay(key: &IdempotencyKey, first: &Record, request: &Request) -> Result<Once<CounterAnswer>> {
    if !request.is(&first.fingerprint) {
        return Err(Error::new(
            ErrorCode::IdempotencyKeyReused,
            format!(
                "Idempotency-Key {:?} was used at {} for a different request; send that same \
                 request again to get its response, or use a new key for a new request",
                key.key, first.created_at
            ),
        ));
    }
    Ok(Once { outcome: first.outcome(request)?, replayed: true })
}

/// Whether a failed attempt is the shop's refusal (a 4xx), kept as the request's outcome,
/// or a failure of the server (`internal`, `busy`), which rolls everything back so that a
/// retry is processed afresh.
pub fn is_kept(refusal: &Error) -> bool {
    refusal.status() < 500
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
    fn a_request_is_its_operation_its_target_and_its_body() {
        let adjustment = |json: &str| parse_body::<NewInventoryAdjustment>(json.as_bytes()).unwrap();
        let patch = |json: &str| parse_body::<OrderPatch>(json.as_bytes()).unwrap();
        let (pet, id) = (PetId::try_from(7).unwrap(), OrderId::try_from(7).unwrap());
        let other = OrderId::try_from(8).unwrap();
        let delivery = adjustment(r#"{"delta": 4, "reason": "Delivery"}"#);
        let requests = [
            Request::place_order(&order(r#"{"petId": 7}"#)).unwrap(),
            Request::adjust_inventory(pet, &delivery).unwrap(),
            Request::adjust_inventory(PetId::try_from(8).unwrap(), &delivery).unwrap(),
            Request::adjust_inventory(pet, &adjustment(r#"{"delta": 5, "reason": "Delivery"}"#)).unwrap(),
            Request::update_order(id, &patch(r#"{"complete": true}"#)).unwrap(),
            Request::update_order(other, &patch(r#"{"complete": true}"#)).unwrap(),
            Request::update_order(id, &patch(r#"{"shipDate": null}"#)).unwrap(),
            Request::update_order(id, &patch(r#"{"quantity": 2}"#)).unwrap(),
            Request::cancel_order(id).unwrap(),
            Request::cancel_order(other).unwrap(),
            Request::delete_order(id).unwrap(),
            Request::delete_order(other).unwrap(),
        ];
        for (i, one) in requests.iter().enumerate() {
            for two in &requests[i + 1..] {
                assert_ne!(one.fingerprint(), two.fingerprint(), "{one:?} {two:?}");
            }
        }
        // The same command spelled otherwise is the same request.
        let spelled = adjustment(r#"{ "reason":"Delivery","delta":4 }"#);
        assert_eq!(Request::adjust_inventory(pet, &spelled).unwrap(), requests[1]);
        let zoned = patch(r#"{"complete": true, "shipDate": "2026-11-28T11:00:00+01:00"}"#);
        let utc = patch(r#"{"shipDate": "2026-11-28T10:00:00Z", "complete": true}"#);
        assert_eq!(Request::update_order(id, &zoned).unwrap(), Request::update_order(id, &utc).unwrap());
        // An order's fingerprint is what it was before other commands had keys.
        assert_eq!(requests[0].fingerprint(), &fingerprint(&order(r#"{"petId": 7}"#)).unwrap());
        let statuses: Vec<u16> = requests.iter().map(Request::success).collect();
        assert_eq!(statuses, [201, 200, 200, 200, 200, 200, 200, 200, 200, 200, 204, 204]);
    }

    #[test]
    fn an_outcome_is_kept_as_its_status_and_body_and_read_back() {
        let key = IdempotencyKey::new("cred", "k").unwrap();
        let cancel = Request::delete_order(OrderId::try_from(3).unwrap()).unwrap();
        let record = |(status, body): (u16, String)| Record {
            fingerprint: cancel.fingerprint().to_vec(),
            status,
            body,
            created_at: Timestamp::now(),
        };
        let done = record(encode(&cancel, &Ok(CounterAnswer::Done)).unwrap());
        assert_eq!((done.status, done.body.as_str()), (204, "null"));
        let again = replay(&key, &done, &cancel).unwrap();
        assert!(again.replayed);
        assert_eq!(again.outcome, Ok(CounterAnswer::Done));

        let refusal = Error::new(ErrorCode::OrderCompleted, "order 3 is completed");
        let refused = record(encode(&cancel, &Err(refusal.clone())).unwrap());
        assert_eq!(refused.status, 409);
        assert_eq!(replay(&key, &refused, &cancel).unwrap().outcome, Err(refusal));

        let update = Request::update_order(OrderId::try_from(3).unwrap(), &OrderPatch::default()).unwrap();
        let error = replay(&key, &done, &update).unwrap_err();
        assert_eq!(error.code, ErrorCode::IdempotencyKeyReused);
        assert!(error.message.contains("\"k\"") && error.message.contains("new key"), "{}", error.message);
    }

    /// A `DELETE` kept before `POST .../cancel` existed (label `cancel order {id}`, `204`)
    /// is the same request as that `DELETE` sent again, and only it.
    #[test]
    fn a_delete_sent_again_matches_the_cancellation_an_earlier_version_kept() {
        let key = IdempotencyKey::new("cred", "k").unwrap();
        let id = OrderId::try_from(3).unwrap();
        let kept = Record {
            fingerprint: labelled("cancel order 3", &()).unwrap().to_vec(),
            status: 204,
            body: "null".to_owned(),
            created_at: Timestamp::now(),
        };
        let again = replay(&key, &kept, &Request::delete_order(id).unwrap()).unwrap();
        assert_eq!((again.outcome, again.replayed), (Ok(CounterAnswer::Done), true));
        let other = Request::delete_order(OrderId::try_from(4).unwrap()).unwrap();
        assert_eq!(replay(&key, &kept, &other).unwrap_err().code, ErrorCode::IdempotencyKeyReused);
        let cancel = Request::cancel_order(id).unwrap();
        assert_eq!(replay(&key, &kept, &cancel).unwrap_err().code, ErrorCode::IdempotencyKeyReused);
    }

    #[test]
    fn only_the_shops_refusals_are_kept() {
        assert!(is_kept(&Error::new(ErrorCode::InsufficientStock, "")));
        assert!(is_kept(&Error::not_found("order", 1)));
        assert!(!is_kept(&Error::new(ErrorCode::Internal, "")));
        assert!(!is_kept(&Error::new(ErrorCode::Busy, "")));
    }

    #[test]
    fn keys_are_printable_ascii_and_scoped_by_identity() {
        assert!(IdempotencyKey::new("k", "").is_err());
        assert!(IdempotencyKey::new("k", &"a".repeat(256)).is_err());
        assert!(IdempotencyKey::new("k", "caf\u{e9}").is_err());
        assert!(IdempotencyKey::new("k", "tab\there").is_err());
        assert!(IdempotencyKey::new("k", &"a".repeat(255)).is_ok());
        let one = IdempotencyKey::new("key 1", "x").unwrap();
        assert_eq!(one, IdempotencyKey::new("key 1", "x").unwrap());
        assert_ne!(one, IdempotencyKey::new("key 2", "x").unwrap());
        let recognising = one.clone().recognising("secret one");
        assert_eq!(recognising.scope, one.scope, "the secret does not change the scope");
        assert_eq!(recognising.secret_scope(), Some(&secret_scope("secret one")));
        assert_ne!(secret_scope("secret one"), <[u8; 32]>::from(Sha256::digest("secret one")));
        assert_ne!(secret_scope("key 1"), one.scope, "an identity's scope is never a secret's");
        assert!(!format!("{recognising:?}").contains("secret"));
    }
}

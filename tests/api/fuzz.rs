//! Fuzzing the real server with proptest over raw bytes (cargo-fuzz needs a nightly
//! toolchain): garbage request bodies to every operation that takes one, garbage query
//! strings to every list, garbage `{id}` path segments to every operation that has one.
//! Whatever comes in, the server must answer (no panic, no dropped connection), never with
//! a 5xx, and every answer must be what the document says, so every non-2xx is the Error
//! object ([`TestApp::send`] holds each reply against openapi.yaml).
//!
//! One server per property; `PROPTEST_CASES` sets the cases per property (default 2,000;
//! `make soak` can raise it). Each property prints how many requests it sent and what came
//! back (`cargo test --test api fuzz -- --nocapture`).

use std::collections::BTreeMap;
use std::sync::Mutex;

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use reqwest::Method;
use serde_json::{Value, json};

use crate::support::{TestApp, spawn_app};

const DEFAULT_CASES: u32 = 2_000;

/// The operations with a JSON body, and the fields their bodies have.
const WITH_BODY: &[(&str, &str, &[&str])] = &[
    ("POST", "/pets", &["name", "categoryId", "status", "description"]),
    ("PUT", "/pets/{}", &["name", "categoryId", "status", "description"]),
    ("PATCH", "/pets/{}", &["name", "categoryId", "status", "description"]),
    ("POST", "/categories", &["name", "description"]),
    ("PUT", "/categories/{}", &["name", "description"]),
    ("POST", "/store/orders", &["petId", "quantity", "shipDate", "complete"]),
    ("PATCH", "/store/orders/{}", &["quantity", "shipDate", "complete"]),
    ("PUT", "/store/inventory/{}", &["quantity"]),
    ("POST", "/store/inventory/{}/adjustments", &["delta", "reason"]),
];

/// The list operations and the query parameters they know.
const LISTS: &[(&str, &[&str])] = &[
    ("/pets", &["status", "categoryId", "q", "id", "sort", "limit", "offset"]),
    ("/categories", &["limit", "offset"]),
    ("/store/orders", &["petId", "complete", "limit", "offset"]),
    ("/store/inventory", &["status", "belowQuantity", "limit", "offset"]),
    ("/store/inventory/{}/adjustments", &["limit", "offset"]),
];

/// Every operation with an id in its path.
const WITH_ID: &[(&str, &str)] = &[
    ("GET", "/pets/{}"),
    ("PUT", "/pets/{}"),
    ("PATCH", "/pets/{}"),
    ("DELETE", "/pets/{}"),
    ("GET", "/categories/{}"),
    ("PUT", "/categories/{}"),
    ("DELETE", "/categories/{}"),
    ("GET", "/store/orders/{}"),
    ("PATCH", "/store/orders/{}"),
    ("DELETE", "/store/orders/{}"),
    ("GET", "/store/inventory/{}"),
    ("PUT", "/store/inventory/{}"),
    ("GET", "/store/inventory/{}/adjustments"),
    ("POST", "/store/inventory/{}/adjustments"),
];

/// One request of a property.
#[derive(Debug, Clone)]
struct Probe {
    method: &'static str,
    /// Path and query, exactly as sent.
    target: String,
    content_type: Option<&'static str>,
    body: Option<Vec<u8>>,
}

// ---- strings, numbers and JSON -------------------------------------------------------

/// Text that has broken parsers before: empty, blank, NUL, BOM, bidi overrides, combining
/// marks, astral characters, lengths at and past every bound, and arbitrary Unicode.
fn edge_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        2 => "\\PC{0,120}",
        1 => Just(String::new()),
        1 => Just("   ".to_owned()),
        1 => Just("\0".to_owned()),
        1 => Just("Rex\0Max".to_owned()),
        1 => Just("\u{feff}Rex".to_owned()),
        1 => Just("\u{202e}xeR".to_owned()),
        1 => Just("e\u{301}\u{301}\u{301}".to_owned()),
        1 => Just("🐶".repeat(100)),
        1 => Just("🐶".repeat(101)),
        1 => Just("x".repeat(100)),
        1 => Just("x".repeat(101)),
        1 => Just("x".repeat(501)),
        1 => Just(format!(" {} ", "x".repeat(100))),
        1 => Just("\t\n\r\u{85}\u{a0}\u{2028}\u{3000}".to_owned()),
        1 => Just("available".to_owned()),
        1 => Just("2026-11-28T10:00:00Z".to_owned()),
        1 => Just("2026-02-30T25:61:61Z".to_owned()),
        1 => Just("+275760-09-13T00:00:00Z".to_owned()),
        1 => Just("9999-12-31T23:59:59.999999999+14:00".to_owned()),
    ]
}

/// JSON number and string tokens as text, including ones `serde_json::Value` cannot hold
/// (out of range, negative zero, lone surrogates).
fn edge_token() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<i64>().prop_map(|n| n.to_string()),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| format!("{f:e}")),
        2 => prop::sample::select(&[
            "null", "true", "false", "0", "-0", "1", "-1", "1.0", "1.5", "1e3", "-1e3", "1E+2",
            "10000", "10001", "1000000", "1000001", "-1000000", "-1000001", "2147483647",
            "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
            "-9223372036854775809", "18446744073709551615", "18446744073709551616",
            "100000000000000000000000000000000000000000", "1e308", "1e309", "-1e400", "1e-400",
            "0.0000000001", "{}", "[]", "[1]", r#"{"name":"Rex"}"#, r#""""#, r#"" ""#,
            r#""\u0000""#, r#""\ud800""#, r#""\udfff\ud800""#, r#""\ud83d\udc36""#,
            r#""available""#, r#""SOLD""#, r#""2026-11-28T10:00:00Z""#, r#""yesterday""#,
        ][..])
        .prop_map(str::to_owned),
        2 => edge_text().prop_map(|s| Value::String(s).to_string()),
        1 => (1usize..200).prop_map(|depth| format!("{}1{}", "[".repeat(depth), "]".repeat(depth))),
    ]
}

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(Value::from),
        edge_text().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(edge_text(), inner, 0..6)
                .prop_map(|m: BTreeMap<String, Value>| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A JSON object with the operation's own field names (and a few others: `id`, a
/// duplicate, an unknown one), each holding an edge-case token: the shape is right, the
/// values are not.
fn object_with_fields(fields: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    let key = prop_oneof![
        6 => prop::sample::select(fields).prop_map(str::to_owned),
        1 => Just("id".to_owned()),
        1 => edge_text(),
    ];
    prop::collection::vec((key, edge_token()), 0..7).prop_map(|pairs| {
        let members: Vec<String> =
            pairs.iter().map(|(k, v)| format!("{}:{v}", Value::String(k.clone()))).collect();
        format!("{{{}}}", members.join(",")).into_bytes()
    })
}

/// A plausible value for `field`: the right type, mostly within bounds, with edge-case
/// text, so that requests get past the parser into the store.
fn plausible(field: &str) -> BoxedStrategy<Value> {
    match field {
        "name" | "reason" => edge_text().prop_map(Value::from).boxed(),
        "description" => prop_oneof![Just(Value::Null), edge_text().prop_map(Value::from)].boxed(),
        "categoryId" => prop_oneof![Just(Value::Null), (1i64..4).prop_map(Value::from)].boxed(),
        "petId" => (1i64..4).prop_map(Value::from).boxed(),
        "status" => {
            prop::sample::select(&["available", "pending", "sold", "lost"][..]).prop_map(Value::from).boxed()
        }
        "quantity" => {
            prop_oneof![(0i64..4), (9_999i64..10_002), (999_999i64..1_000_002)].prop_map(Value::from).boxed()
        }
        "delta" => prop_oneof![(-3i64..4), (999_999i64..1_000_002)].prop_map(Value::from).boxed(),
        "shipDate" => prop_oneof![Just(Value::Null), edge_text().prop_map(Value::from)].boxed(),
        "complete" => any::<bool>().prop_map(Value::from).boxed(),
        _ => json_value().boxed(),
    }
}

/// An object of plausible values for some of `fields`.
fn plausible_object(fields: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    prop::sample::subsequence(fields, 0..=fields.len())
        .prop_flat_map(|chosen| {
            chosen.into_iter().map(|f| plausible(f).prop_map(move |v| (f, v))).collect::<Vec<_>>()
        })
        .prop_map(|members| {
            let object: serde_json::Map<String, Value> =
                members.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
            Value::Object(object).to_string().into_bytes()
        })
}

/// Nesting far past any sensible depth, closed or not.
fn deep_nesting() -> impl Strategy<Value = Vec<u8>> {
    (1usize..5_000, prop::sample::select(&["[", "{\"name\":", "[{\"a\":"][..]), any::<bool>()).prop_map(
        |(depth, open, closed)| {
            let mut text = open.repeat(depth);
            if closed {
                text.push('1');
                let close: String = open
                    .chars()
                    .rev()
                    .filter_map(|c| match c {
                        '[' => Some(']'),
                        '{' => Some('}'),
                        _ => None,
                    })
                    .collect();
                text.push_str(&close.repeat(depth));
            }
            text.into_bytes()
        },
    )
}

/// What goes in a body.
fn body(fields: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        3 => prop::collection::vec(any::<u8>(), 0..400),
        3 => json_value().prop_map(|v| v.to_string().into_bytes()),
        4 => object_with_fields(fields),
        4 => plausible_object(fields),
        1 => deep_nesting(),
        // Around the 64 KiB limit.
        1 => (60_000usize..70_000).prop_map(|n| format!(r#"{{"name":"{}"}}"#, "x".repeat(n)).into_bytes()),
    ]
}

fn content_type() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        12 => Just(Some("application/json")),
        1 => Just(None),
        1 => Just(Some("application/json; charset=utf-8")),
        1 => Just(Some("APPLICATION/JSON")),
        1 => Just(Some("application/merge-patch+json")),
        1 => Just(Some("text/plain")),
        1 => Just(Some("application/x-www-form-urlencoded")),
        1 => Just(Some("multipart/form-data; boundary=x")),
        1 => Just(Some("application/jsonx")),
    ]
}

// ---- path segments and query strings -------------------------------------------------

/// Bytes as `%XX`, so any byte (non-UTF-8 included) reaches the server as sent.
fn percent_encoded(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("%{b:02X}")).collect()
}

/// Something where an id goes: mostly ids of real rows or near them, otherwise anything.
fn id_segment() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (1i64..12).prop_map(|n| n.to_string()),
        2 => prop::sample::select(&[
            "0", "-1", "01", "+1", "1.0", "1e2", "0x1", " 1", "1 ", "%201", "1%00", "%00",
            "9223372036854775807", "9223372036854775808", "-9223372036854775808",
            "99999999999999999999999999", "NaN", "null", "true", "%2F", "%2F1", "1%2F2",
            "%25", "%FF", "%C3%A9", "%F0%9F%90%B6", "%E2%80%AE1", "abc", "1;2", "1,2", "~",
        ][..])
        .prop_map(str::to_owned),
        2 => prop::collection::vec(any::<u8>(), 1..24).prop_map(|b| percent_encoded(&b)),
        1 => any::<i64>().prop_map(|n| n.to_string()),
        1 => "[a-zA-Z0-9_~!$'()*+,;=:@-]{1,30}",
    ]
    // `.` and `..` (also as `%2E`) are not segments: the URL parser resolves them away.
    .prop_filter("not a dot segment", |s| {
        let lower = s.to_ascii_lowercase().replace("%2e", ".");
        lower != "." && lower != ".."
    })
}

fn query_value() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(&[
            "", "0", "1", "-1", "20", "100", "101", "2147483647", "2147483648", "-2147483649",
            "9223372036854775807", "9223372036854775808", "99999999999999999999999999", "1e3",
            "1.5", "+5", "%205", "5%20", "0x10", "NaN", "true", "false", "TRUE", "1", "yes",
            "available", "pending", "sold", "AVAILABLE", "name", "-name", "id", "-id", "--id",
            "%00", "%FF", "%C3%A9", "%25", "%2", "%zz", "a%26b%3Dc", "%F0%9F%90%B6",
        ][..])
        .prop_map(str::to_owned),
        2 => prop::collection::vec(any::<u8>(), 0..40).prop_map(|b| percent_encoded(&b)),
        2 => any::<i64>().prop_map(|n| n.to_string()),
        1 => "[a-zA-Z0-9 +._~-]{0,120}".prop_map(|s| s.replace(' ', "+")),
        1 => Just("x".repeat(3_000)),
    ]
}

/// `name=value&...` with the list's own names, repeated ones, unknown ones, names that
/// would carry a key, and pairs without `=`.
fn query_string(names: &'static [&'static str]) -> impl Strategy<Value = String> {
    let name = prop_oneof![
        8 => prop::sample::select(names).prop_map(str::to_owned),
        1 => prop::sample::select(&["api_key", "token", "Limit", "limit[]", "", "%00"][..]).prop_map(str::to_owned),
        1 => prop::collection::vec(any::<u8>(), 1..12).prop_map(|b| percent_encoded(&b)),
    ];
    let pair = prop_oneof![
        8 => (name.clone(), query_value()).prop_map(|(n, v)| format!("{n}={v}")),
        1 => name,
        1 => Just(String::new()),
    ];
    prop_oneof![
        8 => prop::collection::vec(pair, 0..10).prop_map(|pairs| pairs.join("&")),
        // A query string of arbitrary characters, including stray `%`, `&`, `=` and `;`.
        1 => "[a-z0-9%&=;+,./?:@!$'()*_~-]{0,200}",
        1 => prop::collection::vec(any::<u8>(), 0..200).prop_map(|b| percent_encoded(&b)),
    ]
}

// ---- the properties ------------------------------------------------------------------

fn cases() -> u32 {
    match std::env::var("PROPTEST_CASES") {
        Ok(n) => n.parse().expect("PROPTEST_CASES is a number"),
        Err(_) => DEFAULT_CASES,
    }
}

/// A fresh server with a category, two pets with stock, an open and a completed order, so
/// that ids 1 and 2 name real rows of every kind.
async fn stocked_app() -> TestApp {
    let app = spawn_app().await;
    let dogs = app.category("Dogs").await;
    app.category("Cats").await;
    let rex = app.pet_with_stock("Rex", 50).await;
    app.pet_with_stock("Tom", 50).await;
    let reply = app.post("/store/orders", json!({ "petId": rex, "quantity": 1 })).await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let reply = app.post("/store/orders", json!({ "petId": rex, "quantity": 1, "complete": true })).await;
    assert_eq!(reply.status, 201, "{:?}", reply.body);
    let reply = app.patch(&format!("/pets/{rex}"), json!({ "categoryId": dogs })).await;
    assert_eq!(reply.status, 200, "{:?}", reply.body);
    app
}

/// Runs `strategy` against one server; every probe must get a documented, non-5xx answer.
/// Returns the number of requests sent and the statuses seen.
fn fuzz(name: &str, strategy: impl Strategy<Value = Probe>) -> BTreeMap<u16, u64> {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let app = runtime.block_on(stocked_app());
    let statuses = Mutex::new(BTreeMap::<u16, u64>::new());
    let config = Config { cases: cases(), failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new(config);
    let result = runner.run(&strategy, |probe| {
        let status = runtime.block_on(send(&app, &probe))?;
        *statuses.lock().unwrap().entry(status).or_default() += 1;
        Ok(())
    });
    let statuses = statuses.into_inner().unwrap();
    let sent: u64 = statuses.values().sum();
    eprintln!("fuzz {name}: {sent} requests, 0 panics, 0 5xx; statuses {statuses:?}");
    if let Err(e) = result {
        panic!("fuzz {name}: {e}");
    }
    runtime.block_on(async move {
        let mut app = app;
        app.stop().await;
    });
    statuses
}

/// Sends one probe through [`TestApp::send`], which panics when the reply breaks the
/// document; a 5xx or a dropped connection fails the case too.
async fn send(app: &TestApp, probe: &Probe) -> Result<u16, TestCaseError> {
    let method = Method::from_bytes(probe.method.as_bytes()).unwrap();
    let mut request = app.request(method, &probe.target);
    if let Some(content_type) = probe.content_type {
        request = request.header("content-type", content_type);
    }
    if let Some(body) = &probe.body {
        request = request.body(body.clone());
    }
    let reply = app.send(request).await;
    let status = reply.status.as_u16();
    prop_assert!(status < 500, "{} {} answered {status}: {:?}", probe.method, probe.target, reply.body);
    if !reply.status.is_success() {
        prop_assert_eq!(&reply.body["status"], &json!(status), "{:?}", reply.body);
        prop_assert!(!reply.code().is_empty(), "{:?}", reply.body);
    }
    Ok(status)
}

fn assert_ran(statuses: &BTreeMap<u16, u64>) {
    assert_eq!(statuses.values().sum::<u64>(), u64::from(cases()), "every case sent one request");
}

#[test]
fn garbage_bodies_get_an_error_object_and_never_a_5xx() {
    let probe = prop::sample::select(WITH_BODY).prop_flat_map(|(method, path, fields)| {
        (id_segment(), content_type(), body(fields)).prop_map(move |(id, content_type, body)| Probe {
            method,
            target: path.replace("{}", &id),
            content_type,
            body: Some(body),
        })
    });
    let statuses = fuzz("bodies", probe);
    assert_ran(&statuses);
    // The fuzzer must get past the parser, not only bounce off it.
    assert!(statuses.keys().any(|s| (200..300).contains(s)), "{statuses:?}");
    assert!(statuses.contains_key(&400) && statuses.contains_key(&413), "{statuses:?}");
}

#[test]
fn garbage_query_strings_get_an_error_object_and_never_a_5xx() {
    let probe = prop::sample::select(LISTS).prop_flat_map(|(path, names)| {
        (id_segment(), query_string(names)).prop_map(move |(id, query)| Probe {
            method: "GET",
            target: format!("{}?{query}", path.replace("{}", &id)),
            content_type: None,
            body: None,
        })
    });
    let statuses = fuzz("query strings", probe);
    assert_ran(&statuses);
    assert!(statuses.contains_key(&200) && statuses.contains_key(&400), "{statuses:?}");
}

#[test]
fn garbage_path_ids_get_an_error_object_and_never_a_5xx() {
    let probe = (prop::sample::select(WITH_ID), id_segment(), object_with_fields(&["name", "quantity"]))
        .prop_map(|((method, path), id, body)| {
            let has_body = matches!(method, "PUT" | "PATCH" | "POST");
            Probe {
                method,
                target: path.replace("{}", &id),
                content_type: has_body.then_some("application/json"),
                body: has_body.then_some(body),
            }
        });
    let statuses = fuzz("path ids", probe);
    assert_ran(&statuses);
    assert!(statuses.contains_key(&400) && statuses.contains_key(&404), "{statuses:?}");
}

/// A large body to an operation that refuses the request before reading it (a bad id, a
/// wrong content type, a wrong key, its very size) must still get that answer, and the
/// next request on the same keep-alive connection its own: a server that answers and hangs
/// up with the body unread resets the connection under the client, which then sees a
/// broken pipe or a reset instead of an answer.
// Two threads, so that the server answers while the client is still sending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn early_refusals_of_large_bodies_are_answered_not_reset() {
    let app = spawn_app().await;
    // Under the body limit (64 KiB), so that the refusal is the operation's own: a body
    // declared larger is refused as too large before anything else.
    let big = format!(r#"{{"name":"{}"}}"#, "x".repeat(60 * 1024));
    let too_big = format!(r#"{{"name":"{}"}}"#, "x".repeat(70 * 1024));
    let json =
        |method: Method, path: &str| app.request(method, path).header("content-type", "application/json");
    for _ in 0..100 {
        assert_eq!(
            app.send(json(Method::PUT, "/pets/abc").body(big.clone())).await.code(),
            "invalid_parameter"
        );
        assert_eq!(app.get("/pets").await.status, 200);
        let not_json = app.request(Method::POST, "/pets").header("content-type", "text/plain");
        assert_eq!(app.send(not_json.body(big.clone())).await.code(), "unsupported_media_type");
        assert_eq!(app.get("/categories").await.status, 200);
        assert_eq!(
            app.send(json(Method::POST, "/categories").body(too_big.clone())).await.code(),
            "payload_too_large"
        );
        assert_eq!(app.get("/store/orders").await.status, 200);
        let wrong_key = app
            .anonymous(Method::POST, "/pets")
            .bearer_auth("not-the-key-0123456789abcdef")
            .header("content-type", "application/json");
        // After ten wrong keys the server slows this client down: also an answer.
        let refused = app.send(wrong_key.body(big.clone())).await;
        assert!(["unauthorized", "rate_limited"].contains(&refused.code()), "{refused:?}");
        assert_eq!(app.get("/store/inventory").await.status, 200);
    }
}

//! Updates against a manifest and installers served on loopback, signed with a key made
//! here (minisign, as `tauri signer` does): a newer version is offered with what is new,
//! its installer's signature is checked, a tampered one is refused; the version is signed
//! too (an older signed installer announced as newer is refused), nothing below the floor
//! or over plain http is offered; and the address rules.

use std::io::Cursor;
use std::net::SocketAddr;

use axum::Router;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use crate::helpers::{TestApp, app};

const INSTALLER: &[u8] = b"the Petstore 9.9.9 installer";

/// A release key: (its public half as the updater takes it, a function that signs, as
/// `tauri signer sign` does: base64 of minisign's signature file).
fn release_key() -> (String, impl Fn(&[u8]) -> String + Clone) {
    let minisign::KeyPair { pk, sk } = minisign::KeyPair::generate_unencrypted_keypair().unwrap();
    let public = STANDARD.encode(pk.to_box().unwrap().to_string());
    let (pk, sk) = (std::sync::Arc::new(pk), std::sync::Arc::new(sk));
    let sign = move |data: &[u8]| {
        let trusted = "timestamp:1764000000\tfile:Petstore_9.9.9_amd64.AppImage";
        let signature = minisign::sign(Some(&pk), &sk, Cursor::new(data), Some(trusted), None).unwrap();
        STANDARD.encode(signature.to_string())
    };
    (public, sign)
}

/// Serves `latest.json` announcing 9.9.9 with `signature` and the version signed by
/// `sign`, the installer, and a tampered one, on a loopback port; with `replay.json`,
/// `unsigned.json`, `plain.json` and `old.json` for the refusals.
fn release_server(signature: String, sign: impl Fn(&[u8]) -> String) -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    listener.set_nonblocking(true).unwrap();
    let statement = |version: &str, signature: &str| {
        sign(petstore_desktop::updates::version_statement(version, signature).as_bytes())
    };
    let manifest = |version: &str, installer: &str, version_signature: Option<String>| {
        let mut platform =
            json!({ "signature": signature, "url": installer.replace("{address}", &address.to_string()) });
        if let Some(signed) = version_signature {
            platform["version_signature"] = json!(signed);
        }
        json!({
            "version": version,
            "notes": "Receipts show the shop's address.",
            "pub_date": "2026-11-24T10:00:00Z",
            "platforms": { "linux-x86_64": platform, "linux-x86_64-appimage": platform,
                           "linux-x86_64-deb": platform, "linux-x86_64-rpm": platform },
        })
        .to_string()
    };
    let (good_url, bad_url) = ("http://{address}/petstore.AppImage", "http://{address}/tampered.AppImage");
    let good = manifest("9.9.9", good_url, Some(statement("9.9.9", &signature)));
    let bad = manifest("9.9.9", bad_url, Some(statement("9.9.9", &signature)));
    // This installer and its signature, announced as a version it was not released as,
    // with the version signature of its own release.
    let replay = manifest("10.0.0", good_url, Some(statement("9.9.9", &signature)));
    let unsigned = manifest("9.9.9", good_url, None);
    let plain = manifest(
        "9.9.9",
        "http://updates.example.com/petstore.AppImage",
        Some(statement("9.9.9", &signature)),
    );
    let old = manifest("0.0.1", good_url, Some(statement("0.0.1", &signature)));
    let routes = Router::new()
        .route("/latest.json", get(move || async move { good }))
        .route("/tampered.json", get(move || async move { bad }))
        .route("/replay.json", get(move || async move { replay }))
        .route("/unsigned.json", get(move || async move { unsigned }))
        .route("/plain.json", get(move || async move { plain }))
        .route("/old.json", get(move || async move { old }))
        .route("/petstore.AppImage", get(|| async { INSTALLER }))
        .route("/tampered.AppImage", get(|| async { b"the Petstore 9.9.9 installer, changed".as_slice() }));
    std::thread::spawn(move || {
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, routes).await.unwrap();
        })
    });
    address
}

fn check(
    app: &TestApp,
    url: String,
    pubkey: &str,
) -> Result<Option<(petstore_desktop::updates::UpdateOffer, Vec<u8>)>, String> {
    check_above(app, url, pubkey, None)
}

fn check_above(
    app: &TestApp,
    url: String,
    pubkey: &str,
    floor: Option<&str>,
) -> Result<Option<(petstore_desktop::updates::UpdateOffer, Vec<u8>)>, String> {
    let handle = app.app.handle().clone();
    tauri::async_runtime::block_on(async move {
        let url = petstore_desktop::updates::parse_address(&url).map_err(|e| e.message)?;
        let Some((offer, update)) =
            petstore_desktop::updates::check(&handle, url, pubkey, floor).await.map_err(|e| e.message)?
        else {
            return Ok(None);
        };
        let bytes = petstore_desktop::updates::download(&update).await.map_err(|e| e.message)?;
        Ok(Some((offer, bytes)))
    })
}

#[test]
fn a_newer_version_is_offered_with_what_is_new_and_only_its_signed_installer_is_taken() {
    let app = app();
    let (pubkey, sign) = release_key();
    let server = release_server(sign(INSTALLER), sign.clone());

    let (offer, installer) = check(&app, format!("http://{server}/latest.json"), &pubkey).unwrap().unwrap();
    assert_eq!(offer.version, "9.9.9");
    assert_eq!(offer.notes.as_deref(), Some("Receipts show the shop's address."));
    assert_eq!(offer.published.as_deref(), Some("2026-11-24T10:00:00Z"));
    assert_eq!(installer, INSTALLER, "the installer, its signature checked");

    let refused = check(&app, format!("http://{server}/tampered.json"), &pubkey).unwrap_err();
    assert!(refused.contains("was refused, nothing was installed"), "{refused}");

    let (other_key, _) = release_key();
    let refused = check(&app, format!("http://{server}/latest.json"), &other_key).unwrap_err();
    assert!(
        refused.contains("does not match"),
        "signed by another key, refused before it is offered: {refused}"
    );

    assert!(
        check(&app, format!("http://{server}/old.json"), &pubkey).unwrap().is_none(),
        "an older one is no update"
    );
}

#[test]
fn the_version_is_signed_with_its_installer_and_nothing_below_the_floor_or_over_http_is_offered() {
    let app = app();
    let (pubkey, sign) = release_key();
    let server = release_server(sign(INSTALLER), sign.clone());

    let replay = check(&app, format!("http://{server}/replay.json"), &pubkey).unwrap_err();
    assert!(
        replay.contains("offers Petstore 10.0.0") && replay.contains("version signature does not match"),
        "{replay}"
    );
    let unsigned = check(&app, format!("http://{server}/unsigned.json"), &pubkey).unwrap_err();
    assert!(unsigned.contains("its version is not signed"), "{unsigned}");
    let (other_key, _) = release_key();
    let refused = check(&app, format!("http://{server}/latest.json"), &other_key).unwrap_err();
    assert!(refused.contains("version signature does not match"), "signed by another key: {refused}");
    let plain = check(&app, format!("http://{server}/plain.json"), &pubkey).unwrap_err();
    assert!(plain.contains("not at an https:// address"), "{plain}");

    let latest = format!("http://{server}/latest.json");
    assert!(check_above(&app, latest.clone(), &pubkey, Some("10.0.0")).unwrap().is_none(), "below the floor");
    let (offer, _) = check_above(&app, latest, &pubkey, Some("9.9.9")).unwrap().unwrap();
    assert_eq!(offer.version, "9.9.9", "at the floor: the version seen before is still offered");
}

#[test]
fn updates_are_off_until_an_address_is_given_and_it_must_be_https_or_this_computer() {
    let app = app();
    let settings = app.ok("get_update_settings", json!({}));
    assert_eq!(settings["address"], Value::Null);
    let off = app.fails("check_for_update", json!({}));
    assert!(off["message"].as_str().unwrap().contains("updates are off"), "{off}");

    let plain =
        app.fails("save_update_address", json!({ "address": "http://updates.example.com/latest.json" }));
    assert!(plain["message"].as_str().unwrap().contains("must come over https://"), "{plain}");
    let junk = app.fails("save_update_address", json!({ "address": "updates" }));
    assert!(junk["message"].as_str().unwrap().contains("is not a web address"), "{junk}");
    let saved =
        app.ok("save_update_address", json!({ "address": " https://updates.example.com/latest.json " }));
    assert_eq!(saved["address"], "https://updates.example.com/latest.json");
    let local = app.ok("save_update_address", json!({ "address": "http://127.0.0.1:9/latest.json" }));
    assert_eq!(local["address"], "http://127.0.0.1:9/latest.json");
    assert_eq!(app.ok("get_update_settings", json!({}))["address"], "http://127.0.0.1:9/latest.json", "kept");
    let cleared = app.ok("save_update_address", json!({ "address": "" }));
    assert_eq!(cleared["address"], Value::Null, "empty turns updates off");
}

#[test]
fn a_build_without_the_release_key_says_it_cannot_install_updates() {
    if !petstore_desktop::updates::RELEASE_PUBKEY.is_empty() {
        return; // a release build: it can
    }
    let app = app();
    assert_eq!(app.ok("get_update_settings", json!({}))["canInstall"], false);
    app.ok("save_update_address", json!({ "address": "https://updates.example.com/latest.json" }));
    let refused = app.fails("check_for_update", json!({}));
    assert!(refused["message"].as_str().unwrap().contains("no update key"), "{refused}");
    let nothing = app.fails("install_update", json!({}));
    assert!(nothing["message"].as_str().unwrap().contains("check for updates first"), "{nothing}");
}

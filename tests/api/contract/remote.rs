//! The failures only a remote has.

use std::time::Duration;

use petstore::client::Client;
use petstore::domain::*;
use petstore::{Error, ErrorCode, Petstore};

use super::support::*;
use ErrorCode::*;

#[tokio::test]
async fn a_client_of_a_closed_port_reports_unreachable_quickly() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let base = format!("http://127.0.0.1:{port}");
    let client = Client::new(&base, crate::helpers::KEY).unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), client.get_pet(pid(1))).await;
    let e = answer.expect("no answer within 5 s").unwrap_err();
    assert_eq!(e.code, Unreachable, "{e:?}");
    assert!(e.message.starts_with(&format!("cannot reach {base}: connection refused")), "{}", e.message);
}

#[tokio::test]
async fn a_client_with_a_wrong_key_is_unauthorized() {
    let app = crate::helpers::spawn_app().await;
    let client = Client::new(&app.base_url, "wrong-key-0123456789abcdefghij").unwrap();
    let e = client.list_pets(PetFilter::default(), all()).await.unwrap_err();
    assert_eq!(e, Error::new(Unauthorized, "the API key is not valid"));
    assert_eq!(client.create_pet(pet("Rex")).await.unwrap_err().code, Unauthorized);
    assert!(!format!("{client:?}").contains("wrong-key"));
}

#[tokio::test]
async fn a_trailing_slash_on_the_base_url_changes_nothing() {
    let app = crate::helpers::spawn_app().await;
    let client = Client::new(&format!("{}/", app.base_url), crate::helpers::KEY).unwrap();
    let rex = client.create_pet(pet("Rex")).await.unwrap();
    assert_eq!(client.get_pet(rex.id).await.unwrap(), rex);
    assert_eq!(client.base_url(), app.base_url);
}

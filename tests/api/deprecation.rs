use chrono::{TimeZone, Utc};
use petstore::clock::Clock;
use reqwest::Method;

use crate::support::spawn_app_with;

fn assert_deprecation_headers(reply: &crate::support::Reply, pet: &str) {
    assert_eq!(reply.header("deprecation"), "@1793491200");
    assert_eq!(reply.header("sunset"), "Wed, 30 Jun 2027 23:59:59 GMT");
    assert_eq!(reply.header("link"), format!("</pets?id={pet}>; rel=\"successor-version\""));
}

#[tokio::test]
async fn the_deprecated_operation_works_and_says_so_on_every_response() {
    let app = spawn_app_with(Clock::fixed(Utc.with_ymd_and_hms(2027, 6, 30, 23, 59, 59).unwrap())).await;
    let pet = app.pet_with_stock("Rex", 0).await;

    let found = app.get(&format!("/pets/{pet}")).await;
    assert_eq!(found.status, 200);
    assert_eq!(found.body["name"], "Rex");
    assert_deprecation_headers(&found, &pet.to_string());

    let missing = app.get("/pets/999").await;
    assert_eq!(missing.status, 404);
    assert_deprecation_headers(&missing, "999");

    let unauthorized = app.send(app.anonymous(Method::GET, &format!("/pets/{pet}"))).await;
    assert_eq!(unauthorized.status, 401);
    assert_deprecation_headers(&unauthorized, &pet.to_string());

    let other_method = app.send(app.request(Method::DELETE, "/pets/999")).await;
    assert!(other_method.headers.get("deprecation").is_none(), "only GET is deprecated");
}

#[tokio::test]
async fn after_the_sunset_the_operation_is_gone() {
    let app = spawn_app_with(Clock::fixed(Utc.with_ymd_and_hms(2027, 7, 1, 0, 0, 0).unwrap())).await;
    let pet = app.pet_with_stock("Rex", 0).await;
    let reply = app.get(&format!("/pets/{pet}")).await;
    assert_eq!((reply.status.as_u16(), reply.code()), (410, "gone"));
    assert_deprecation_headers(&reply, &pet.to_string());
    assert!(reply.body["message"].as_str().unwrap().contains(&format!("/pets?id={pet}")));

    let successor = app.get(&format!("/pets?id={pet}")).await;
    assert_eq!(successor.body[0]["name"], "Rex", "the successor keeps working");
}

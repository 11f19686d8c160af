//! The client the suites send with ([`crate::support::test_client`]) gives up on a server
//! that stops answering: the test that asked fails, instead of the whole suite hanging
//! until someone kills it.

use std::time::{Duration, Instant};

use crate::support::test_client_with;

#[tokio::test]
async fn the_tests_client_gives_up_on_a_server_that_accepts_and_never_answers() {
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let holding = tokio::spawn(async move {
        let mut held = Vec::new();
        loop {
            held.push(silent.accept().await.unwrap());
        }
    });
    let client = test_client_with(Duration::from_secs(1), Duration::from_millis(300));
    let asked = Instant::now();
    let failed =
        tokio::time::timeout(Duration::from_secs(10), client.get(format!("http://{addr}/health")).send())
            .await
            .expect("the client waited 10 s on a silent server")
            .unwrap_err();
    assert!(failed.is_timeout(), "{failed}");
    assert!(asked.elapsed() < Duration::from_secs(5), "it gave up only after {:?}", asked.elapsed());
    holding.abort();
}

//! The ceiling of the HTTP stack on this machine, for `make bench`: the smallest axum server
//! that answers like `GET /pets/{petId}` does. Same tokio multi-thread runtime as
//! `petstore-server`, same allocator, same axum and hyper, no middleware, no database: one
//! route that serializes a fixed `Pet` to JSON on every request. Whatever the real server
//! reaches is measured against what this one reaches with the same load generator and
//! settings.
//!
//! Usage: `ceiling --listen 127.0.0.1:PORT`

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::{TimeZone, Utc};
use petstore::domain::{CategoryId, Pet, PetId, PetStatus, Timestamp};

/// The allocator `petstore-server` uses (src/bin/petstore-server/main.rs): with the system
/// allocator here the ratio of the two would compare allocators as much as servers (glibc's
/// malloc took an eighth of the server's time). `run.py` checks that both binaries link it.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<(), String> {
    let listen = listen_arg()?;
    // The runtime petstore-server builds (`Runtime::new`: multi-thread, one worker per core).
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(serve(listen))
}

fn listen_arg() -> Result<SocketAddr, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag, addr] if flag == "--listen" => addr.parse().map_err(|e| format!("--listen {addr}: {e}")),
        _ => Err("usage: ceiling --listen ADDR".into()),
    }
}

async fn serve(listen: SocketAddr) -> Result<(), String> {
    // The same path shape as the real route, so the load generator sends identical requests.
    let app = Router::new().route("/pets/{petId}", get(pet)).with_state(Arc::new(fixed_pet()));
    let listener =
        tokio::net::TcpListener::bind(listen).await.map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("ceiling on http://{addr}");
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}

/// A `Pet` as the seeded database holds them, serialized afresh for every request.
async fn pet(State(pet): State<Arc<Pet>>) -> Json<Pet> {
    Json(Pet::clone(&pet))
}

fn fixed_pet() -> Pet {
    let at = Timestamp::from(Utc.with_ymd_and_hms(2026, 11, 22, 10, 15, 0).unwrap());
    Pet {
        id: PetId::try_from(42).expect("a positive id"),
        name: "Bella the Beagle".into(),
        category_id: Some(CategoryId::try_from(1).expect("a positive id")),
        status: PetStatus::Available,
        description: None,
        price: None,
        sku: None,
        created_at: at,
        updated_at: at,
    }
}

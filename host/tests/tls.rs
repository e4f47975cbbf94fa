//! A host dialling a relay over `wss://` (and uploading artifacts over `https://`), through a
//! TLS proxy in front of the relay with a certificate of a private CA the host is told to
//! trust; and refusing a relay whose certificate it cannot trust.

use std::sync::Arc;

use serde_json::json;
use tether_host::browser::chromium::{Chromium, Debugging, LaunchOptions};
use tether_host::modes::worker::{BrowserAt, Worker};
use tether_tests::extension::JOIN_WITHIN;
use tether_tests::fixtures;
use tether_tests::relay::{TestRelay, HOST};
use tokio::net::TcpListener;
use tokio_rustls::rustls;

/// A TLS-terminating proxy for `localhost` in front of `upstream`; returns its port and the
/// CA certificate (PEM) that signed it.
async fn tls_proxy(upstream: std::net::SocketAddr) -> (u16, String) {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let pem = cert.pem();
    let config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(
                vec![cert.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(key.serialize_der().into()),
            )
            .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let Ok(mut relay) = tokio::net::TcpStream::connect(upstream).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut relay).await;
            });
        }
    });
    (port, pem)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_serves_a_relay_over_wss_and_uploads_over_https() {
    let dirs = tempfile::tempdir().unwrap();
    let relay = TestRelay::start(&dirs.path().join("relay"), None);
    let fixtures = fixtures::Server::start().await;
    let (port, ca) = tls_proxy(relay.addr).await;
    let ca_file = dirs.path().join("ca.pem");
    std::fs::write(&ca_file, ca).unwrap();
    // A port: two workers share this browser.
    let chromium = Chromium::launch(&LaunchOptions {
        debugging: Debugging::Port,
        ..LaunchOptions::default()
    })
    .await
    .expect("launch Chromium");

    // Without the CA, the worker cannot trust the relay and never joins.
    let untrusting = Worker {
        browser: BrowserAt::Ws(chromium.ws_url().unwrap().to_owned()),
        relay: format!("wss://localhost:{port}"),
        token: HOST.into(),
        client_id: "untrusting".into(),
        forbid_urls: Vec::new(),
        ca_file: None,
        allow_evaluate: false,
        allow_file_urls: false,
        no_page_log: false,
        secrets: Default::default(),
        data_dir: None,
    };
    let untrusting = tokio::spawn(untrusting.serve());

    let worker = Worker {
        browser: BrowserAt::Ws(chromium.ws_url().unwrap().to_owned()),
        relay: format!("wss://localhost:{port}"),
        token: HOST.into(),
        client_id: "over-tls".into(),
        forbid_urls: Vec::new(),
        ca_file: Some(ca_file),
        allow_evaluate: false,
        allow_file_urls: false,
        no_page_log: false,
        secrets: Default::default(),
        data_dir: None,
    };
    let serving = tokio::spawn(worker.serve());
    relay.wait_online("over-tls", JOIN_WITHIN).await;
    let start = json!({ "sessionId": "tls", "clientId": "over-tls", "actionName": "session_start",
                        "params": { "url": fixtures.url("/fixtures/form.html") } });
    let started = relay.post(start).await;
    assert_eq!(started["status"], "success", "{started}");
    let html = relay.post(json!({ "sessionId": "tls", "actionName": "browser_get_html", "params": { "tabId": started["result"]["tabId"] } }),
    )
    .await;
    assert_eq!(
        html["status"], "success",
        "the artifact went up over https: {html}"
    );
    assert!(html["result"]["url"].as_str().unwrap().starts_with("http"));

    let list = relay.get("/api/extension/extension-list").await;
    let clients: Vec<&str> = list["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["clientId"].as_str().unwrap())
        .collect();
    assert!(
        !clients.contains(&"untrusting"),
        "a relay it cannot trust is never joined: {clients:?}"
    );
    serving.abort();
    untrusting.abort();
    chromium.close().await;
}

//! A stranger on the port (docs/protocol.md §15, "credentials before work", "bounded before it is
//! known"): what someone without a token can make the real `tether-relay` binary hold. Held
//! uploads cost their headers only, sockets that never join are closed and read little, and
//! with every connection slot taken `/healthz` still answers within a second.

use std::time::Duration;

use futures::StreamExt;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

mod common;

use common::process::RelayProcess;

/// The bound on what the floods may grow the relay to.
const RSS_LIMIT_KIB: u64 = 100 * 1024;

/// Writes up to `bytes` of zeros, stopping when the relay stops reading (or closes).
async fn push(tcp: &mut TcpStream, bytes: usize) -> usize {
    let chunk = vec![0u8; 1 << 20];
    let mut sent = 0;
    while sent < bytes {
        match tokio::time::timeout(Duration::from_secs(2), tcp.write_all(&chunk)).await {
            Ok(Ok(())) => sent += chunk.len(),
            _ => break,
        }
    }
    sent
}

/// The relay's answer's status line.
async fn status_line(tcp: &mut TcpStream) -> String {
    let mut head = vec![0u8; 512];
    let n = tokio::time::timeout(Duration::from_secs(5), tcp.read(&mut head))
        .await
        .expect("an answer to the headers")
        .unwrap();
    String::from_utf8_lossy(&head[..n])
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn uploads_without_a_token_cost_the_relay_their_headers_only() {
    let relay = RelayProcess::start(&[]).await;
    let mut held = Vec::new();
    for _ in 0..12 {
        let mut tcp = TcpStream::connect(&relay.addr).await.unwrap();
        let head = format!(
            "PUT /artifacts HTTP/1.1\r\nhost: {}\r\ncontent-type: image/png\r\ncontent-length: {}\r\n\r\n",
            relay.addr,
            60 << 20
        );
        tcp.write_all(head.as_bytes()).await.unwrap();
        assert!(
            status_line(&mut tcp).await.contains(" 401 "),
            "refused at the headers"
        );
        held.push(tcp);
    }
    let pushed = futures::future::join_all(held.iter_mut().map(|tcp| push(tcp, 60 << 20))).await;
    let rss = relay.rss_kib();
    assert!(rss < RSS_LIMIT_KIB, "{rss} KiB after {pushed:?} bytes pushed");
}

#[tokio::test]
async fn sockets_that_never_join_are_closed_and_read_little() {
    let relay = RelayProcess::start(&[]).await;
    let url = format!("ws://{}/ws", relay.addr);
    // 40 sockets each start a 16 MiB frame before joining.
    let mut flooding = Vec::new();
    for _ in 0..40 {
        let (ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
        let tokio_tungstenite::MaybeTlsStream::Plain(tcp) = ws.into_inner() else {
            unreachable!("ws:// is plain TCP")
        };
        flooding.push(tcp);
    }
    let frames = flooding.iter_mut().map(|tcp| async move {
        // A masked text frame from a client, announcing 16 MiB.
        let mut header = vec![0x81, 0x80 | 127];
        header.extend_from_slice(&(16u64 << 20).to_be_bytes());
        header.extend_from_slice(&[1, 2, 3, 4]);
        tcp.write_all(&header).await.unwrap();
        push(tcp, 16 << 20).await
    });
    let pushed = futures::future::join_all(frames).await;
    let rss = relay.rss_kib();
    assert!(rss < RSS_LIMIT_KIB, "{rss} KiB after {pushed:?} bytes pushed");
    assert!(
        pushed.iter().all(|&bytes| bytes < 16 << 20),
        "the relay stopped reading each flood: {pushed:?}"
    );

    // One that says nothing is told why and closed once the join timeout has passed.
    let (mut idle, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let said = tokio::time::timeout(Duration::from_secs(20), idle.next())
        .await
        .expect("closed within the join timeout");
    let Some(Ok(Message::Text(error))) = said else {
        panic!("an error before the close, not {said:?}")
    };
    assert!(error.contains("no relay.join within 10 s"), "{error}");
}

#[tokio::test]
async fn healthz_answers_while_strangers_hold_every_connection() {
    // As under the common `ulimit -n 1024`: more idle sockets than the process has files.
    let relay = RelayProcess::start_with_open_files(1024, &[]).await;
    // This test's own process holds all of them.
    tether_relay::parts::open_files::raise();
    let mut idle = Vec::new();
    for i in 0..1100 {
        let mut tcp = TcpStream::connect(&relay.addr).await.unwrap();
        // Some trickle a request they never finish; the others say nothing.
        if i % 4 == 0 {
            tcp.write_all(b"GET /api/actions HTTP/1.1\r\nhost: x\r\n")
                .await
                .unwrap();
        }
        idle.push(tcp);
    }
    let answered = tokio::time::timeout(Duration::from_secs(1), async {
        tether_tests::client::own_http()
            .get(format!("http://{}/healthz", relay.addr))
            .send()
            .await
    })
    .await
    .expect("/healthz within 1 s")
    .expect("an answer");
    assert_eq!(answered.status().as_u16(), 200);

    // The ones that never finished their headers are closed within the header timeout.
    let mut first = idle.swap_remove(0);
    let mut rest = [0u8; 256];
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match first.read(&mut rest).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "a half-sent request held its connection");
}

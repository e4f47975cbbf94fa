//! The artifact routes over a real socket: hosts upload, orchestrators (or holders of a
//! presigned URL) download, and everything else is refused with the right status.

mod common;

use common::{start_relay, HOST, ORCHESTRATOR};
use serde_json::Value;
use tether_relay::stores::artifacts::Limits;

async fn relay(limits: Limits) -> String {
    format!("http://{}", start_relay(limits).await)
}

async fn upload(base: &str, token: Option<&str>, body: Vec<u8>) -> (u16, Value) {
    let mut request = tether_tests::client::own_http()
        .put(format!("{base}/artifacts"))
        .header("content-type", "image/png")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn download(url: &str, token: Option<&str>) -> (u16, Option<String>, Vec<u8>) {
    let mut request = tether_tests::client::own_http().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_owned());
    (status, content_type, response.bytes().await.unwrap().to_vec())
}

#[tokio::test]
async fn a_host_uploads_and_the_presigned_url_serves_it_as_is() {
    let base = relay(Limits::default()).await;
    let png = vec![137, 80, 78, 71, 1, 2, 3];
    let (status, stored) = upload(&base, Some(HOST), png.clone()).await;
    assert_eq!(status, 200, "{stored}");
    let id = stored["artifactId"].as_str().unwrap();
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{id}"
    );
    let url = stored["url"].as_str().unwrap();
    assert!(
        url.starts_with(&format!("{base}/artifacts/{id}?exp=")) && url.contains("&sig="),
        "{url}"
    );

    // The presigned URL needs no token; the bare one needs the orchestrator's.
    assert_eq!(
        download(url, None).await,
        (200, Some("image/png".into()), png.clone())
    );
    let bare = format!("{base}/artifacts/{id}");
    assert_eq!(download(&bare, Some(ORCHESTRATOR)).await.2, png);
    assert_eq!(download(&bare, None).await.0, 401);
    assert_eq!(
        download(&bare, Some(HOST)).await.2,
        png,
        "hosts fetch files to upload"
    );
    assert_eq!(download(&bare, Some("not-a-token")).await.0, 401);
}

#[tokio::test]
async fn bad_signatures_unknown_ids_and_odd_paths_are_refused() {
    let base = relay(Limits::default()).await;
    let (_, stored) = upload(&base, Some(HOST), b"secret page".to_vec()).await;
    let url = stored["url"].as_str().unwrap();
    let (path, query) = url.split_once('?').unwrap();
    let exp: u64 = query
        .split('&')
        .next()
        .unwrap()
        .trim_start_matches("exp=")
        .parse()
        .unwrap();
    let sig = query.split("sig=").nth(1).unwrap();

    // Change the last hex digit (to one it is not, or the "tampered" signature is the real one).
    let (head, last) = sig.split_at(sig.len() - 1);
    let flipped = if last == "0" { "1" } else { "0" };
    let tampered = format!("{path}?exp={exp}&sig={head}{flipped}");
    assert_eq!(download(&tampered, None).await.0, 403);
    let extended = format!("{path}?exp={}&sig={sig}", exp + 3600);
    assert_eq!(download(&extended, None).await.0, 403, "the expiry is signed");
    let other = format!("{base}/artifacts/{}?exp={exp}&sig={sig}", "0".repeat(32));
    assert_eq!(download(&other, None).await.0, 403, "the id is signed");

    let unknown = format!("{base}/artifacts/{}", "a".repeat(32));
    assert_eq!(download(&unknown, Some(ORCHESTRATOR)).await.0, 404);
    for odd in ["..%2F..%2Fetc%2Fpasswd", "ABCDEF", "tokens.json"] {
        assert_eq!(
            download(&format!("{base}/artifacts/{odd}"), Some(ORCHESTRATOR))
                .await
                .0,
            404,
            "{odd}"
        );
    }
}

#[tokio::test]
async fn hosts_upload_and_orchestrators_upload_named_files() {
    let base = relay(Limits::default()).await;
    assert_eq!(upload(&base, None, b"x".to_vec()).await.0, 401);
    assert_eq!(upload(&base, Some("wrong"), b"x".to_vec()).await.0, 401);
    let (status, error) = upload(&base, Some(ORCHESTRATOR), b"x".to_vec()).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (400, Some("INVALID_PARAMS")),
        "{error}"
    );
    assert!(error["message"].as_str().unwrap().contains("?name="), "{error}");

    let put = |name: &str| {
        let encoded: String = name
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' => (b as char).to_string(),
                other => format!("%{other:02X}"),
            })
            .collect();
        tether_tests::client::own_http()
            .put(format!("{base}/artifacts?name={encoded}"))
            .bearer_auth(ORCHESTRATOR)
            .header("content-type", "text/csv")
            .body("id,qty\n1,2\n")
            .send()
    };
    let response = put("order list.csv").await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let stored: Value = response.json().await.unwrap();
    let response = tether_tests::client::own_http()
        .get(stored["url"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers()["content-type"], "text/csv; charset=utf-8");
    assert_eq!(
        response.headers()["content-disposition"],
        "attachment; filename=\"order list.csv\"; filename*=UTF-8''order%20list.csv"
    );
    assert_eq!(response.text().await.unwrap(), "id,qty\n1,2\n");
    for bad in ["../etc/passwd", "a/b", "", ".."] {
        let response = put(bad).await.unwrap();
        assert_eq!(response.status().as_u16(), 400, "{bad:?}");
    }
}

#[tokio::test]
async fn artifacts_over_the_cap_are_payload_too_large() {
    let limits = Limits {
        max_artifact_bytes: 1024,
        ..Limits::default()
    };
    let base = relay(limits).await;
    assert_eq!(upload(&base, Some(HOST), vec![0; 1024]).await.0, 200);
    let (status, error) = upload(&base, Some(HOST), vec![0; 1025]).await;
    assert_eq!(
        (status, error["code"].as_str()),
        (413, Some("PAYLOAD_TOO_LARGE")),
        "{error}"
    );
}

/// docs/protocol.md §15: what a page or an uploader put in an artifact never runs on the relay's
/// origin, where the console keeps its token.
#[tokio::test]
async fn artifacts_are_served_sandboxed_with_fixed_types() {
    let base = relay(Limits::default()).await;
    for (given, served, disposition) in [
        (
            "text/html; charset=utf-8",
            "text/html; charset=utf-8",
            "attachment",
        ),
        ("image/svg+xml", "application/octet-stream", "attachment"),
        ("text/javascript", "application/octet-stream", "attachment"),
        ("application/xhtml+xml", "application/octet-stream", "attachment"),
        ("image/png", "image/png", "inline"),
        ("image/jpeg", "image/jpeg", "inline"),
        ("text/plain", "text/plain; charset=utf-8", "inline"),
        ("application/json", "application/json", "inline"),
        ("application/pdf", "application/pdf", "inline"),
        ("text/markdown", "text/markdown; charset=utf-8", "attachment"),
    ] {
        let response = tether_tests::client::own_http()
            .put(format!("{base}/artifacts"))
            .bearer_auth(HOST)
            .header("content-type", given)
            .body("<script>parent.stolen = sessionStorage</script>")
            .send()
            .await
            .unwrap();
        let stored: Value = response.json().await.unwrap();
        let response = tether_tests::client::own_http()
            .get(stored["url"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        let headers = response.headers();
        assert_eq!(headers["content-type"], served, "{given}");
        assert_eq!(headers["x-content-type-options"], "nosniff", "{given}");
        assert_eq!(
            headers["content-security-policy"], "sandbox; default-src 'none'",
            "{given}"
        );
        let shown = headers["content-disposition"].to_str().unwrap();
        assert!(
            shown.starts_with(&format!("{disposition}; filename=")),
            "{given}: {shown}"
        );
    }
}

/// docs/protocol.md §15: tokens go in headers; `?token=` only where a browser cannot set one.
#[tokio::test]
async fn a_token_in_the_url_is_refused_where_a_header_can_be_sent() {
    let base = relay(Limits::default()).await;
    let (_, stored) = upload(&base, Some(HOST), vec![1, 2, 3]).await;
    let id = stored["artifactId"].as_str().unwrap();
    for url in [
        format!("{base}/artifacts/{id}?token={ORCHESTRATOR}"),
        format!("{base}/api/sessions?token={ORCHESTRATOR}"),
        format!("{base}/api/extension/extension-list?token={ORCHESTRATOR}"),
    ] {
        let response = tether_tests::client::own_http().get(&url).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 401, "{url}");
        let error: Value = response.json().await.unwrap();
        assert!(
            error["message"]
                .as_str()
                .unwrap()
                .contains("Authorization: Bearer"),
            "{error}"
        );
    }
    let response = tether_tests::client::own_http()
        .put(format!("{base}/artifacts?token={HOST}"))
        .body("x")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 401);
    // The events stream, which a browser's EventSource opens, takes it.
    let response = tether_tests::client::own_http()
        .get(format!("{base}/api/sessions/s1/events?token={ORCHESTRATOR}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
}

/// docs/protocol.md §19: a host fetches a stored file to its own disk for a session's upload,
/// and removes it when that session ends; another session's stays.
#[tokio::test]
async fn files_fetched_for_a_sessions_uploads_go_when_it_ends() {
    use tether_host::parts::artifacts::{ArtifactStore, RelayStore};
    let base = relay(Limits::default()).await;
    let (_, stored) = upload(&base, Some(HOST), b"a file to pick".to_vec()).await;
    let id = stored["artifactId"].as_str().unwrap();
    let tls = tether_host::parts::tls::client_config(None).unwrap();
    let store = RelayStore::new(&base, HOST, &tls).unwrap();
    let mine = store.file(id, "ending").await.unwrap();
    let theirs = store.file(id, "going-on").await.unwrap();
    assert_eq!(std::fs::read(&mine.path).unwrap(), b"a file to pick");
    store.session_ended("ending");
    assert!(!mine.path.exists(), "{} is gone", mine.path.display());
    assert!(theirs.path.exists(), "another session's file stays");
}

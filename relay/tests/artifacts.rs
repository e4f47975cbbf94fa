//! The artifact routes over a real socket: hosts upload, orchestrators (or holders of a
//! presigned URL) download, and everything else is refused with the right status.

mod common;

use common::{start_relay, HOST, ORCHESTRATOR};
use serde_json::Value;
use tether_relay::artifacts::Limits;

async fn relay(limits: Limits) -> String {
    format!("http://{}", start_relay(limits).await)
}

async fn upload(base: &str, token: Option<&str>, body: Vec<u8>) -> (u16, Value) {
    let mut request = reqwest::Client::new()
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
    let mut request = reqwest::Client::new().get(url);
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
        reqwest::Client::new()
            .put(format!("{base}/artifacts?name={encoded}"))
            .bearer_auth(ORCHESTRATOR)
            .header("content-type", "text/csv")
            .body("id,qty\n1,2\n")
            .send()
    };
    let response = put("order list.csv").await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let stored: Value = response.json().await.unwrap();
    let response = reqwest::get(stored["url"].as_str().unwrap()).await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/csv");
    assert_eq!(
        response.headers()["content-disposition"],
        "attachment; filename*=UTF-8''order%20list.csv"
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

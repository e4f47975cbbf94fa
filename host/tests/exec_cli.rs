//! `tether-host exec` as a developer runs it: the real binary, a real headless Chromium, one
//! JSON result per line, and an exit code that says whether every step succeeded.

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const PAGE: &str =
    "data:text/html,<title>Exec</title><button onclick=\"document.title='pressed'\">Press</button>";

fn exec(args: &[&str], stdin: Option<&str>) -> Output {
    exec_in(tempfile::tempdir().unwrap().path(), args, stdin)
}

/// `exec` storing its artifacts in `artifacts`, which a later run can read back.
fn exec_in(artifacts: &std::path::Path, args: &[&str], stdin: Option<&str>) -> Output {
    exec_with(artifacts, args, stdin, &[])
}

/// The same with `env` set for the host.
fn exec_with(
    artifacts: &std::path::Path,
    args: &[&str],
    stdin: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tether-host"))
        .arg("exec")
        .arg("--artifact-dir")
        .arg(artifacts)
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run tether-host");
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.unwrap_or_default().as_bytes()).unwrap();
    drop(input);
    child.wait_with_output().unwrap()
}

fn results(output: &Output) -> Vec<Value> {
    String::from_utf8(output.stdout.clone())
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).expect("each stdout line is one JSON result"))
        .collect()
}

#[test]
fn steps_run_in_order_and_the_tab_carries_over() {
    let steps = serde_json::json!([
        { "actionName": "session_start", "params": { "url": PAGE } },
        { "actionName": "browser_click", "params": { "xpath": "//button" } },
        { "actionName": "browser_readability_extract" },
        { "actionName": "browser_screenshot", "params": { "format": "jpeg" } },
    ]);
    let output = exec(&["-"], Some(&steps.to_string()));
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let results = results(&output);
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["actionName"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "session_start",
            "browser_click",
            "browser_readability_extract",
            "browser_screenshot"
        ]
    );
    assert!(results.iter().all(|r| r["status"] == "success"), "{results:?}");
    assert_eq!(
        results[2]["result"]["title"], "pressed",
        "the click ran in the started tab"
    );
    let shot = results[3]["result"]["url"].as_str().unwrap();
    assert!(shot.starts_with("file://") && shot.ends_with(".jpg"), "{shot}");
}

#[test]
fn a_failed_step_is_reported_and_sets_the_exit_code() {
    let steps = serde_json::json!([
        { "actionName": "session_start", "params": { "url": PAGE } },
        { "actionName": "browser_click", "params": { "xpath": "//nothing" } },
        { "actionName": "browser_click", "params": { "xpath": "//button" } },
    ])
    .to_string();
    let output = exec(&[&steps], None);
    assert_eq!(output.status.code(), Some(1));
    let results = results(&output);
    assert_eq!(results.len(), 3, "later steps still run");
    assert_eq!(results[1]["error"]["code"], "ELEMENT_NOT_FOUND");
    assert_eq!(results[2]["status"], "success");
}

#[test]
fn malformed_steps_are_explained_without_starting_a_browser() {
    let output = exec(&["[{\"params\": {}}]"], None);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("actionName"), "{stderr}");
    assert!(output.stdout.is_empty());

    let output = exec(&["not json"], None);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("not JSON"));
}

#[test]
fn evaluate_runs_only_with_allow_evaluate() {
    let steps = serde_json::json!([
        { "actionName": "session_start", "params": { "url": PAGE } },
        { "actionName": "browser_evaluate", "params": { "expression": "document.title" } },
    ])
    .to_string();
    let refused = exec(&["-"], Some(&steps));
    assert_eq!(refused.status.code(), Some(1), "a step failed");
    assert_eq!(results(&refused)[1]["error"]["code"], "FORBIDDEN");

    let allowed = exec(&["--allow-evaluate", "-"], Some(&steps));
    assert!(
        allowed.status.success(),
        "{}",
        String::from_utf8_lossy(&allowed.stderr)
    );
    assert_eq!(results(&allowed)[1]["result"]["value"], "Exec");
}

#[test]
fn a_profile_kept_with_user_data_dir_has_the_last_runs_cookies() {
    // The page shows the cookie it finds, then sets one for the next visit. The browser's own
    // context is the one --user-data-dir keeps: the session names it (a session's own context
    // keeps nothing past its end).
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pages = runtime.block_on(tether_tests::fixtures::Server::start());
    let profile = tempfile::tempdir().unwrap();
    let dir = profile.path().join("profile");
    let steps = serde_json::json!([
        { "actionName": "session_start", "params": { "url": pages.url("/fixtures/jar.html"), "profile": "default" } },
        { "actionName": "browser_snapshot" },
    ])
    .to_string();
    let visit = || {
        let output = exec(&["--user-data-dir", dir.to_str().unwrap(), "-"], Some(&steps));
        assert!(
            output.status.success(),
            "stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        results(&output)[1]["result"]["markdown"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let first = visit();
    assert!(
        first.lines().any(|l| l.trim() == "none"),
        "a new profile has no cookie: {first}"
    );
    let second = visit();
    assert!(
        second.lines().any(|l| l.trim() == "kept=yes"),
        "the second run has the first run's cookie: {second}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o700, "a profile holds logins: its owner's alone");
}

#[test]
fn a_login_saved_in_one_run_is_loaded_in_a_fresh_one() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pages = runtime.block_on(tether_tests::fixtures::Server::start());
    let artifacts = tempfile::tempdir().unwrap();
    let run = |steps: Value| {
        let output = exec_in(artifacts.path(), &["-"], Some(&steps.to_string()));
        assert!(
            output.status.success(),
            "stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        results(&output)
    };
    let saved = run(serde_json::json!([
        { "actionName": "session_start", "params": { "url": pages.url("/fixtures/logins.html?login=1") } },
        { "actionName": "browser_storage_state", "params": { "action": "save" } },
    ]));
    let artifact_id = saved[1]["result"]["artifactId"].as_str().unwrap().to_owned();
    let loaded = run(serde_json::json!([
        { "actionName": "session_start", "params": { "url": pages.url("/fixtures/logins.html") } },
        { "actionName": "browser_snapshot" },
        { "actionName": "browser_storage_state", "params": { "action": "load", "artifactId": artifact_id } },
        { "actionName": "browser_reload" },
        { "actionName": "browser_snapshot" },
    ]));
    let shown = |at: usize| loaded[at]["result"]["markdown"].as_str().unwrap().to_owned();
    assert!(
        shown(1).contains("cookie: none; theme: none"),
        "a fresh profile: {}",
        shown(1)
    );
    assert!(
        shown(4).contains("cookie: login=alice-token; theme: dark-by-alice"),
        "the first run's login: {}",
        shown(4)
    );
}

#[test]
fn a_secrets_file_others_can_read_is_refused_saying_which_mode_to_set() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secrets.json");
    let given = r#"{"site": {"value": "long enough", "origins": ["https://login.example"]}}"#;
    std::fs::write(&file, given).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let steps = serde_json::json!([{ "actionName": "browser_secrets" }]).to_string();
    let refused = exec(&["--secrets", file.to_str().unwrap(), "-"], Some(&steps));
    assert!(!refused.status.success());
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("chmod 600"), "{said}");
    assert!(results(&refused).is_empty(), "nothing ran");

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let listed = exec(&["--secrets", file.to_str().unwrap(), "-"], Some(&steps));
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let shown = results(&listed)[0].to_string();
    assert!(
        shown.contains("\"site\"") && !shown.contains("long enough"),
        "{shown}"
    );
}

/// docs/protocol.md §20 through `exec`: a click whose handler fetches, then renders, returns the
/// page it rendered (its snapshot, taken as the next step, shows the answer).
#[test]
fn a_click_in_exec_returns_once_the_page_settled() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pages = runtime.block_on(tether_tests::fixtures::Server::start());
    let steps = serde_json::json!([
        { "actionName": "session_start", "params": { "url": pages.url("/fixtures/settle.html") } },
        { "actionName": "browser_click", "params": { "xpath": "//button[@id='fetch']", "observe": "recent" } },
    ])
    .to_string();
    let output = exec(&["-"], Some(&steps));
    assert!(
        output.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let clicked = &results(&output)[1]["result"];
    assert!(
        clicked["screen"].as_str().unwrap().contains("Saved OK"),
        "{clicked}"
    );
    assert!(
        clicked["settled"]["waited"]["requests"].as_u64().unwrap() >= 1,
        "{clicked}"
    );
}

/// A named profile (docs/protocol.md §21) outlives its sessions and the host: what its pages
/// kept (a server cookie, a script cookie, localStorage, IndexedDB) is saved in the data dir as its last
/// session ends, readable by its owner alone, and put back when a later run names it; no
/// value is written to the host's log.
#[test]
fn a_named_profile_is_kept_in_the_data_dir_across_runs() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let pages = runtime.block_on(tether_tests::fixtures::Server::start());
    let data = tempfile::tempdir().unwrap();
    let data_dir = data.path().to_str().unwrap();
    let start = serde_json::json!({
        "actionName": "session_start",
        "params": { "url": pages.url("/fixtures/state.html"), "profile": "kept-run" },
    });
    let run = |then: serde_json::Value| {
        let mut steps = vec![
            start.clone(),
            serde_json::json!({ "actionName": "browser_wait_for_loaded" }),
        ];
        steps.extend(then.as_array().unwrap().iter().cloned());
        let steps = serde_json::Value::Array(steps).to_string();
        let output = exec(&["--allow-evaluate", "--data-dir", data_dir, "-"], Some(&steps));
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(output.status.success(), "stderr: {stderr}");
        assert!(!stderr.contains("v4lue"), "a value in the log: {stderr}");
        output
    };
    let wrote = run(serde_json::json!([
        { "actionName": "browser_evaluate", "params": { "expression": "write('v4lue')" } },
        { "actionName": "session_stop" },
    ]));
    assert_eq!(results(&wrote)[2]["result"]["value"], "written");
    let file = data.path().join("profiles").join("kept-run.json");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "a profile holds logins: its owner's alone");

    let read = serde_json::json!([
        { "actionName": "browser_evaluate", "params": { "expression": "read()" } },
    ]);
    let seen = &results(&run(read.clone()))[2]["result"]["value"];
    assert_eq!(seen["local"], "v4lue", "{seen}");
    assert_eq!(seen["idb"], "v4lue", "IndexedDB is kept: {seen}");
    let cookies = seen["cookies"].as_str().unwrap();
    assert!(
        cookies.contains("server=v4lue") && cookies.contains("script=v4lue"),
        "{seen}"
    );

    // Saved while the session runs: a host killed (-9) mid-session, its session never ended,
    // loses nothing the file already had once an action was done.
    let steps = serde_json::json!([
        start,
        { "actionName": "browser_wait_for_loaded" },
        { "actionName": "browser_evaluate", "params": { "expression": "write('n3wer')" } },
        { "actionName": "browser_wait_for", "params": { "text": "never on the page", "timeoutMs": 60000 } },
    ])
    .to_string();
    let mut host = Command::new(env!("CARGO_BIN_EXE_tether-host"))
        .args(["exec", "--allow-evaluate", "--data-dir", data_dir, "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run tether-host");
    host.stdin.take().unwrap().write_all(steps.as_bytes()).unwrap();
    let saved = (0..300).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        std::fs::read_to_string(&file).is_ok_and(|f| f.contains("n3wer"))
    });
    host.kill().unwrap();
    host.wait().unwrap();
    assert!(
        saved,
        "the running profile was not saved within 15 s of the action"
    );
    let seen = &results(&run(read))[2]["result"]["value"];
    assert_eq!(seen["local"], "n3wer", "{seen}");
}

/// A proxy's login reaches the proxy and nothing else: the page comes through it, and the
/// password is in no line of the host's log, traced to its finest.
#[test]
fn a_proxy_login_is_given_to_the_proxy_and_never_logged() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let proxy = runtime.block_on(tether_tests::proxy::TestProxy::with_login("ada", "pr0xy-s3cret"));
    let steps = serde_json::json!([
        {
            "actionName": "session_start",
            "params": {
                "url": "http://tether-exec-login.test/",
                "proxy": { "server": proxy.server(), "username": "ada", "password": "pr0xy-s3cret" },
            },
        },
        { "actionName": "browser_wait_for_loaded" },
        { "actionName": "browser_snapshot" },
        { "actionName": "session_stop" },
    ])
    .to_string();
    let artifacts = tempfile::tempdir().unwrap();
    let traced = [("RUST_LOG", "trace")];
    let output = exec_with(artifacts.path(), &["-"], Some(&steps), &traced);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(
        results(&output)[2]["result"]["title"],
        "Through the proxy",
        "{stdout}"
    );
    assert!(proxy
        .seen()
        .contains(&"http://tether-exec-login.test/".to_owned()));
    assert!(stderr.contains("TRACE"), "the log was traced: {stderr}");
    assert!(
        !stdout.contains("pr0xy-s3cret"),
        "the password in a result: {stdout}"
    );
    assert!(!stderr.contains("pr0xy-s3cret"), "the password in the log");
}
